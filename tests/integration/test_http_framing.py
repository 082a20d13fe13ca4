"""`taisce serve` read as an attacker reads it: raw bytes over a socket.

Each case here was accepted by the hand-written server on http.server (issue 15):
lengths that a proxy in front may read differently (request smuggling), a request cut
off and half-closed that still ran, idle connections never closed, HTTP/2.0 answered
`500`-style, a client that disconnects leaving a stack trace in the log. And one
project's slow requests made every other project wait.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.draining import drain
from tests.server import LocalServer, start_server


@dataclass
class Served:
    server: LocalServer
    log: list[str]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    running = start_server(Path(tmp_path_factory.mktemp("framing-data")))
    log = drain(running)
    yield Served(running, log)
    running.stop()


@pytest.fixture
def api(served: Served) -> LocalServer:
    return served.server


def _address(server: LocalServer) -> tuple[str, int]:
    host, port = server.url.removeprefix("http://").split(":")
    return host, int(port)


def exchange(server: LocalServer, data: bytes, *, half_close: bool = False) -> bytes:
    """Send `data`, optionally half-close, and read until the server closes."""
    with socket.create_connection(_address(server), timeout=60) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def responses(raw: bytes) -> list[tuple[int, dict[str, Any]]]:
    """Every response in `raw` (each with a Content-Length), as (status, JSON body)."""
    found: list[tuple[int, dict[str, Any]]] = []
    while raw:
        head, _, rest = raw.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ")[1])
        length = next(
            int(line.split(b":", 1)[1])
            for line in lines
            if line.lower().startswith(b"content-length:")
        )
        found.append((status, json.loads(rest[:length]) if length else {}))
        raw = rest[length:]
    return found


def fact_body(fact_id: str) -> bytes:
    fact = {
        "id": fact_id,
        "subject": "Smuggled",
        "predicate": "was",
        # Its own content: one live fact per content in a project (fact_identity).
        "object": f"stored as {fact_id}",
        "object_kind": "value",
        "source_role": "user",
    }
    return json.dumps({"facts": [fact]}).encode()


def facts_request(secret: str, fact_id: str) -> bytes:
    body = fact_body(fact_id)
    return (
        b"POST /v1/facts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
        + secret.encode()
        + b"\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
        + body
    )


def stored_ids(server: LocalServer, project: str) -> set[str]:
    db = sqlite3.connect(f"file:{server.data_dir / 'taisce.sqlite3'}?mode=ro", uri=True, timeout=30)
    try:
        rows = db.execute("SELECT id FROM facts WHERE project = ?", (project,))
        return {r[0] for r in rows}
    finally:
        db.close()


@pytest.fixture
def project(api: LocalServer) -> tuple[str, str]:
    name = f"framing-{uuid.uuid4().hex[:10]}"
    return name, api.new_credential(name)


# -- lengths a proxy may read otherwise ------------------------------------------------------


def test_two_different_content_lengths_are_refused_and_nothing_smuggled(
    api: LocalServer, project: tuple[str, str]
) -> None:
    name, secret = project
    smuggled = facts_request(secret, "smuggled-cl")
    body = b"{}" + smuggled
    raw = exchange(
        api,
        b"POST /v1/recalls HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body) + body,
    )
    answers = responses(raw)
    assert len(answers) == 1, raw  # the body did not become a second request
    status, body_json = answers[0]
    assert status == 400
    assert body_json["error"]["code"] == "invalid_request"
    assert "smuggled-cl" not in stored_ids(api, name)


def test_a_signed_content_length_is_refused(api: LocalServer, project: tuple[str, str]) -> None:
    name, secret = project
    body = fact_body("signed-cl")
    raw = exchange(
        api,
        b"POST /v1/facts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
        + secret.encode()
        + b"\r\nContent-Length: +%d\r\n\r\n" % len(body)
        + body,
    )
    [(status, error)] = responses(raw)
    assert status == 400
    assert error["error"]["code"] == "invalid_request"
    assert "signed-cl" not in stored_ids(api, name)


def test_content_length_beside_chunked_is_refused(
    api: LocalServer, project: tuple[str, str]
) -> None:
    name, secret = project
    body = fact_body("cl-and-chunked")
    chunked = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    raw = exchange(
        api,
        b"POST /v1/facts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
        + secret.encode()
        + b"\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
        + chunked,
    )
    answers = responses(raw)
    assert len(answers) == 1, raw
    assert answers[0][0] == 400
    assert answers[0][1]["error"]["code"] == "invalid_request"
    assert "cl-and-chunked" not in stored_ids(api, name)


# -- requests cut short ------------------------------------------------------------------------


def test_a_request_cut_off_in_its_headers_and_half_closed_is_not_run(
    api: LocalServer, project: tuple[str, str]
) -> None:
    name, secret = project
    with api.client(secret) as http:
        assert http.post("/v1/facts", content=fact_body("keep-me")).status_code == 201
    exchange(
        api,
        b"DELETE /v1/facts/keep-me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
        + secret.encode()
        + b"\r\n",  # no blank line: the head never ended
        half_close=True,
    )
    assert "keep-me" in stored_ids(api, name)


def test_a_request_cut_off_in_its_body_and_half_closed_is_not_run(
    api: LocalServer, project: tuple[str, str]
) -> None:
    name, secret = project
    whole = facts_request(secret, "cut-body")
    exchange(api, whole[:-5], half_close=True)
    assert "cut-body" not in stored_ids(api, name)


# -- idle and slow connections -------------------------------------------------------------------


def _closed_by_server(sock: socket.socket) -> bytes:
    """What the server sends before closing (b"" for a silent close); the read times
    out after 60 s if it never closes, far beyond the server's own deadlines."""
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    return answer


def test_idle_and_slow_connections_are_closed(api: LocalServer) -> None:
    results: dict[str, bytes | Exception] = {}

    def silent() -> None:  # connects and never sends a byte
        with socket.create_connection(_address(api), timeout=60) as sock:
            results["silent"] = _closed_by_server(sock)

    def kept_alive() -> None:  # one request, then idle on the kept-alive connection
        with socket.create_connection(_address(api), timeout=60) as sock:
            sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
            results["kept_alive"] = _closed_by_server(sock)

    def slow_head() -> None:  # a head sent a few bytes at a time, never finished
        with socket.create_connection(_address(api), timeout=60) as sock:
            sock.sendall(b"GET /v1/health HTTP/1.1\r\n")
            try:
                for _ in range(60):
                    sock.sendall(b"X-A: b\r\n")
                    time.sleep(1)
            except OSError:
                pass  # closed by the server while still sending
            results["slow_head"] = _closed_by_server(sock)

    threads = [threading.Thread(target=f) for f in (silent, kept_alive, slow_head)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results["silent"] == b""
    [(status, _)] = responses(results["kept_alive"])  # answered, then closed
    assert status == 200
    [(status, error)] = responses(results["slow_head"])
    assert status == 408
    assert error["error"]["code"] == "request_timeout"


# -- HTTP versions -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "request_line",
    [b"GET /v1/health HTTP/2.0", b"GET /v1/health HTTP/3.0", b"GET /v1/health HTTP/9.9"],
)
def test_http_versions_not_spoken_get_505_in_the_api_shape(
    api: LocalServer, request_line: bytes
) -> None:
    [(status, error)] = responses(exchange(api, request_line + b"\r\nHost: x\r\n\r\n"))
    assert status == 505
    assert error["error"]["code"] == "http_version_not_supported"


def test_the_http2_preface_gets_505(api: LocalServer) -> None:
    [(status, error)] = responses(exchange(api, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
    assert status == 505
    assert error["error"]["code"] == "http_version_not_supported"


@pytest.mark.parametrize(
    "request_line", [b"GET /v1/health HTTP/x", b"GET /v1/health HTTP/1.1.1", b"GET /v1/health"]
)
def test_malformed_versions_get_400_in_the_api_shape(api: LocalServer, request_line: bytes) -> None:
    [(status, error)] = responses(exchange(api, request_line + b"\r\nHost: x\r\n\r\n"))
    assert status == 400
    assert error["error"]["code"] == "invalid_request"


def test_http_1_0_is_served(api: LocalServer) -> None:
    [(status, body)] = responses(exchange(api, b"GET /v1/health HTTP/1.0\r\n\r\n"))
    assert status == 200
    assert body["status"] == "ok"


# -- disconnects in the log ----------------------------------------------------------------------


def _reset(sock: socket.socket) -> None:
    """Close with a reset (SO_LINGER 0), as a client that gives up does."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    sock.close()


def test_a_client_that_disconnects_is_logged_in_one_line(
    served: Served, project: tuple[str, str]
) -> None:
    api = served.server
    _, secret = project
    marker = uuid.uuid4().hex
    before = len(served.log)
    cut = 20
    for _ in range(cut):  # the body promised but never sent whole
        sock = socket.create_connection(_address(api), timeout=60)
        sock.sendall(
            b"POST /v1/recalls HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n"
            b"X-Marker: " + marker.encode() + b"\r\n\r\n" + b" " * 100_000
        )
        _reset(sock)
    for _ in range(20):  # whole requests, gone before the reply
        sock = socket.create_connection(_address(api), timeout=60)
        sock.sendall(facts_request(secret, f"gone-{uuid.uuid4().hex[:8]}"))
        _reset(sock)
    # The server still answers, and has logged every request by now.
    with api.client() as http:
        assert http.get("/v1/health").status_code == 200
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        lines = served.log[before:]
        if sum("disconnected before the body" in line for line in lines) >= cut:
            break
        time.sleep(0.2)
    lines = served.log[before:]
    assert not any("Traceback" in line or line.startswith((" ", "\t")) for line in lines), lines
    cut_lines = [line for line in lines if "disconnected before the body" in line]
    assert len(cut_lines) == cut, lines
    assert all(line.startswith("POST /v1/recalls ") for line in cut_lines)
    assert not any(marker in line for line in lines)


# -- one project's slow requests do not hold another's ------------------------------------------


def test_a_project_waiting_on_the_store_does_not_hold_another_project(
    api: LocalServer,
) -> None:
    """Project A's writes wait on the SQLite file's write lock, held here by the test
    (what a slow write does to whoever comes next). While they wait, project B's
    recall is answered: on a server that runs handlers one at a time it would wait
    behind them until the lock is released. A sends through two credentials: the
    share is the project's, not a header's (counted per header, A's two credentials
    took every slot and B's recall waited for the lock)."""
    slow, other = f"slow-{uuid.uuid4().hex[:8]}", f"other-{uuid.uuid4().hex[:8]}"
    slow_secrets = [api.new_credential(slow), api.new_credential(slow)]
    other_secret = api.new_credential(other)
    with api.client(other_secret) as http:
        assert http.post("/v1/facts", content=fact_body("b-1")).status_code == 201

    holder = sqlite3.connect(api.data_dir / "taisce.sqlite3", isolation_level=None, timeout=30)
    holder.execute("BEGIN IMMEDIATE")  # the write lock: every write now waits
    writes: dict[int, int] = {}
    try:

        def write(n: int) -> None:
            with api.client(slow_secrets[n % 2]) as http:
                writes[n] = http.post("/v1/facts", content=fact_body(f"a-{n}")).status_code

        # More writes than the server has processes: the share of one caller is bounded.
        writers = [threading.Thread(target=write, args=(n,)) for n in range(6)]
        for t in writers:
            t.start()
        time.sleep(1.0)  # let them reach the server (not a measurement)
        with httpx.Client(
            base_url=api.url, headers={"Authorization": f"Bearer {other_secret}"}, timeout=20
        ) as http:
            recall = http.post("/v1/recalls", json={"question": "What was Smuggled?"})
        assert recall.status_code == 200
        assert [f["id"] for f in recall.json()["facts"]] == ["b-1"]
        assert writes == {}  # A's writes were all still waiting on the lock meanwhile
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    for t in writers:
        t.join(timeout=60)
    assert writes == dict.fromkeys(range(6), 201)
    assert {f"a-{n}" for n in range(6)} <= stored_ids(api, slow)


@pytest.mark.parametrize("processes", [1, 3])
def test_the_background_worker_runs_once_whatever_the_process_count(
    tmp_path: Path, processes: int
) -> None:
    running = start_server(tmp_path / "data", args=["--processes", str(processes)])
    try:
        with running.client() as http:
            assert http.get("/v1/health").status_code == 200
    finally:
        log = running.stop()
    assert log.count("background worker running") == 1, log


def _children(pid: int) -> dict[int, str]:
    """The processes whose parent is `pid`, with their command lines (Linux /proc)."""
    found: dict[int, str] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ")
                found[int(stat.parent.name)] = cmdline.decode(errors="replace")
        except (OSError, IndexError, ValueError):
            continue
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_killed_handler_processes_are_replaced(tmp_path: Path) -> None:
    running = start_server(tmp_path / "data", args=["--processes", "3"])
    log = drain(running)
    try:
        deadline = time.monotonic() + 30
        while not any("background worker running" in line for line in log):
            assert time.monotonic() < deadline, log
            time.sleep(0.1)
        worker = next(line for line in log if "background worker running" in line)
        worker_pid = int(worker.split("process ")[1].split(",")[0])
        handlers = [
            pid
            for pid, cmdline in _children(running.process.pid).items()
            if "spawn_main" in cmdline and pid != worker_pid
        ]
        assert len(handlers) == 2  # the server's own process is the third slot
        for pid in handlers:
            os.kill(pid, signal.SIGKILL)
        statuses: list[int] = []

        def health() -> None:
            with running.client() as http:
                reply = http.get("/v1/health")
            if reply.status_code != 200:
                assert reply.json()["error"]["code"] == "internal"
            statuses.append(reply.status_code)

        # Bursts of concurrent requests until both deaths are noticed (an idle process
        # is checked before it is handed a request; one killed mid-hand-out answers
        # 500) and a whole burst is answered by the processes started in their place.
        deadline = time.monotonic() + 90
        while True:
            assert time.monotonic() < deadline, (statuses, log)
            burst = [threading.Thread(target=health) for _ in range(6)]
            for t in burst:
                t.start()
            for t in burst:
                t.join()
            died = sum("a handler process died" in line for line in log)
            if statuses[-6:] == [200] * 6 and died >= 2:
                break
            time.sleep(0.5)
        assert set(statuses) <= {200, 500}
        assert sum("a handler process died" in line for line in log) == 2
        replaced = [
            pid
            for pid, cmdline in _children(running.process.pid).items()
            if "spawn_main" in cmdline and pid != worker_pid
        ]
        assert len(replaced) == 2
        assert not set(replaced) & set(handlers)
    finally:
        running.stop()
    assert not any("Traceback" in line for line in log), log
