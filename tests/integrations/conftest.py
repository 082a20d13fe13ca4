"""One `taisce serve` (embedded store, local embeddings, so passages are recalled) for
the framework integrations, shared by the session, and a guard that keeps them offline.

Each module writes into a project of its own; `memory` stores the same small memory in
it: two facts Atlas's question reaches at hop 2, and a message recalled as passages.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from taisce_client import AsyncClient, Client, NewFact, NewMessage

from tests.server import LocalServer, start_server, wait_for_worker

FACTS = [
    NewFact("Atlas", "works at", "Acme Corp", "user", quote="I work at Acme Corp"),
    NewFact("Acme Corp", "is based in", "Dublin", "user"),
]
BEES = NewMessage("user", "Orla keeps bees in Galway since 2019.", id="bees-1", source="chat:1")


@dataclass(frozen=True)
class Memory:
    """A project on the integrations' server, with the memory above stored in it."""

    url: str
    secret: str

    def client(self) -> Client:
        return Client(self.url, self.secret)

    def async_client(self) -> AsyncClient:
        return AsyncClient(self.url, self.secret)


@pytest.fixture(scope="session")
def integrations_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    running = start_server(
        Path(tmp_path_factory.mktemp("integrations")), {"TAISCE_EMBEDDINGS": "local"}
    )
    yield running
    running.stop()


@pytest.fixture(scope="module")
def memory(integrations_server: LocalServer, request: pytest.FixtureRequest) -> Memory:
    secret = integrations_server.new_credential(f"integrations-{request.module.__name__}")
    with Client(integrations_server.url, secret) as client:
        client.store_facts(FACTS)
        client.store_messages([BEES])
    with integrations_server.client(secret) as http:
        wait_for_worker(http, message="the passages were not indexed in time")
    return Memory(integrations_server.url, secret)


def _loopback(address: Any) -> bool:
    host = address[0] if isinstance(address, tuple) else address
    if not isinstance(host, str):
        return True  # a Unix socket
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any connection beyond this machine fails the test: no framework may download a
    model, a tokenizer or data, or call a hosted model, while it runs."""
    connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address):
            raise AssertionError(f"a connection beyond this machine was attempted: {address}")
        return connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def settle(client: Client, seconds: float = 60) -> None:
    """Wait until the server's worker has indexed what was stored (passages)."""
    deadline = time.monotonic() + seconds
    while client.status().work_pending:
        assert time.monotonic() < deadline, "the worker did not finish in time"
        time.sleep(0.1)
