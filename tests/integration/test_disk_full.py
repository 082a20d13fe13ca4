"""A full disk over real HTTP: `taisce serve` on a small tmpfs filled by its own
writes. Writes are refused `507 insufficient_storage` in the API's shape, reads and
recall keep working, a restart on the full disk serves reads, the CLI says one line,
and every write acknowledged before the disk filled is still there.

Mounting a tmpfs needs root; elsewhere the test skips and says so."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from taisce_client import Client, InsufficientStorage

from tests.server import ROOT, LocalServer, start_server

SIZE = "6m"  # small, so a few dozen batches fill it
CREATE = (sys.executable, "-m", "taisce.cli", "credentials", "create", "--project", "p")


@pytest.fixture
def full_disk_folder(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs to fill needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount / "data"
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _batch(n: int) -> dict[str, object]:
    # About 0.5 MB of text a batch, each message distinct so that nothing is shared.
    return {
        "messages": [
            {"id": f"m{n}-{i}", "role": "user", "content": f"Orla's note {n}-{i}: " + "x" * 50_000}
            for i in range(10)
        ]
    }


def _fill(http: httpx.Client) -> tuple[list[str], httpx.Response]:
    """Store batches until one is refused; the ids acknowledged and the refusal."""
    acknowledged: list[str] = []
    for n in range(200):
        reply = http.post("/v1/messages", json=_batch(n))
        if reply.status_code != 202:
            return acknowledged, reply
        acknowledged += [m["id"] for m in reply.json()["messages"]]
    raise AssertionError("the disk never filled")


def _assert_full(reply: httpx.Response) -> None:
    assert reply.status_code == 507, reply.text
    error = reply.json()["error"]
    assert error["code"] == "insufficient_storage"
    assert "disk is full" in error["message"]


def _assert_reads(
    server: LocalServer, secret: str, acknowledged: list[str], *, writes: bool = True
) -> None:
    with server.client(secret) as http:
        for message_id in acknowledged:
            assert http.get(f"/v1/messages/{message_id}").status_code == 200, message_id
        recall = http.post("/v1/recalls", json={"question": "What did Orla note?"})
        assert recall.status_code == 200, recall.text
        assert http.get("/v1/facts", params={"subject": "Orla"}).status_code == 200
        if not writes:
            return
        _assert_full(http.post("/v1/messages", json=_batch(999)))
        fact = {
            "subject": "Orla",
            "predicate": "likes",
            "object": "tea",
            "statement": "Orla likes tea",
            "source_role": "user",
        }
        _assert_full(http.post("/v1/facts", json={"facts": [fact]}))
    # The Python client raises its own error at once: a 507 is not retried.
    # (Its retries would wait tens of seconds each with this backoff.)
    started = time.monotonic()
    with (
        Client(server.url, secret, retries=3, backoff=30.0) as client,
        pytest.raises(InsufficientStorage),
    ):
        client.store_facts([fact])
    assert time.monotonic() - started < 10


def test_a_full_disk_refuses_writes_and_keeps_reads(full_disk_folder: Path) -> None:
    server = start_server(full_disk_folder, args=("--processes", "2"))
    stopped = False
    try:
        secret = server.new_credential("full-disk")
        with server.client(secret) as http:
            acknowledged, refusal = _fill(http)
            assert acknowledged, "nothing was stored before the disk filled"
            _assert_full(refusal)
            # An erasure needs room to run too: refused whole, in the same words.
            erasure = http.post("/v1/erasures", json={"subject": "Orla", "dry_run": True})
            if erasure.status_code == 200 and "token" in erasure.json():
                token = erasure.json()["token"]
                erasure = http.post("/v1/erasures", json={"subject": "Orla", "token": token})
            assert erasure.status_code in (200, 202, 507), erasure.text
            if erasure.status_code == 507:
                _assert_full(erasure)
        _assert_reads(server, secret, acknowledged)
        # The CLI: one line, no trace.
        created = subprocess.run(
            [*CREATE, "--data", str(full_disk_folder)],
            cwd=ROOT,
            env={**os.environ, "TAISCE_EMBEDDINGS": "none"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert created.returncode == 1, created.stdout + created.stderr
        assert created.stderr.strip().count("\n") == 0, created.stderr
        assert created.stderr.startswith("error: ") and "disk is full" in created.stderr
        err = server.stop()
        stopped = True
        assert "Traceback" not in err, err[-2000:]
        # Restarted on the full disk: it starts and serves reads; nothing acknowledged lost.
        again = start_server(full_disk_folder, args=("--processes", "2"))
        try:
            _assert_reads(again, secret, acknowledged)
        finally:
            err = again.stop()
        assert "Traceback" not in err, err[-2000:]
    finally:
        if not stopped:
            server.stop()


def _fill_with_a_file(folder: Path) -> Path:
    """Fill the disk from outside the server; the filler's path."""
    filler = folder.parent / "filler"
    handle = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(handle, b"x" * 65536)
    except OSError:
        pass
    try:
        while True:
            os.write(handle, b"x")
    except OSError:
        pass
    finally:
        os.close(handle)
    return filler


def test_a_disk_that_filled_while_the_server_was_stopped_serves_reads(
    full_disk_folder: Path,
) -> None:
    # The WAL's index (-shm) goes with the last connection, and SQLite needs it even to
    # read: the store keeps a reserve beside the file and gives it up to open.
    server = start_server(full_disk_folder)
    try:
        secret = server.new_credential("filled-while-stopped")
        with server.client(secret) as http:
            reply = http.post("/v1/messages", json=_batch(0))
            assert reply.status_code == 202, reply.text
            acknowledged = [m["id"] for m in reply.json()["messages"]]
    finally:
        err = server.stop()
    assert "Traceback" not in err, err[-2000:]
    names = sorted(p.name for p in full_disk_folder.iterdir())
    assert "taisce.sqlite3.reserve" in names and "taisce.sqlite3-shm" not in names, names
    filler = _fill_with_a_file(full_disk_folder)
    again = start_server(full_disk_folder)
    try:
        # (What the open left of the reserve may take a small write or two.)
        _assert_reads(again, secret, acknowledged, writes=False)
        with again.client(secret) as http:
            _assert_full(http.post("/v1/messages", json=_batch(999)))
        # Space freed: writes are taken again, by the same running server.
        filler.unlink()
        with again.client(secret) as http:
            assert http.post("/v1/messages", json=_batch(1)).status_code == 202
    finally:
        err = again.stop()
    assert "Traceback" not in err, err[-2000:]
    # The next start with room makes the reserve again.
    third = start_server(full_disk_folder)
    third.stop()
    reserve = full_disk_folder / "taisce.sqlite3.reserve"
    assert reserve.stat().st_size > 0
    # Without one (taken by something else), a start on the full disk says so in a line.
    reserve.unlink()
    # The last connection to close checkpoints the WAL and removes its index.
    last = sqlite3.connect(full_disk_folder / "taisce.sqlite3")
    last.execute("SELECT count(*) FROM sqlite_master").fetchone()
    last.close()
    assert not (full_disk_folder / "taisce.sqlite3-shm").exists()
    _fill_with_a_file(full_disk_folder)
    with pytest.raises(RuntimeError) as refused:
        start_server(full_disk_folder).stop()
    said = str(refused.value).removeprefix("server did not start: ").strip()
    assert said.startswith("error: the disk is full") and "\n" not in said, said
