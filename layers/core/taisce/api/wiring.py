"""The one place that picks adapters from settings. Built lazily on the first
request (cold start), never at import, and reused while the process lives."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..adapters.embedders import make_embedder
from ..adapters.sqlite_store import SqliteStore
from ..adapters.sqlite_vectors import SqliteVectorIndex
from ..domain.memory import Memory
from ..domain.recall import Semantic
from ..ports import CredentialStore
from ..settings import Settings, SettingsError, load_settings

if TYPE_CHECKING:
    from ..adapters.dynamodb_store import DynamoDbStore


@dataclass(frozen=True)
class Services:
    settings: Settings
    memory: Memory
    credentials: CredentialStore


def open_semantic(settings: Settings) -> Semantic | None:
    """The embedding model and vector index, or None when embeddings are off."""
    if settings.embeddings == "none":
        return None
    if settings.store != "embedded":
        # The OpenSearch index that serves vectors beside DynamoDB is not built yet.
        raise SettingsError(
            "invalid setting: TAISCE_EMBEDDINGS must be none with TAISCE_STORE="
            f"{settings.store} until its vector index exists"
        )
    embedder = make_embedder(settings.embeddings)
    if embedder is None:
        return None
    index = SqliteVectorIndex(settings.sqlite_path, embedder.dimensions)
    return Semantic(embedder=embedder, index=index)


def open_store(settings: Settings) -> SqliteStore | DynamoDbStore:
    """The Store (and CredentialStore) the settings name."""
    if settings.store == "dynamodb":
        from ..adapters.dynamodb_store import DynamoDbStore

        return DynamoDbStore(
            settings.dynamodb_table, endpoint_url=settings.dynamodb_endpoint or None
        )
    return SqliteStore(settings.sqlite_path, mark_vectors=settings.embeddings != "none")


def build_services(settings: Settings) -> Services:
    store = open_store(settings)
    memory = Memory(store, settings.limits, semantic=open_semantic(settings))
    return Services(settings=settings, memory=memory, credentials=store)


@functools.cache
def services() -> Services:
    return build_services(load_settings())
