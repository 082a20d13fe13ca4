"""A local OpenAI-compatible chat endpoint that answers from recorded exchanges.

It listens on a free loopback port in a thread (stdlib http.server, real HTTP) and
answers `POST <base>/chat/completions` from a recording in tests/recordings/openai/
(see its README): an exchange with `match` answers every request whose user message
holds that phrase; the others answer in order, each once. A request nothing answers
gets a 599, so a test that asks more than it recorded fails loudly. Every request
body and its headers are kept for the test to check.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

RECORDINGS = Path(__file__).parent / "recordings" / "openai"
BASE_PATH = "/v1"


def load(name: str) -> list[dict[str, Any]]:
    data = json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))
    return data["exchanges"]


class ChatReplay:
    def __init__(self, *recordings: str, exchanges: list[dict[str, Any]] | None = None) -> None:
        loaded = [e for name in recordings for e in load(name)] + list(exchanges or [])
        self.matched = [e for e in loaded if "match" in e]
        self.queue: deque[dict[str, Any]] = deque(e for e in loaded if "match" not in e)
        self.requests: list[dict[str, Any]] = []
        # While cleared, answers wait: a test can hold the model back and see that
        # storing does not wait for it.
        self.gate = threading.Event()
        self.gate.set()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{BASE_PATH}"

    def add(self, name: str) -> None:
        """Queue the exchanges of another recording."""
        with self._lock:
            for e in load(name):
                (self.matched.append if "match" in e else self.queue.append)(e)

    def _answer(self, body: dict[str, Any]) -> dict[str, Any] | None:
        user = next((m["content"] for m in body.get("messages", []) if m["role"] == "user"), "")
        with self._lock:
            for exchange in self.matched:
                if exchange["match"] in user:
                    return exchange
            return self.queue.popleft() if self.queue else None

    def start(self) -> ChatReplay:
        replay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                body = json.loads(raw)
                with replay._lock:
                    replay.requests.append(
                        {"path": self.path, "headers": dict(self.headers.items()), "body": body}
                    )
                exchange = replay._answer(body) if self.path.endswith("/chat/completions") else None
                if exchange is None:
                    self._send(599, {}, b'{"error": "no recorded answer left"}')
                    return
                replay.gate.wait(timeout=60)
                time.sleep(exchange.get("delay", 0))
                response = exchange["response"]
                if "body_text" in response:
                    payload = response["body_text"].encode("utf-8")
                else:
                    payload = json.dumps(response["body"]).encode("utf-8")
                self._send(response["status"], response.get("headers", {}), payload)

            def _send(self, status: int, headers: dict[str, str], payload: bytes) -> None:
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ChatReplay:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
