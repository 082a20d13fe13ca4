"""The OpenAPI 3.1 description of the whole API, built from the functions' resolvers.

Each Lambda function has a resolver of its own; the document merges what Powertools
generates from each (routes, request models, `responses=`), then states what the
resolvers cannot know: which routes need the bearer credential (the template says,
as API Gateway enforces it) and that this API answers refused input 400, never 422.

The built document is committed as openapi.json beside this module (docs/openapi.json
links to it), so the layer ships it and GET /v1/openapi.json serves it on Lambda too.
`python -m taisce.api.openapi` (make openapi) rewrites it; a test fails when it is stale.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import taisce

from .responses import ErrorBody, error_response

DOCUMENT_NAME = "openapi.json"
_PARAMETER = re.compile(r"\{[^}]+\}")
_REF = re.compile(r'"#/components/schemas/([^"]+)"')
SECURITY_SCHEME = "bearer"
TITLE = "Taisce API"
DESCRIPTION = (
    "Memory for AI agents. Every route but health and this description needs "
    "`Authorization: Bearer <credential>`; the credential decides the project. "
    'Every error body is {"error": {"code", "message"[, "control"][, "request_id"]}}.'
)

# Any route can answer these (taisce.api.resolver, the gateway): a body that is not
# JSON, a body over 1 MiB, a failure. Keys are strings, as in the document.
COMMON_ERRORS = {
    "400": "invalid_request; in a recall, invalid_recall_controls naming the refused control",
    "413": "payload_too_large: the body is over 1 MiB",
    "500": "internal, with a request id for the logs",
}
# A route that writes can find the disk full (the embedded store): nothing is written.
STORAGE_FULL = "insufficient_storage: the disk is full; nothing was written (reads still work)"
_READ_ONLY_POSTS = frozenset({"post /v1/recalls"})
# Writes into a user's scope are refused while that user's erasure is pending.
ERASURE_PENDING = (
    "erasure_pending: the request's user is being erased; nothing was written "
    "(send it again once the erasure is done)"
)
_USER_WRITES = frozenset(
    {"post /v1/facts", "post /v1/messages", "post /v1/entities/merges", "post /v1/erasures"}
)
UNAUTHORIZED = "unauthorized: no credential, or one the server does not know"
FORBIDDEN = (
    "forbidden: a user credential naming another user (or on a route for the whole "
    "project), or a credential that is not an admin's on the credentials routes"
)


@functools.cache
def served_document() -> str:
    """The committed document, as GET /v1/openapi.json answers it."""
    return resources.files(__package__).joinpath(DOCUMENT_NAME).read_text(encoding="utf-8")


def _route_key(method: str, path: str) -> str:
    # Template paths say {id} where the code says {fact_id}: compare the shape only.
    return f"{method.lower()} {_PARAMETER.sub('{}', path)}"


def _referenced(paths: dict[str, Any], schemas: dict[str, Any]) -> set[str]:
    """The component schemas the paths use, directly or through other schemas.

    Powertools adds its 422 validation-error schemas to every document; they go
    with the 422 responses, as nothing refers to them any more.
    """
    used: set[str] = set()
    todo = [paths]
    while todo:
        for name in _REF.findall(json.dumps(todo.pop())):
            if name not in used:
                used.add(name)
                todo.append(schemas[name])
    return used


def build_document(template: Path) -> dict[str, Any]:
    """The description of every route in `template`, from the code that serves it."""
    from aws_lambda_powertools.event_handler.openapi.merge import OpenAPIMerge
    from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer

    from ..local.routes import read_api

    api = read_api(template)
    # The API's routes only: the explorer's page (/ and /ui, taisce.ui) is not part of it.
    routes = [r for r in api.routes if r.path.startswith("/v1/")]
    merge = OpenAPIMerge(
        title=TITLE,
        version=taisce.__version__,
        description=DESCRIPTION,
        security_schemes={
            SECURITY_SCHEME: HTTPBearer(
                description="A credential from `taisce credentials create` or POST /v1/credentials"
            )
        },
        on_conflict="error",
    )
    modules = dict.fromkeys(route.function.module for route in routes)
    for module in modules:
        merge.add_schema(importlib.import_module(module).app.get_openapi_schema())
    # The one error shape, added as Powertools adds models (same JSON Schema dialect).
    error_body = ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
    merge.add_schema(
        {"components": {"schemas": {**error_body.pop("$defs"), "ErrorBody": error_body}}}
    )
    document: dict[str, Any] = json.loads(merge.get_openapi_json_schema())
    protected = {_route_key(r.method, r.path): r.authorized for r in routes}
    seen: set[str] = set()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            key = _route_key(method, path)
            seen.add(key)
            if key not in protected:
                raise ValueError(f"{method.upper()} {path} is in the code but not in the template")
            responses = operation["responses"]
            # Refused input is answered 400 in the API's error shape (taisce.api.resolver).
            responses.pop("422", None)
            for status, text in COMMON_ERRORS.items():
                responses.setdefault(status, error_response(text))
            if method in ("post", "put", "patch", "delete") and key not in _READ_ONLY_POSTS:
                responses.setdefault("507", error_response(STORAGE_FULL))
            if key in _USER_WRITES:
                responses.setdefault("409", error_response(ERASURE_PENDING))
            if protected[key]:
                operation["security"] = [{SECURITY_SCHEME: []}]
                responses.setdefault("401", error_response(UNAUTHORIZED))
                responses.setdefault("403", error_response(FORBIDDEN))
            for response in responses.values():
                if not response.get("content"):
                    response.pop("content", None)  # 204: no body at all
            operation["responses"] = dict(sorted(responses.items()))
    missing = set(protected) - seen
    if missing:
        raise ValueError(f"template routes without a description: {sorted(missing)}")
    schemas = document["components"]["schemas"]
    used = _referenced(document["paths"], schemas)
    document["components"]["schemas"] = {k: schemas[k] for k in sorted(used)}
    document["paths"] = dict(sorted(document["paths"].items()))
    return document


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def committed_path() -> Path:
    return Path(__file__).with_name(DOCUMENT_NAME)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write the API's OpenAPI description.")
    parser.add_argument("--template", type=Path, default=Path("template.yaml"))
    parser.add_argument("--out", type=Path, default=committed_path())
    args = parser.parse_args(argv)
    args.out.write_text(render(build_document(args.template)), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
