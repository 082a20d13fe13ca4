"""Isolation over real HTTP: three projects, each with its own credential, hold random
memories about the same names; random recalls (every control), listings, merges and
erasures through `taisce serve` never answer with another project's ids or texts, and
never change what another project holds. The smaller sibling of
tests/contract/test_isolation_property.py, which runs on the stores directly.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.draining import drain
from tests.isolation_memories import PROJECTS, TOKEN, actions, memory_of
from tests.server import LocalServer, start_server


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    running = start_server(Path(tmp_path_factory.mktemp("isolation-data")))
    drain(running)
    yield running
    running.stop()


def request(http: httpx.Client, action: tuple[Any, ...]) -> httpx.Response:
    kind = action[0]
    if kind == "recall":
        return http.post("/v1/recalls", json=action[1])
    if kind == "facts":
        return http.get("/v1/facts", params={"subject": action[1]})
    if kind == "aliases":
        return http.get("/v1/entities/aliases")
    if kind == "entities":
        return http.get("/v1/entities", params={"search": action[1]} if action[1] else None)
    if kind == "messages":
        return http.get("/v1/messages", params={"role": action[1]} if action[1] else None)
    if kind == "neighbourhood":
        return http.get("/v1/entities/neighbourhood", params={"name": action[1], "hops": action[2]})
    if kind == "merge":
        return http.post("/v1/entities/merges", json={"alias": action[1], "into": action[2]})
    return http.post("/v1/erasures", json={"subject": action[1]})


def everything(server: LocalServer, project: str) -> list[list[Any]]:
    """What a project holds, read from the server's database file."""
    db = sqlite3.connect(server.data_dir / "taisce.sqlite3", timeout=30)
    try:
        return [
            sorted(db.execute(f"SELECT * FROM {table} WHERE project = ?", (project,)).fetchall())
            for table in ("facts", "messages", "passages", "entities", "aliases")
        ]
    finally:
        db.close()


def test_no_http_answer_holds_another_projects_memory(api: LocalServer) -> None:
    seen_own: list[bool] = []

    @settings(
        max_examples=20,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(data=st.data(), steps=st.lists(actions, min_size=3, max_size=8))
    def check(data: st.DataObject, steps: list[tuple[int, tuple[Any, ...]]]) -> None:
        run = uuid.uuid4().hex[:8]
        tokens = [f"Tok{run}x{i}q" for i in range(PROJECTS)]
        projects = [f"iso-{run}-{i}" for i in range(PROJECTS)]
        clients = [api.client(api.new_credential(p)) for p in projects]
        try:
            for http, token in zip(clients, tokens, strict=True):
                held = data.draw(memory_of(token))
                assert http.post("/v1/facts", json={"facts": held["facts"]}).status_code == 201
                if held["messages"]:
                    r = http.post("/v1/messages", json={"messages": held["messages"]})
                    assert r.status_code == 202, r.text
            for index, action in steps:
                others = [i for i in range(PROJECTS) if i != index]
                before = {i: everything(api, projects[i]) for i in others}
                r = request(clients[index], action)
                assert r.status_code < 500, r.text
                leaked = set(TOKEN.findall(r.text)) - {tokens[index]}
                assert not leaked, f"{action[0]} in project {index} answered with {leaked}"
                if action[0] in ("recall", "facts", "entities", "messages", "neighbourhood"):
                    seen_own.append(tokens[index] in r.text)
                assert {i: everything(api, projects[i]) for i in others} == before
        finally:
            for http in clients:
                http.close()

    check()
    # Not vacuous: answers did carry their own project's memory.
    assert sum(seen_own) >= max(1, len(seen_own) // 10), (sum(seen_own), len(seen_own))
