"""Servers with the fixture's memory for the adapters' runners, shared by the session.

Suites with the same server settings share one server (each suite has its own
project), and memory is loaded through the Python client itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from taisce_client import Client

from tests.recall_fixture import SUITES, Memory, load, settle
from tests.server import LocalServer, start_server


@dataclass(frozen=True)
class Suite:
    """A suite's memory loaded into a project of its own on a running server."""

    url: str
    secret: str
    memory: Memory


def _load(client: Client, memory: dict[str, Any]) -> None:
    def store(kind: str, batch: list[dict[str, Any]]) -> None:
        stored = client.store_facts(batch) if kind == "facts" else client.store_messages(batch)
        assert stored == [item["id"] for item in batch]

    load(memory, store, client.delete_fact)


class FixtureServers:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.servers: dict[tuple[tuple[str, str], ...], LocalServer] = {}
        self.suites: dict[str, Suite] = {}

    def suite(self, name: str) -> Suite:
        if name not in self.suites:
            settings = tuple(sorted(SUITES[name]["server"].items()))
            if settings not in self.servers:
                folder = self.base / f"server-{len(self.servers)}"
                self.servers[settings] = start_server(folder, dict(settings))
            server = self.servers[settings]
            memory = SUITES[name]["memory"]
            secret = server.new_credential(f"clients-{name}")
            with Client(server.url, secret) as client:
                _load(client, memory)
                if "other_project" in memory:
                    other = server.new_credential(f"clients-{name}-other")
                    with Client(server.url, other) as elsewhere:
                        _load(elsewhere, memory["other_project"])
                        settle(lambda: elsewhere.status().work_pending)
                settle(lambda: client.status().work_pending)
            self.suites[name] = Suite(server.url, secret, Memory.of(SUITES[name]))
        return self.suites[name]

    def stop(self) -> None:
        for server in self.servers.values():
            server.stop()


@pytest.fixture(scope="session")
def fixture_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixtureServers]:
    running = FixtureServers(Path(tmp_path_factory.mktemp("clients-fixture")))
    yield running
    running.stop()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
