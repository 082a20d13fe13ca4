"""A stand-in for API Gateway's HTTP API: requests become v2 events for the very
handlers Lambda runs, with the Lambda authorizer run first on protected routes.

One deliberate difference: where API Gateway answers a refused credential with its
own 401/403 body, this gateway answers in the API's error shape.
"""

from __future__ import annotations

import base64
import contextlib
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from ..api.logs import logger
from ..api.resolver import MAX_BODY_BYTES, error_body
from .routes import Api, Handler, Route


@dataclass
class LocalContext:
    """The parts of Lambda's context object that handlers and Powertools read."""

    function_name: str
    aws_request_id: str
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:local:000000000000:function:taisce"
    log_group_name: str = "local"
    log_stream_name: str = "local"
    # Not Lambda's: api/observe.py neither logs nor measures an invocation under it.
    local: bool = True

    def get_remaining_time_in_millis(self) -> int:
        return 10_000


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class Invocation:
    """A request made into its event, ready for the authorizer and the handler: what
    `taisce serve` sends to a handler process (plain data, so it pickles)."""

    route_key: str
    event: dict[str, Any]
    request_id: str


# Routes whose requests may hold a CPU for long (an erasure's cost grows with the
# repeated words it reads): one at a time per project (local/sandboxes.py), each on a
# thread of lower CPU priority.
HEAVY_ROUTES = frozenset({"POST /v1/erasures"})
HEAVY_NICE = 10


def _at_low_priority(run: Callable[[Invocation], Reply], invocation: Invocation) -> Reply:
    """`run(invocation)` on a thread of its own at nice HEAVY_NICE, so that it leaves the
    CPUs to other requests first. Linux keeps a nice value per thread; the thread ends
    with the request, so nothing has to be raised back (which an unprivileged process
    may not do). Elsewhere it runs at the usual priority."""
    done: list[Reply] = []

    def body() -> None:
        if sys.platform.startswith("linux"):
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), HEAVY_NICE)
        done.append(run(invocation))

    thread = threading.Thread(target=body, name="taisce-heavy", daemon=True)
    thread.start()
    thread.join()
    if done:
        return done[0]
    return error_reply(500, "internal", "the server failed", request_id=invocation.request_id)


def error_reply(status: int, code: str, message: str, **extra: object) -> Reply:
    """An error in the API's shape, as the gateway (and the HTTP server before it) sends it."""
    body = error_body(code, message, **extra).encode("utf-8")
    return Reply(status, {"Content-Type": "application/json", "Cache-Control": "no-store"}, body)


class Gateway:
    def __init__(self, api: Api) -> None:
        self.api = api
        self._handlers: dict[str, Handler] = {}
        self._routes = {route.route_key: route for route in api.routes}
        # Lambda runs one request per process, and Powertools keeps the current event
        # on a class attribute (BaseRouter.current_event) shared by every resolver:
        # two handlers running at once in one process read each other's event
        # (another project's credential, another request's body). So a process runs
        # its handlers one at a time; `taisce serve` runs several such processes
        # (local/sandboxes.py) for requests to run in parallel.
        self._one_at_a_time = threading.Lock()

    def _handler(self, route_function: Any) -> Handler:
        key = route_function.logical_id
        if key not in self._handlers:
            self._handlers[key] = route_function.load()
        return self._handlers[key]

    def warm(self) -> None:
        """Import every handler now, so a broken one stops the server at start."""
        for route in self.api.routes:
            self._handler(route.function)
        if self.api.authorizer:
            self._handler(self.api.authorizer)

    def _find(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        for route in self.api.routes:
            params = route.match(method, path)
            if params is not None:
                return route, params
        return None

    def allowed(self, path: str) -> list[str]:
        """The methods the template routes on this path (none: an unknown path)."""
        return sorted({r.method for r in self.api.routes if r.pattern.fullmatch(path)})

    def authorized(self, route_key: str) -> bool:
        """Whether the route runs the authorizer first (it takes a credential)."""
        return self._routes[route_key].authorized

    def route_key(self, method: str, target: str) -> str:
        """The route a request went to, as the template names it ("DELETE /v1/facts/{id}"):
        what the access log shows, so that ids and stray paths never reach it."""
        path = target.partition("?")[0]
        found = self._find(method.upper(), path)
        if found:
            return found[0].route_key
        known = [r.path for r in self.api.routes if r.pattern.fullmatch(path)]
        return f"{method} {known[0]} (method not allowed)" if known else f"{method} (no route)"

    def handle(
        self, method: str, target: str, headers: dict[str, str], body: bytes, source_ip: str
    ) -> Reply:
        prepared = self.prepare(method, target, headers, body, source_ip)
        return prepared if isinstance(prepared, Reply) else self.invoke(prepared)

    def prepare(
        self,
        method: str,
        target: str,
        headers: dict[str, str],
        body: bytes,
        source_ip: str,
        protocol: str = "HTTP/1.1",
    ) -> Reply | Invocation:
        """What API Gateway does before any function runs: find the route (404), check
        the body's size (413), and make the HTTP API v2 event."""
        path, _, query = target.partition("?")
        found = self._find(method.upper(), path)
        if found is None:
            return self._unrouted(path)
        route, path_params = found
        if len(body) > MAX_BODY_BYTES:
            return error_reply(413, "payload_too_large", "the body is larger than 1 MiB")
        request_id = uuid.uuid4().hex
        lowered = {k.lower(): v for k, v in headers.items()}
        event = self._event(route, path, query, lowered, body, source_ip, request_id)
        event["requestContext"]["http"]["protocol"] = protocol
        event["pathParameters"] = path_params or None
        return Invocation(route.route_key, event, request_id)

    def _unrouted(self, path: str) -> Reply:
        """404 for an unknown path; 405 with `Allow` for a known path and another method."""
        allowed = self.allowed(path)
        if not allowed:
            return error_reply(404, "not_found", "no such route")
        methods = ", ".join(allowed)
        reply = error_reply(
            405, "method_not_allowed", f"the method is not allowed here; this path takes {methods}"
        )
        return Reply(reply.status, {**reply.headers, "Allow": methods}, reply.body)

    def invoke(self, invocation: Invocation) -> Reply:
        """The authorizer (on a protected route), then the route's handler; a heavy
        route's at a lower CPU priority."""
        if invocation.route_key in HEAVY_ROUTES:
            return _at_low_priority(self._invoke_now, invocation)
        return self._invoke_now(invocation)

    def _invoke_now(self, invocation: Invocation) -> Reply:
        route = self._routes[invocation.route_key]
        with self._one_at_a_time:
            try:
                return self._invoke(route, invocation.event, invocation.request_id)
            except Exception:
                # A failing authorizer: the handler's own failures are caught below.
                logger.exception("authorizer failed", extra={"request_id": invocation.request_id})
                request_id = invocation.request_id
                return error_reply(500, "internal", "the server failed", request_id=request_id)

    def _invoke(self, route: Route, event: dict[str, Any], request_id: str) -> Reply:
        if route.authorized:
            context = self._authorize(event, request_id)
            if context is None:
                return error_reply(401, "unauthorized", "a valid bearer credential is required")
            event["requestContext"]["authorizer"] = {"lambda": context}
        try:
            result = self._handler(route.function)(
                event, LocalContext(route.function.logical_id, request_id)
            )
        except Exception:
            logger.exception("handler failed", extra={"request_id": request_id})
            return error_reply(500, "internal", "the server failed", request_id=request_id)
        return self._reply(result)

    def _authorize(self, event: dict[str, Any], request_id: str) -> dict[str, Any] | None:
        assert self.api.authorizer is not None
        authorization = event["headers"].get("authorization")
        if not authorization:
            return None  # API Gateway refuses before calling the authorizer
        route_arn = "arn:aws:execute-api:local:000000000000:local/$default/"
        auth_event = {
            **event,
            "type": "REQUEST",
            "routeArn": route_arn + event["routeKey"].replace(" ", ""),
            "identitySource": [authorization],
        }
        try:
            answer = self._handler(self.api.authorizer)(
                auth_event, LocalContext(self.api.authorizer.logical_id, request_id)
            )
        except Exception as exc:
            # "Unauthorized" is the authorizer's refusal (API Gateway's 401); any
            # other failure is API Gateway's 500, raised on for the caller to answer.
            if str(exc) == "Unauthorized":
                return None
            raise
        if not answer.get("isAuthorized"):
            return None
        return dict(answer.get("context") or {})

    @staticmethod
    def _event(
        route: Route,
        path: str,
        query: str,
        headers: dict[str, str],
        body: bytes,
        source_ip: str,
        request_id: str,
    ) -> dict[str, Any]:
        params: dict[str, str] = {}
        for key, value in parse_qsl(query, keep_blank_values=True):
            params[key] = f"{params[key]},{value}" if key in params else value
        try:
            text, encoded = body.decode("utf-8"), False
        except UnicodeDecodeError:
            text, encoded = base64.b64encode(body).decode("ascii"), True
        now = time.time()
        return {
            "version": "2.0",
            "routeKey": route.route_key,
            "rawPath": path,
            "rawQueryString": query,
            "headers": headers,
            "queryStringParameters": params or None,
            "requestContext": {
                "accountId": "000000000000",
                "apiId": "local",
                "domainName": headers.get("host", "localhost"),
                "domainPrefix": "local",
                "http": {
                    "method": route.method,
                    "path": path,
                    "protocol": "HTTP/1.1",
                    "sourceIp": source_ip,
                    "userAgent": headers.get("user-agent", ""),
                },
                "requestId": request_id,
                "routeKey": route.route_key,
                "stage": "$default",
                "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
                "timeEpoch": int(now * 1000),
            },
            "body": text if body else None,
            "isBase64Encoded": encoded,
        }

    @staticmethod
    def _reply(result: dict[str, Any]) -> Reply:
        body = result.get("body") or ""
        raw = base64.b64decode(body) if result.get("isBase64Encoded") else body.encode("utf-8")
        headers = {str(k): str(v) for k, v in (result.get("headers") or {}).items()}
        return Reply(int(result.get("statusCode", 200)), headers, raw)
