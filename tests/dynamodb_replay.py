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

The endpoint runs in its own process (`python -m tests.dynamodb_replay`), so its threads
do not compete with the timed client for one interpreter lock.
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "date", "server"}
_CONTROL = "/__replay/"
_READY = "replay serving "
ROOT = Path(__file__).resolve().parents[1]

Answer = tuple[int, list[tuple[str, str]], bytes]


class _Replay:
    """The endpoint's state: the recorded answers, the mode, the delay."""

    def __init__(self, upstream: str, latency: float) -> None:
        self.upstream = urlsplit(upstream)
        self.latency = latency
        self.recording = True
        self.misses = 0
        self._answers: dict[tuple[str, bytes], Answer] = {}
        self._lock = threading.Lock()

    def answer(self, headers: dict[str, str], body: bytes) -> Answer:
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

    def control(self, command: str, body: bytes) -> Answer:
        if command == "replay":
            self.recording = False
        elif command == "latency":
            self.latency = float(json.loads(body))
        state = {"recording": self.recording, "latency": self.latency, "misses": self.misses}
        return 200, [("Content-Type", "application/json")], json.dumps(state).encode()

    def _forward(self, headers: dict[str, str], body: bytes) -> Answer:
        connection = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port)
        try:
            sent = {k: v for k, v in headers.items() if k.lower() not in _HOP_BY_HOP | {"host"}}
            connection.request("POST", self.upstream.path or "/", body, sent)
            reply = connection.getresponse()
            kept = [(k, v) for k, v in reply.getheaders() if k.lower() not in _HOP_BY_HOP]
            return reply.status, kept, reply.read()
        finally:
            connection.close()


def _server(replay: _Replay) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: botocore reuses its connections
        # Headers and body leave in one segment, not two held back by Nagle's
        # algorithm against the client's delayed ACK (40 ms a call).
        disable_nagle_algorithm = True
        wbufsize = -1

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path.startswith(_CONTROL):
                status, headers, answer = replay.control(self.path[len(_CONTROL) :], body)
            else:
                status, headers, answer = replay.answer(dict(self.headers.items()), body)
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *_: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    return server


class ReplayDynamoDb:
    """The endpoint's process, seen from the benchmark: records until `replay()`."""

    def __init__(self, upstream: str, latency: float = 0.005) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.dynamodb_replay", upstream, str(latency)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith(_READY):
            self.stop()
            raise RuntimeError(f"the replay endpoint did not start: {line!r}")
        self.endpoint = line[len(_READY) :].strip()

    def _control(self, command: str, value: object = None) -> dict[str, Any]:
        where = urlsplit(self.endpoint)
        connection = http.client.HTTPConnection(where.hostname, where.port)
        try:
            connection.request("POST", _CONTROL + command, json.dumps(value).encode())
            return dict(json.loads(connection.getresponse().read()))
        finally:
            connection.close()

    def replay(self) -> None:
        self._control("replay")

    def set_latency(self, seconds: float) -> None:
        self._control("latency", seconds)

    @property
    def misses(self) -> int:
        return int(self._control("state")["misses"])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("upstream")
    parser.add_argument("latency", type=float)
    args = parser.parse_args(argv)
    server = _server(_Replay(args.upstream, args.latency))
    host, port = server.server_address[:2]
    print(f"{_READY}http://{host}:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
