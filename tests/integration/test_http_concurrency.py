"""Concurrent requests from several projects over real HTTP: each write lands in the
project of its own credential, whole, and each read sees only its own project.

Lambda runs one request per process; `taisce serve` runs many at once on threads,
so this is where request state shared between threads would show."""

from __future__ import annotations

import threading
import uuid
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.draining import drain
from tests.server import LocalServer, start_server

PROJECTS = 3
THREADS_PER_PROJECT = 4
BATCHES = 50
FACTS_PER_BATCH = 40


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """A server of its own, its pipes read: this module sends thousands of requests."""
    running = start_server(Path(tmp_path_factory.mktemp("concurrency-data")))
    drain(running)
    yield running
    running.stop()


def _every_fact(http: httpx.Client, subject: str) -> list[dict[str, Any]]:
    """Every fact of the subject, a page at a time (a page holds at most 100)."""
    found: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params = {"subject": subject, "limit": 100, **({"cursor": cursor} if cursor else {})}
        page = http.get("/v1/facts", params=params).json()
        found += page["facts"]
        cursor = page["next_cursor"]
        if cursor is None:
            return found


def test_concurrent_writes_and_reads_stay_in_their_project(server: LocalServer) -> None:
    run = uuid.uuid4().hex[:8]
    projects = [f"conc-{run}-{n}" for n in range(PROJECTS)]
    secrets = {p: server.new_credential(p) for p in projects}
    acknowledged: dict[str, list[str]] = defaultdict(list)
    problems: list[str] = []
    lock = threading.Lock()

    def hammer(project: str, worker: int) -> None:
        subject = f"Subject {project}"
        with server.client(secrets[project]) as http:
            for batch in range(BATCHES):
                ids = [f"{project}-{worker}-{batch}-{i}" for i in range(FACTS_PER_BATCH)]
                facts = [
                    {
                        "id": fact_id,
                        "subject": subject,
                        "predicate": "has note",
                        "object": fact_id,
                        "object_kind": "value",
                        "source_role": "user",
                    }
                    for fact_id in ids
                ]
                try:
                    stored = http.post("/v1/facts", json={"facts": facts})
                    recalled = http.post(
                        "/v1/recalls",
                        json={"question": f"What about {subject}?", "source_roles": ["user"]},
                    )
                except httpx.HTTPError as exc:
                    with lock:
                        problems.append(f"{project}: {exc!r}")
                    continue
                with lock:
                    if stored.status_code == 201:
                        acknowledged[project] += ids
                    else:
                        problems.append(f"{project}: facts {stored.status_code}")
                    if recalled.status_code != 200:
                        problems.append(f"{project}: recall {recalled.status_code}")
                    else:
                        for fact in recalled.json()["facts"]:
                            if fact["subject"] != subject:
                                problems.append(f"{project} recalled {fact['subject']}")

    threads = [
        threading.Thread(target=hammer, args=(p, w))
        for p in projects
        for w in range(THREADS_PER_PROJECT)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert problems == []
    for project in projects:
        with server.client(secrets[project]) as http:
            own = _every_fact(http, f"Subject {project}")
            assert sorted(f["id"] for f in own) == sorted(acknowledged[project])
            assert len(own) == THREADS_PER_PROJECT * BATCHES * FACTS_PER_BATCH
            for other in projects:
                if other != project:
                    seen = http.get("/v1/facts", params={"subject": f"Subject {other}"})
                    assert seen.json() == {"facts": [], "next_cursor": None}
