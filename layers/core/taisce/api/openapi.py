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
    'Every error body is {"error": {"code", "message"[, "control"][, "request_id"]}}. '
    "A path that is not served is `404 not_found`; a served path with a method it does "
    "not take is `405 method_not_allowed` with an `Allow` header (`taisce serve`; on AWS, "
    "API Gateway answers both 404 in its own shape)."
)

# Any route can answer these (taisce.api.resolver, the gateway, the local HTTP server):
# a body that is not JSON, a body or an answer too large, a failure; and from `taisce
# serve`, a request too slow to arrive, too many connections, an HTTP version it does
# not serve. Keys are strings, as in the document.
COMMON_ERRORS = {
    "400": "invalid_request; in a recall, invalid_recall_controls naming the refused control",
    "408": (
        "request_timeout: the request head or body did not arrive in time; the "
        "request was not run (taisce serve)"
    ),
    "413": (
        "payload_too_large: the body is over 1 MiB; answer_too_large: the answer would be "
        "over 6 MB, ask for less"
    ),
    "500": "internal, with a request id for the logs",
    "503": (
        "unavailable: too many connections from this client or in all, or the server is "
        "stopping; retry after Retry-After seconds (taisce serve)"
    ),
    "505": "http_version_not_supported: only HTTP/1.0 and 1.1 are served (taisce serve)",
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
THROTTLED = (
    "rate_limited: too many refused credentials from this address; the credential was "
    "not checked; retry after Retry-After seconds (taisce serve)"
)
RETRY_AFTER = {
    "description": "Seconds to wait before sending the request again",
    "schema": {"type": "integer", "minimum": 0},
}
_RETRY_AFTER_STATUSES = ("429", "503")
# Who answered, on every answer the route's handler gives behind an accepted credential
# (taisce.api.resolver): a client such as the explorer shows whose memory it reads.
CALLER_HEADERS = {
    "Taisce-Project": {
        "description": "The credential's project, percent-encoded UTF-8",
        "schema": {"type": "string"},
    },
    "Taisce-User": {
        "description": "The end user of a user credential, percent-encoded UTF-8 "
        "(absent for other credentials)",
        "schema": {"type": "string"},
    },
}
# Answered before the credential is accepted: no caller to name.
_BEFORE_THE_CREDENTIAL = frozenset({"401", "408", "413", "429", "503", "505"})


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


def _add_errors(responses: dict[str, Any], method: str, key: str, *, protected: bool) -> None:
    """The errors every route (and every protected or writing route) can answer, and
    the headers that go with them."""
    for status, text in COMMON_ERRORS.items():
        responses.setdefault(status, error_response(text))
    if method in ("post", "put", "patch", "delete") and key not in _READ_ONLY_POSTS:
        responses.setdefault("507", error_response(STORAGE_FULL))
    if key in _USER_WRITES:
        responses.setdefault("409", error_response(ERASURE_PENDING))
    if protected:
        responses.setdefault("401", error_response(UNAUTHORIZED))
        responses.setdefault("403", error_response(FORBIDDEN))
        responses.setdefault("429", error_response(THROTTLED))
    for status, response in responses.items():
        if not response.get("content"):
            response.pop("content", None)  # 204: no body at all
        headers = dict(response.get("headers") or {})
        if status in _RETRY_AFTER_STATUSES:
            headers["Retry-After"] = {"$ref": "#/components/headers/Retry-After"}
        if protected and status not in _BEFORE_THE_CREDENTIAL:
            headers.update(
                {name: {"$ref": f"#/components/headers/{name}"} for name in CALLER_HEADERS}
            )
        if headers:
            response["headers"] = headers


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
            _add_errors(responses, method, key, protected=protected[key])
            if protected[key]:
                operation["security"] = [{SECURITY_SCHEME: []}]
            operation["responses"] = dict(sorted(responses.items()))
    missing = set(protected) - seen
    if missing:
        raise ValueError(f"template routes without a description: {sorted(missing)}")
    schemas = document["components"]["schemas"]
    used = _referenced(document["paths"], schemas)
    document["components"]["schemas"] = {k: schemas[k] for k in sorted(used)}
    document["components"]["headers"] = {"Retry-After": RETRY_AFTER, **CALLER_HEADERS}
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
