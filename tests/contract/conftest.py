"""The stores the contract suite runs against.

A factory opens the store kept at `place` (a fresh temporary directory per test),
creating it when new; opening the same place again must reach the same data. Every
test uses project names and ids of its own, so a backend whose data lives outside
`place` (a shared table) can run the suite too.

To run the suite against another adapter, add one line to `STORES`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.adapters.embedders import make_embedder
from taisce.adapters.sqlite.store import SqliteStore
from taisce.adapters.sqlite.vectors import SqliteVectorIndex
from taisce.domain.controls import Limits
from taisce.domain.recall import Semantic
from taisce.service.memory import Memory
from tests.moto_server import MotoDynamoDb, moto_dynamodb, shared_moto  # noqa: F401 - a session fixture

StoreFactory = Callable[[Path], Any]


def sqlite_store(place: Path) -> SqliteStore:
    return SqliteStore(place / "t.sqlite3")


def dynamodb_store(place: Path) -> DynamoDbStore:
    """The session's one table on moto's server (over HTTP): every test shares it."""
    return shared_moto().store()


# (name, factory) for every Store/CredentialStore adapter.
STORES: list[tuple[str, StoreFactory]] = [
    ("sqlite", sqlite_store),
    ("dynamodb", dynamodb_store),
]


def close(store: Any) -> None:
    closer = getattr(store, "close", None)
    if closer is not None:
        closer()


@pytest.fixture(params=[factory for _, factory in STORES], ids=[name for name, _ in STORES])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Any]]:
    """Opens (or re-opens) the store of this test; every store opened is closed after."""
    factory: StoreFactory = request.param
    opened: list[Any] = []

    def _open() -> Any:
        store = factory(tmp_path)
        opened.append(store)
        return store

    yield _open
    for store in reversed(opened):
        close(store)


@pytest.fixture
def store(open_store: Callable[[], Any]) -> Any:
    return open_store()


@pytest.fixture
def moto() -> MotoDynamoDb:
    """The session's moto server (tests/moto_server.py)."""
    return shared_moto()


@pytest.fixture
def dynamo(moto: MotoDynamoDb) -> Iterator[DynamoDbStore]:
    """A store with a client of its own, so event hooks stay within the test; its
    reads all go through the client, so the hooks see every call (the contract suite's
    store sends the recall's reads directly: adapters/dynamodb/reads.py)."""
    store = DynamoDbStore(moto.table, client=moto.client(), direct_reads=False)
    yield store
    store.client.close()


@pytest.fixture(scope="session")
def local_embedder() -> Any:
    """The real local model, loaded once for the session's ranking tests."""
    return make_embedder("local")


@pytest.fixture
def semantic_memory(store: Any, local_embedder: Any, tmp_path: Path) -> Iterator[Memory]:
    """A Memory on this test's store with the local model and an embedded vector index."""
    index = SqliteVectorIndex(tmp_path / "vectors.sqlite3", local_embedder.dimensions)
    yield Memory(store, Limits(), semantic=Semantic(local_embedder, index))
    index.close()
