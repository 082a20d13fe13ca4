"""SIGTERM stops `taisce serve` within seconds even in the middle of an erasure, and
the erasure is completed after the restart: its pending record survives the stop and
the new server's worker takes it up at once."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import httpx

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
