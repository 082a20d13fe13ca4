"""SIGTERM stops `taisce serve` within seconds even in the middle of an erasure, and
the erasure is completed after the restart: its pending record survives the stop and
the new server's worker takes it up at once. While it runs, the erasure's thread has a
lower CPU priority."""

from __future__ import annotations

import sqlite3
import sys
import threading
import time
from pathlib import Path

import httpx

from taisce.local.gateway import HEAVY_NICE
from tests.server import start_server

# A message of many repeated words erased by a long name: planning it takes a
# second or more, long enough to take the file's write lock while it plans.
CONTENT = "ab " * 8_000
SUBJECT = " ".join(["ab"] * 160)


def _pending_id(db_path: Path, seconds: float) -> str:
    deadline = time.monotonic() + seconds
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
    try:
        while time.monotonic() < deadline:
            row = db.execute("SELECT id FROM erasure_requests").fetchone()
            if row is not None:
                return str(row[0])
            time.sleep(0.01)
    finally:
        db.close()
    raise AssertionError("the erasure never started")


def _nice_values(pid: int) -> set[int]:
    """The nice values of every thread of `pid` and of its children (Linux /proc)."""
    pids = {pid}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                pids.add(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    values: set[int] = set()
    for p in pids:
        for stat in Path(f"/proc/{p}/task").glob("*/stat"):
            try:
                values.add(int(stat.read_text().rsplit(")", 1)[1].split()[16]))
            except (OSError, ValueError, IndexError):
                continue
    return values


def test_sigterm_mid_erasure_stops_within_seconds_and_the_erasure_resumes(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    server = start_server(data, args=("--processes", "2"))
    secret = server.new_credential("stopping")
    with server.client(secret) as http:
        stored = http.post(
            "/v1/messages", json={"messages": [{"id": "m-1", "role": "user", "content": CONTENT}]}
        )
        assert stored.status_code == 202, stored.text

    def erase() -> None:
        try:
            with server.client(secret) as http:
                http.post("/v1/erasures", json={"subject": SUBJECT}, timeout=120)
        except httpx.HTTPError:
            pass  # the server stops under it: expected

    request = threading.Thread(target=erase)
    request.start()
    db_path = data / "taisce.sqlite3"
    erasure_id = _pending_id(db_path, 30)
    # The erasure is planning: hold the write lock so that it cannot finish.
    holder = sqlite3.connect(db_path, isolation_level=None, timeout=30)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert holder.execute("SELECT 1 FROM erasure_requests").fetchone(), "it finished first"
        # The erasure runs on a thread of lower CPU priority (Linux), leaving the CPUs
        # to other requests first.
        if sys.platform.startswith("linux"):
            assert HEAVY_NICE in _nice_values(server.process.pid)
        time.sleep(0.5)
        started = time.monotonic()
        server.process.terminate()
        server.process.communicate(timeout=30)
        stopped_in = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    request.join(timeout=30)
    assert stopped_in < 8, f"SIGTERM took {stopped_in:.1f} s"

    again = start_server(data, args=("--processes", "2"))
    try:
        with again.client(secret) as http:
            deadline = time.monotonic() + 60
            status = http.get(f"/v1/erasures/{erasure_id}").json()
            while status["status"] != "done" and time.monotonic() < deadline:
                time.sleep(0.2)
                status = http.get(f"/v1/erasures/{erasure_id}").json()
            assert status["status"] == "done", status
            assert status["erased"]["messages"] == 1
            message = http.get("/v1/messages/m-1").json()
            assert "ab ab" not in str(message)
    finally:
        again.stop()


def test_sigterm_as_soon_as_the_server_says_it_serves_stops_it_cleanly(tmp_path: Path) -> None:
    """A SIGTERM sent the moment `serving` is printed, before the HTTP server has put its
    own signal handlers in, still stops the server, gracefully (exit 0, not killed by the
    signal): such a signal used to be swallowed and the server ran on."""
    for attempt in range(3):
        server = start_server(tmp_path / str(attempt), args=("--processes", "1"))
        server.stop()  # SIGTERM at once; killed (-9) if still running after 10 s
        # -15: the signal's default action killed it; -9: it ran on and was killed.
        assert server.process.returncode == 0, f"attempt {attempt}: {server.process.returncode}"
