"""`taisce serve`: the local gateway over HTTP, one thread per connection."""

from __future__ import annotations

import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ..api.resolver import MAX_BODY_BYTES
from .gateway import Gateway, _error


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "taisce"
    sys_version = ""
    gateway: Gateway  # set on the subclass made by make_server

    def _serve(self) -> None:
        started = time.perf_counter()
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length > MAX_BODY_BYTES:
            # Refused unread; the connection closes, so the unread body is dropped.
            reply = _error(413, "payload_too_large", "the body is larger than 1 MiB")
            self.close_connection = True
        elif length < 0:
            reply = _error(400, "invalid_request", "Content-Length is not a number")
            self.close_connection = True
        else:
            body = self.rfile.read(length) if length else b""
            reply = self.gateway.handle(
                self.command, self.path, dict(self.headers.items()), body, self.client_address[0]
            )
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
        # Paths only: query strings and bodies can hold personal data.
        elapsed = (time.perf_counter() - started) * 1000
        path = self.path.partition("?")[0]
        sys.stderr.write(f"{self.command} {path} {reply.status} {elapsed:.1f}ms\n")

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_HEAD = do_OPTIONS = _serve

    def log_message(self, format: str, *args: object) -> None:
        pass  # _serve writes its own access line


class LocalServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def make_server(gateway: Gateway, host: str, port: int) -> LocalServer:
    handler = type("RequestHandler", (_RequestHandler,), {"gateway": gateway})
    return LocalServer((host, port), handler)
