"""A DynamoDB endpoint that answers with moto's recorded answers after a fixed delay,
serving requests at once as DynamoDB does: for timing the adapter's waves, not a test
database.

moto's server answers one request at a time and takes milliseconds of Python per call,
so a wave of parallel Queries to it costs the sum of moto's times, not one round trip.
Here a first pass forwards each request to moto and records the answer (the key is the
operation and the exact request body, which botocore serialises the same way for the same
call); a timed pass then answers each request from the record after `latency` seconds,
in its own thread. The client, the adapter and the domain run for real; only the
database's own time is replaced by a fixed delay. A request not recorded is forwarded
(and counted in `misses`), so a replayed recall is never answered wrongly.
"""

from __future__ import annotations

import http.client
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "date", "server"}


class ReplayDynamoDb:
    def __init__(self, upstream: str, latency: float = 0.005) -> None:
        self.upstream = urlsplit(upstream)
        self.latency = latency
        self.recording = True
        self.misses = 0
        self._answers: dict[tuple[str, bytes], tuple[int, list[tuple[str, str]], bytes]] = {}
        self._lock = threading.Lock()
        replay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: botocore reuses its connections
            # Headers and body leave in one segment, not two held back by Nagle's
            # algorithm against the client's delayed ACK (40 ms a call).
            disable_nagle_algorithm = True
            wbufsize = -1

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                status, headers, answer = replay.answer(dict(self.headers.items()), body)
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *_: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def answer(
        self, headers: dict[str, str], body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        key = (headers.get("X-Amz-Target", ""), body)
        if not self.recording:
            time.sleep(self.latency)  # the round trip, in this request's own thread
            found = self._answers.get(key)
            if found is not None:
                return found
            with self._lock:
                self.misses += 1
        found = self._forward(headers, body)
        if found[0] == 200:
            with self._lock:
                self._answers[key] = found
        return found

    def _forward(
        self, headers: dict[str, str], body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        connection = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port)
        try:
            sent = {k: v for k, v in headers.items() if k.lower() not in _HOP_BY_HOP | {"host"}}
            connection.request("POST", self.upstream.path or "/", body, sent)
            reply = connection.getresponse()
            kept = [(k, v) for k, v in reply.getheaders() if k.lower() not in _HOP_BY_HOP]
            return reply.status, kept, reply.read()
        finally:
            connection.close()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
