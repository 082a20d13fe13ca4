"""`taisce serve`: the local gateway over HTTP, one thread per connection."""

from __future__ import annotations

import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..api.resolver import MAX_BODY_BYTES
from .gateway import Gateway, Reply, _error


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle on, the body waits for the
    # client's delayed ACK of the headers (40 ms on Linux): p95 45 ms against a p50
    # of 3 ms in bench/load_bench.py before this.
    disable_nagle_algorithm = True
    server_version = "taisce"
    sys_version = ""
    gateway: Gateway  # set on the subclass made by make_server

    def _read_chunked(self) -> bytes | None:
        """A Transfer-Encoding: chunked body, or None once it passes the size limit."""
        body = bytearray()
        while True:
            size = int(self.rfile.readline(1024).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline(1024).strip():
                    pass  # trailers
                return bytes(body)
            if len(body) + size > MAX_BODY_BYTES:
                return None
            body += self.rfile.read(size)
            self.rfile.readline(1024)

    def _read_body(self) -> Reply | bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            try:
                chunked = self._read_chunked()
            except ValueError:
                self.close_connection = True
                return _error(400, "invalid_request", "the chunked body is malformed")
            if chunked is None:
                self.close_connection = True
                return _error(413, "payload_too_large", "the body is larger than 1 MiB")
            return chunked
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            return _error(400, "invalid_request", "Content-Length is not a number")
        if length > MAX_BODY_BYTES:
            # Refused unread; the connection closes, so the unread body is dropped.
            self.close_connection = True
            return _error(413, "payload_too_large", "the body is larger than 1 MiB")
        return self.rfile.read(length) if length else b""

    def _serve(self) -> None:
        started = time.perf_counter()
        body = self._read_body()
        if isinstance(body, Reply):
            reply = body
        else:
            reply = self.gateway.handle(
                self.command, self.path, dict(self.headers.items()), body, self.client_address[0]
            )
        self._send(reply)
        # The route, not the path: ids, query strings and bodies can hold personal data.
        elapsed = (time.perf_counter() - started) * 1000
        route = self.gateway.route_key(self.command, self.path)
        sys.stderr.write(f"{route} {reply.status} {elapsed:.1f}ms\n")

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            if name.lower() not in ("content-length", "connection"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply.body)

    def __getattr__(self, name: str) -> Any:
        # Any method, known or not, goes to the gateway, which answers 404 where no
        # route has it (the stdlib would answer 501 with an HTML page).
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Errors the stdlib raises itself (a malformed request line, a header too
        long) in the API's shape instead of its HTML page."""
        self.close_connection = True
        if code >= 500:
            reply = _error(code, "internal", "the server failed")
        elif code == 404:
            reply = _error(404, "not_found", "no such route")
        else:
            reply = _error(400, "invalid_request", message or "the request is malformed")
        if not hasattr(self, "command") or self.command is None:
            self.command = ""
        # An unparsable request line leaves HTTP/0.9, which has no status line.
        if not str(getattr(self, "request_version", "")).startswith("HTTP/1."):
            self.request_version = "HTTP/1.1"
        self._send(reply)

    def log_message(self, format: str, *args: object) -> None:
        pass  # _serve writes its own access line


class LocalServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def make_server(gateway: Gateway, host: str, port: int) -> LocalServer:
    handler = type("RequestHandler", (_RequestHandler,), {"gateway": gateway})
    return LocalServer((host, port), handler)
