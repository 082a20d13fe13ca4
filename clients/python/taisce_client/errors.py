"""Errors the client raises: one class per API error code, each carrying code and control."""

from __future__ import annotations

from typing import Any


class TaisceError(Exception):
    """Anything the client could not do. `str(error)` is one line for a person."""


class ConfigurationError(TaisceError):
    """The client was not given what it needs (no credential, no URL)."""


class TaisceConnectionError(TaisceError):
    """The server could not be reached, or did not answer in time."""


class ApiError(TaisceError):
    """The API refused a request: `{"error": {"code", "message"[, "control"]}}`."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        control: str | None = None,
        request_id: str | None = None,
    ) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.control = control
        self.request_id = request_id
        where = f" ({control})" if control else ""
        super().__init__(f"{code}{where}: {message}")


class InvalidRecallControls(ApiError):
    """400: a recall control broke the rules; `control` names it."""


class InvalidRequest(ApiError):
    """400: the body, the question, a message or a fact broke the rules."""


class Unauthorized(ApiError):
    """401: no credential, or one the server does not know."""


class Forbidden(ApiError):
    """403: the credential may not do this (a user credential naming another user, or
    a credential that is not an admin's minting or revoking)."""


class NotFound(ApiError):
    """404: unknown route or id."""


class ErasurePending(ApiError):
    """409: the request's user is being erased; nothing was written. Send it again
    once the erasure's status reads done."""


class PayloadTooLarge(ApiError):
    """413: the body was over 1 MiB."""


class InsufficientStorage(ApiError):
    """507: the server's disk is full; nothing was written (reads still work). Not
    retried: it helps only once space is freed."""


class RequestTimeout(ApiError):
    """408: the request did not arrive in time, so it was not run; raised once the
    retries are used up."""


class RateLimited(ApiError):
    """429: too many requests; raised once the retries are used up."""


class ServerError(ApiError):
    """5xx: the server failed, or is unavailable (503: too many connections, or
    stopping); raised once the retries are used up. 505 (an HTTP version it does not
    serve) is not retried."""


_BY_CODE: dict[str, type[ApiError]] = {
    "invalid_recall_controls": InvalidRecallControls,
    "invalid_request": InvalidRequest,
    "unauthorized": Unauthorized,
    "forbidden": Forbidden,
    "not_found": NotFound,
    "erasure_pending": ErasurePending,
    "payload_too_large": PayloadTooLarge,
    "insufficient_storage": InsufficientStorage,
    "request_timeout": RequestTimeout,
    "rate_limited": RateLimited,
}


# API Gateway answers some requests itself, before any function runs, with a body of
# its own, {"message": "..."} (docs/API.md, "Answers from API Gateway"): the API's
# code for each. 401: no or a refused credential; 403: a refusal API Gateway cached or
# a route it would not authorise; 404: no such route; 413: the body is over its limit;
# 429: throttled; 5xx: the function failed or timed out.
_GATEWAY_CODES: dict[int, str] = {
    401: "unauthorized",
    403: "unauthorized",
    404: "not_found",
    413: "payload_too_large",
    429: "rate_limited",
}


def api_error(status: int, body: Any) -> ApiError:
    """The typed error for a refused response (its parsed JSON body, or None)."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        gateway = body.get("message") if isinstance(body, dict) and len(body) == 1 else None
        if isinstance(gateway, str) and (status in _GATEWAY_CODES or status >= 500):
            code = _GATEWAY_CODES.get(status, "internal")
            error = {"code": code, "message": f"API Gateway: {gateway} (HTTP {status})"}
        else:
            # Not the API's shape (a proxy's page, an empty body): name the status instead.
            error = {"code": "http_error", "message": f"the server answered HTTP {status}"}
    code = str(error.get("code") or "http_error")
    kind = _BY_CODE.get(code)
    if kind is None:
        kind = RateLimited if status == 429 else ServerError if status >= 500 else ApiError
    return kind(
        status,
        code,
        str(error.get("message") or f"HTTP {status}"),
        error.get("control"),
        error.get("request_id"),
    )
