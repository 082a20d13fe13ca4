"""`taisce serve` over HTTP: uvicorn (with h11) reads and writes HTTP/1.1, a thin ASGI
adapter turns each request into the API Gateway v2 event local/gateway.py makes, and
handler processes (local/sandboxes.py) run the Lambda handlers in parallel.

Framing, keep-alive and the request head's size are uvicorn's and h11's job: h11
refuses conflicting or signed Content-Length headers, Content-Length beside chunked
and malformed chunks. This module adds what they leave to the application: the API's
error shape for what is refused before any route, a deadline for a request's head (a
new connection that sends nothing, or a head sent byte by byte) and for its body, the
1 MiB body limit, HTTP versions other than 1.0 and 1.1 refused, refused credentials
throttled per client address (local/throttle.py), connections limited per client and
in all (local/connections.py), and an access log of one line per request that names
the route, never the path.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..api.resolver import MAX_BODY_BYTES, error_body
from .connections import BACKLOG, LOG_SECONDS, ConnectionLimits
from .fairness import ProjectShares
from .gateway import HEAVY_ROUTES, Gateway, Reply, error_reply
from .sandboxes import ProcessFailed, Sandboxes
from .throttle import CredentialThrottle, retry_after

# A request's head (request line and headers) at most this big, as the stdlib server
# allowed per line; API Gateway's own limit is 10 KB.
MAX_HEAD_BYTES = 65_536
MAX_HEADERS = 100
# A new connection has this long to send a whole request head, and a connection
# between requests this long to start the next one; a body this long to arrive.
HEAD_SECONDS = 10.0
KEEP_ALIVE_SECONDS = 5
BODY_SECONDS = 30.0
# A body over 1 MiB is read and dropped up to this size before the 413, so that the
# client, still sending, reads the answer rather than a reset connection; past it (or
# when the client waits for `100 Continue`) the 413 goes out unread.
DRAIN_BYTES = 8 * MAX_BODY_BYTES
# SIGTERM: requests in flight have this long to finish before the server stops.
GRACEFUL_SECONDS = 3

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def _log(line: str) -> None:
    sys.stderr.write(line + "\n")


def _raw_error(status: int, reason: str, code: str, message: str, extra: str = "") -> bytes:
    """A whole error response that closes the connection, for answers written before
    any request exists to answer (h11 sends responses only to a request)."""
    body = error_body(code, message).encode("utf-8")
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n{extra}"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class TaisceH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request head and the API's
    error shape for requests h11 refuses."""

    _head_timer: asyncio.TimerHandle | None = None
    # Set on the class make_server makes: shared by every connection of the server.
    limits: ConnectionLimits | None = None
    _counted: str | None = None  # the client address this connection is counted under

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if self.limits is not None:
            address = self.client[0] if self.client else ""
            refused = self.limits.open(address)
            if refused is not None:
                # Answered and closed before anything is read: the descriptor is free
                # again at once, and the client reads why.
                self.transport.write(
                    _raw_error(
                        503, "Service Unavailable", "unavailable", refused, "retry-after: 1\r\n"
                    )
                )
                self.transport.close()
                return
            self._counted = address
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.limits is not None and self._counted is not None:
            self.limits.close(self._counted)
            self._counted = None
        self._cancel_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._cancel_head_timer()  # the head is in: the body has its own deadline

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_head_timer()

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(HEAD_SECONDS, self._head_timeout)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timeout(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        if self.conn.trailing_data[0]:
            # Part of a head came, too slowly: say so before closing.
            _log("(no route) 408 the request head did not arrive in time")
            self.transport.write(
                _raw_error(
                    408,
                    "Request Timeout",
                    "request_timeout",
                    f"the request head did not arrive within {HEAD_SECONDS:g} s",
                )
            )
        self.transport.close()

    def send_400_response(self, msg: str) -> None:
        # uvicorn has logged one line ("Invalid HTTP request received.").
        self._cancel_head_timer()
        self.transport.write(
            _raw_error(
                400,
                "Bad Request",
                "invalid_request",
                "the request is not valid HTTP/1.1 (its framing, a header or its size)",
            )
        )
        self.transport.close()


class App:
    """The ASGI application: an HTTP request in, the gateway's event to a handler
    process, its reply out."""

    def __init__(
        self,
        gateway: Gateway,
        sandboxes: Sandboxes,
        throttle: CredentialThrottle | None = None,
        shares: ProjectShares | None = None,
    ) -> None:
        self.gateway = gateway
        self.sandboxes = sandboxes
        self.throttle = throttle
        self.shares = shares

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # lifespan is off; websockets are not served
        started = time.perf_counter()
        method = str(scope["method"])
        target = bytes(scope["raw_path"]).decode("latin-1")
        if scope["query_string"]:
            target += "?" + bytes(scope["query_string"]).decode("latin-1")
        route = self.gateway.route_key(method, target)
        reply, close, note = await self._answer(scope, receive, method, target)
        await _send(send, reply, close)
        # The route, not the path: ids, query strings and bodies can hold personal data.
        elapsed = (time.perf_counter() - started) * 1000
        _log(f"{route} {reply.status} {elapsed:.1f}ms{note}")

    async def _answer(
        self, scope: Scope, receive: Receive, method: str, target: str
    ) -> tuple[Reply, bool, str]:
        """The reply, whether to close the connection after it, and a note for the log."""
        version = str(scope["http_version"])
        raw_headers: list[tuple[bytes, bytes]] = scope["headers"]
        refused = _refused_head(version, method, target, raw_headers)
        if refused is not None:
            return refused, True, ""
        headers = _joined_headers(raw_headers)
        refused = _refused_framing(headers)
        if refused is not None:
            return refused, True, ""
        body = await _read_body(receive)
        if isinstance(body, tuple):
            return body
        prepared = self.gateway.prepare(
            method,
            target,
            headers,
            body,
            scope["client"][0] if scope["client"] else "",
            protocol=f"HTTP/{version}",
        )
        if isinstance(prepared, Reply):
            return prepared, False, ""
        caller = headers.get("authorization", "")
        address = scope["client"][0] if scope["client"] else ""
        # Guesses at credentials are throttled per address (local/throttle.py).
        throttle = self.throttle
        guarded = bool(caller) and self.gateway.authorized(prepared.route_key)
        if throttle and guarded:
            wait = throttle.take(address, caller)
            if wait is not None:
                return _throttled(wait), False, " (throttled: too many refused credentials)"
        # A project's requests share one share of the handler slots, whichever of its
        # credentials they carry: its slow requests leave slots for the others
        # (local/fairness.py, local/sandboxes.py).
        share = await self.shares.share_of(caller) if self.shares else caller
        gone = asyncio.ensure_future(_disconnected(receive))
        reply: Reply | None = None
        try:
            heavy = prepared.route_key in HEAVY_ROUTES
            reply = await self.sandboxes.invoke(share, prepared, heavy=heavy)
        except ProcessFailed:
            reply = error_reply(503, "unavailable", "the server is stopping")
        finally:
            if not gone.done():
                gone.cancel()
            if throttle and guarded:
                throttle.settle(address, caller, reply.status if reply else 500)
        # The handler ran to the end even so, as a Lambda does when its client goes.
        left = gone.done() and not gone.cancelled()
        return reply, False, " (the client disconnected before the reply)" if left else ""


def _refused_head(
    version: str, method: str, target: str, raw_headers: list[tuple[bytes, bytes]]
) -> Reply | None:
    """The refusal of a request head this server does not take (the connection then
    closes), or None."""
    if version not in ("1.0", "1.1"):
        return error_reply(
            505, "http_version_not_supported", f"HTTP/{version} is not served here; use HTTP/1.1"
        )
    if len(raw_headers) > MAX_HEADERS:
        return error_reply(400, "invalid_request", f"a request has at most {MAX_HEADERS} headers")
    # h11 bounds a head still arriving; one that came in a single read is measured here.
    head = len(method) + len(target) + sum(len(n) + len(v) + 4 for n, v in raw_headers)
    if head > MAX_HEAD_BYTES:
        return error_reply(
            400, "invalid_request", f"the request head is over {MAX_HEAD_BYTES:,} bytes"
        )
    return None


def _joined_headers(raw_headers: list[tuple[bytes, bytes]]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in raw_headers:
        key, text = name.decode("latin-1"), value.decode("latin-1")
        # As API Gateway does: repeated headers are joined with commas.
        headers[key] = f"{headers[key]},{text}" if key in headers else text
    return headers


def _refused_framing(headers: dict[str, str]) -> Reply | None:
    """The refusal of a body framed ambiguously or declared too large (the connection
    then closes, the body unread), or None."""
    declared = headers.get("content-length")
    if declared is not None and "transfer-encoding" in headers:
        # h11 reads such a body as chunked (RFC 9112, 6.3), but a proxy in front
        # may have read it by its length: refused, and the connection closed.
        return error_reply(400, "invalid_request", "Content-Length and Transfer-Encoding together")
    if (
        declared is not None
        and int(declared) > MAX_BODY_BYTES
        and (int(declared) > DRAIN_BYTES or headers.get("expect", "").lower() == "100-continue")
    ):
        # Refused unread (h11 allows one run of digits).
        return error_reply(413, "payload_too_large", "the body is larger than 1 MiB")
    return None


def _throttled(wait: float) -> Reply:
    after = retry_after(wait)
    reply = error_reply(
        429,
        "rate_limited",
        f"too many refused credentials from this address; try again in {after} s",
    )
    return Reply(reply.status, {**reply.headers, "Retry-After": after}, reply.body)


async def _read_body(receive: Receive) -> bytes | tuple[Reply, bool, str]:
    """The whole body within BODY_SECONDS and 1 MiB; or the refusal to send instead."""
    body = bytearray()
    size = 0
    deadline = time.monotonic() + BODY_SECONDS
    while True:
        try:
            message = await asyncio.wait_for(receive(), max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            reply = error_reply(
                408, "request_timeout", f"the body did not arrive within {BODY_SECONDS:g} s"
            )
            return reply, True, ""
        if message["type"] == "http.disconnect":
            # A body cut short is never run: the request did not arrive whole.
            reply = error_reply(400, "invalid_request", "the request ended before its body")
            return reply, True, " (the client disconnected before the body ended; not run)"
        chunk = message.get("body", b"")
        size += len(chunk)
        if size <= MAX_BODY_BYTES:
            body += chunk
        elif size > DRAIN_BYTES:
            return error_reply(413, "payload_too_large", "the body is larger than 1 MiB"), True, ""
        if not message.get("more_body", False):
            if size > MAX_BODY_BYTES:
                return (
                    error_reply(413, "payload_too_large", "the body is larger than 1 MiB"),
                    True,
                    "",
                )
            return bytes(body)


async def _disconnected(receive: Receive) -> None:
    """Returns once the client has gone (after the body, receive() waits for that)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def _send(send: Send, reply: Reply, close: bool) -> None:
    headers = [
        (name.lower().encode("latin-1"), value.encode("latin-1"))
        for name, value in reply.headers.items()
        if name.lower() not in ("content-length", "connection", "transfer-encoding")
    ]
    headers.append((b"content-length", str(len(reply.body)).encode("ascii")))
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": reply.body})


class _OneLine(logging.Formatter):
    """uvicorn's own log lines, one line each: an exception's type, never its trace."""

    def format(self, record: logging.LogRecord) -> str:
        line = record.getMessage().replace("\n", " ")
        if record.exc_info and record.exc_info[0] is not None:
            line += f" ({record.exc_info[0].__name__})"
        return line

    def formatException(self, ei: Any) -> str:
        return ""


def _quiet_uvicorn_logs() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.asgi"):
        log = logging.getLogger(name)
        log.handlers = [handler] if name == "uvicorn" else []
        log.setLevel(logging.WARNING)
        log.propagate = name != "uvicorn"


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before the handler processes start (port 0: any)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets whose proto says TCP,
    # and without it the body, written after the head, waits for the client's delayed
    # ACK (40 ms on Linux; docs/measured-choices.md).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(BACKLOG)
    sock.setblocking(False)
    return sock


class _LoopErrors:
    """The event loop's own errors (an accept that failed for want of descriptors, say)
    as one line each, the same message at most once a minute: never a trace per
    connection."""

    def __init__(self) -> None:
        self._last: dict[str, float] = {}
        self._skipped: Counter[str] = Counter()

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message", "event loop error"))
        exc = context.get("exception")
        now = time.monotonic()
        last = self._last.get(message)
        if last is not None and now - last < LOG_SECONDS:
            self._skipped[message] += 1
            return
        self._last[message] = now
        kind = (
            f" ({type(exc).__name__}: {exc.strerror or exc})"
            if isinstance(exc, OSError)
            else (f" ({type(exc).__name__})" if exc is not None else "")
        )
        more = self._skipped.pop(message, 0)
        again = f"; {more} more since the last line" if more else ""
        _log(f"{message}{kind}{again} (logged once a minute)")


def quiet_loop_errors(loop: asyncio.AbstractEventLoop) -> None:
    loop.set_exception_handler(_LoopErrors())


def make_server(app: App, limits: ConnectionLimits | None = None) -> uvicorn.Server:
    _quiet_uvicorn_logs()
    protocol = type("LimitedH11Protocol", (TaisceH11Protocol,), {"limits": limits})
    config = uvicorn.Config(
        app,
        http=protocol,
        lifespan="off",
        log_config=None,
        access_log=False,
        server_header=False,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        # The accept queue, and so the most connections accepted at once before the
        # limits close the refused ones (local/connections.py).
        backlog=BACKLOG,
        # SIGTERM waits this long for requests in flight, then cancels them; the
        # handler slots get a little longer (local/sandboxes.py), then are killed.
        timeout_graceful_shutdown=GRACEFUL_SECONDS,
    )
    return uvicorn.Server(config)
