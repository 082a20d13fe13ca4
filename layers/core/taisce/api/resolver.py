"""Powertools resolvers with this API's error shapes, mapped in one place.

Every error body is {"error": {"code", "message"[, "control"]}}; a refused recall
control names the control. Nothing unexpected leaves as a trace: it is logged and
answered 500 with the request id.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel

from ..domain.errors import Forbidden, InvalidRequest, PayloadTooLarge, TaisceError, Unauthorized
from ..domain.model import CREDENTIAL_KINDS, CredentialKind
from .logs import logger
from .observe import observed
from .problems import Error, joined, models_in, sentence

MAX_BODY_BYTES = 1024 * 1024
# Lambda refuses to return more than 6 MB (6,291,456 bytes of its answer as JSON) and
# API Gateway then answers a bare 500; past this the client gets a problem instead.
MAX_ANSWER_BYTES = 6_000_000


class AnswerTooLarge(TaisceError):
    code = "answer_too_large"
    status = 413


def error_body(code: str, message: str, **extra: object) -> str:
    return json.dumps({"error": {"code": code, "message": message, **extra}}, ensure_ascii=False)


def error_response(status: int, code: str, message: str, **extra: object) -> Response[str]:
    return Response(status, "application/json", error_body(code, message, **extra))


def body_problem(error: dict[str, Any]) -> str | None:
    """What is wrong with the body as a whole (not JSON, not an object), if that is it."""
    if error["type"] == "json_invalid":
        return "the body is not valid JSON"
    loc = error["loc"]
    if loc == ("body",) or (len(loc) > 1 and not isinstance(loc[1], str)):
        return "the body must be a JSON object"
    return None


# How a refused request is answered: its errors, and the route's body model (None
# where the route takes no body), to the response.
Invalid = Callable[[Sequence[Error], type[BaseModel] | None], Response[str]]


def field_response(errors: Sequence[Error], root: type[BaseModel] | None = None) -> Response[str]:
    """`invalid_request` naming every refused field and what is wrong with it (or what
    is wrong with the body as a whole)."""
    for error in errors:
        problem = body_problem(error)
        if problem:
            return error_response(400, "invalid_request", problem)
    message = joined([sentence(e, root) for e in errors]) or "the request is not valid"
    return error_response(400, "invalid_request", message)


def body_model(app: APIGatewayHttpResolver) -> type[BaseModel] | None:
    """The model the current route reads its body into, if it takes one: what an
    unknown field's did-you-mean is drawn from. Powertools keeps the matched route in
    its context while it resolves; should that change, fields are still named, only
    without a guess (tests/integration/test_http_error_words.py would fail)."""
    route = app.context.get("_route")
    params = getattr(getattr(route, "dependant", None), "body_params", None) or ()
    for param in params:
        for model in models_in(param.field_info.annotation):
            return model
    return None


def make_resolver(*, invalid: Invalid = field_response) -> APIGatewayHttpResolver:
    """A resolver with validation on and every error in the API's shape.

    `invalid` answers a request the route's models refuse (the recall function passes
    its own: api/recall_errors.py); by default every refused field, named.
    """
    app = APIGatewayHttpResolver(enable_validation=True)

    def _invalid(exc: RequestValidationError) -> Response[str]:
        return invalid(list(exc.errors()), body_model(app))

    def _domain(exc: TaisceError) -> Response[str]:
        extra = {"control": exc.control} if exc.control else {}
        return error_response(exc.status, exc.code, exc.message, **extra)

    def _not_found(_: Exception) -> Response[str]:
        return error_response(404, "not_found", "no such route")

    def _internal(exc: Exception) -> Response[str]:
        request_id = app.current_event.request_context.request_id
        logger.exception("unhandled error", extra={"request_id": request_id})
        return error_response(
            500, "internal", "the server failed; quote the request id", request_id=request_id
        )

    # Registered by calls, not as decorators: Powertools' exception_handler has no
    # return type, and as a decorator it would leave each handler untyped.
    app.exception_handler(RequestValidationError)(_invalid)
    app.exception_handler(TaisceError)(_domain)
    app.not_found(_not_found)
    app.exception_handler(Exception)(_internal)
    return app


@dataclass(frozen=True)
class Caller:
    """Who a request comes from, as the authorizer put it in the context: the
    credential's project, its kind, and the user a user credential is bound to."""

    project: str
    kind: CredentialKind
    user: str | None


def caller_of(app: APIGatewayHttpResolver) -> Caller:
    """The credential behind the request. The gateway (API Gateway, or the local server
    standing in for it) runs the authorizer; no function trusts a project named in the
    request. A context without a project, or a user credential without its user, is
    refused as no credential at all."""
    context = app.current_event.raw_event.get("requestContext", {})
    found = (context.get("authorizer") or {}).get("lambda", {})
    project, kind, user = found.get("project"), found.get("kind") or "project", found.get("user")
    if not isinstance(project, str) or not project or kind not in CREDENTIAL_KINDS:
        raise Unauthorized()
    if kind == "user" and (not isinstance(user, str) or not user):
        raise Unauthorized()
    return Caller(project, kind, user if kind == "user" else None)


def project_of(app: APIGatewayHttpResolver) -> str:
    """The project the credential belongs to, for a route that acts on the whole
    project: a user credential may not (routes that take a `user` ask scope_of,
    api/scoping.py, which applies the user credential's rule)."""
    caller = caller_of(app)
    if caller.kind == "user":
        raise Forbidden("a user credential acts only as its user, and this route acts for everyone")
    return caller.project


def _body_bytes(event: dict[str, Any]) -> int:
    body = event.get("body") or ""
    if event.get("isBase64Encoded"):
        return len(base64.b64decode(body, validate=False))
    return len(body.encode("utf-8"))


def _body_problem_before_routing(event: dict[str, Any]) -> str | None:
    """What is wrong with a body that Powertools would mishandle, if anything.

    Parsed once here (C speed, at most 1 MiB): Powertools validates a list body
    against a model by taking its first element, and bytes that are not UTF-8 or
    JSON nested past the recursion limit or lone surrogates would end in a 500.
    """
    body = event.get("body")
    if not body:
        return None
    try:
        raw = base64.b64decode(body) if event.get("isBase64Encoded") else body.encode("utf-8")
        parsed = json.loads(raw.decode("utf-8"))
        # A lone surrogate (\ud800) is valid JSON but not storable text.
        json.dumps(parsed, ensure_ascii=False).encode("utf-8")
    except UnicodeError:
        return "the body is not valid UTF-8 text (or holds a lone surrogate)"
    except RecursionError:
        return "the body is nested too deeply"
    except ValueError:
        return "the body is not valid JSON"
    return None if isinstance(parsed, dict) else "the body must be a JSON object"


def _within_lambda(answer: dict[str, Any]) -> dict[str, Any]:
    """The answer, or a problem where Lambda could not return it. The listings stop a
    page well before (domain/listing.py, PAGE_BYTES): this is the backstop."""
    body = answer.get("body") or ""
    # A character weighs at most 12 bytes escaped (an astral one, as a surrogate pair).
    if isinstance(body, str) and len(body) * 12 < MAX_ANSWER_BYTES - 64_000:
        return answer
    size = len(json.dumps(answer))
    if size <= MAX_ANSWER_BYTES:
        return answer
    logger.warning("answer too large", extra={"bytes": size})
    return _raw_error(
        AnswerTooLarge(
            f"the answer would be {size:,} bytes, over the 6 MB a function can return: "
            "ask for less (a smaller limit, or max_characters)"
        )
    )


def _not_stored(answer: dict[str, Any]) -> dict[str, Any]:
    """Memory is personal and changes: no browser or proxy keeps an answer of this API."""
    headers = answer.get("headers") or {}
    if not any(k.lower() == "cache-control" for k in headers):
        answer = {**answer, "headers": {**headers, "Cache-Control": "no-store"}}
    return answer


def _with_caller(answer: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    """Which project (and user, for a user credential) answered, as the authorizer put it
    in the context, so a client such as the explorer can show whose memory it reads.
    Percent-encoded UTF-8: a header holds Latin-1 only."""
    found = ((event.get("requestContext") or {}).get("authorizer") or {}).get("lambda") or {}
    extra: dict[str, str] = {}
    for name, key in (("Taisce-Project", "project"), ("Taisce-User", "user")):
        value = found.get(key)
        if isinstance(value, str) and value:
            extra[name] = quote(value, safe="")
    if not extra:
        return answer
    return {**answer, "headers": {**(answer.get("headers") or {}), **extra}}


def _raw_error(error: TaisceError) -> dict[str, Any]:
    """An error answered before routing, in the shape Lambda returns."""
    return {
        "statusCode": error.status,
        "headers": {"Content-Type": "application/json", "Cache-Control": "no-store"},
        "body": error_body(error.code, error.message),
        "isBase64Encoded": False,
    }


def make_handler(
    app: APIGatewayHttpResolver,
) -> Callable[[dict[str, Any], LambdaContext | None], dict[str, Any]]:
    """The Lambda entry point: refuse oversized bodies, then resolve the route; with
    Powertools' logger context, metrics and tracer around it (api/observe.py)."""

    def lambda_handler(event: dict[str, Any], context: LambdaContext | None) -> dict[str, Any]:
        if _body_bytes(event) > MAX_BODY_BYTES:
            return _raw_error(PayloadTooLarge("the body is larger than 1 MiB"))
        problem = _body_problem_before_routing(event)
        if problem:
            return _raw_error(InvalidRequest(problem))
        # Every body of this API is JSON, whatever Content-Type a client sent
        # (curl -d says form-urlencoded): parse it as JSON rather than as a form.
        headers = event.get("headers") or {}
        if event.get("body") and "json" not in str(headers.get("content-type", "")):
            event = {**event, "headers": {**headers, "content-type": "application/json"}}
        # Powertools types the context as required but only keeps it for handlers to
        # read (app.lambda_context, read by none here); a caller outside Lambda has none.
        answer = app.resolve(event, context)  # type: ignore[arg-type]
        return _with_caller(_not_stored(_within_lambda(answer)), event)

    return observed(lambda_handler)
