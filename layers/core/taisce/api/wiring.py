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
from ..ports import CredentialStore, WorkQueue
from ..settings import Settings, SettingsError, load_settings

if TYPE_CHECKING:
    from ..adapters.dynamodb_store import DynamoDbStore


@dataclass(frozen=True)
class Services:
    settings: Settings
    memory: Memory
    credentials: CredentialStore
    # Where the API tells the worker about new work (None: the worker polls the store).
    queue: WorkQueue | None = None


def open_semantic(settings: Settings) -> Semantic | None:
    """The embedding model and vector index, or None when embeddings are off."""
    if settings.embeddings == "none":
        return None
    if settings.store == "dynamodb":
        return open_opensearch_semantic(settings)
    embedder = make_embedder(settings.embeddings)
    if embedder is None:
        return None
    index = SqliteVectorIndex(settings.sqlite_path, embedder.dimensions)
    return Semantic(embedder=embedder, index=index)


def open_opensearch_semantic(settings: Settings) -> Semantic | None:
    """Beside DynamoDB, vectors live in an OpenSearch Serverless collection."""
    if not settings.opensearch_endpoint or not settings.region:
        raise SettingsError(
            "invalid setting: TAISCE_OPENSEARCH_ENDPOINT and TAISCE_REGION are needed with "
            f"TAISCE_STORE=dynamodb and TAISCE_EMBEDDINGS={settings.embeddings}"
        )
    embedder = make_embedder(settings.embeddings)
    if embedder is None:
        return None
    from ..adapters.opensearch_index import OpenSearchVectorIndex, make_client

    client = make_client(settings.opensearch_endpoint, settings.region)
    index = OpenSearchVectorIndex(client, settings.opensearch_index, embedder.dimensions)
    return Semantic(embedder=embedder, index=index)


def open_store(settings: Settings) -> SqliteStore | DynamoDbStore:
    """The Store (and CredentialStore) the settings name."""
    if settings.store == "dynamodb":
        from ..adapters.dynamodb_store import DynamoDbStore

        return DynamoDbStore(
            settings.dynamodb_table,
            endpoint_url=settings.dynamodb_endpoint or None,
            mark_vectors=settings.embeddings != "none",
        )
    return SqliteStore(settings.sqlite_path, mark_vectors=settings.embeddings != "none")


def build_services(settings: Settings) -> Services:
    store = open_store(settings)
    memory = Memory(store, settings.limits, semantic=open_semantic(settings))
    return Services(settings=settings, memory=memory, credentials=store, queue=open_queue(settings))


def open_queue(settings: Settings) -> WorkQueue | None:
    if not settings.work_queue_url:
        return None
    from ..adapters.sqs_queue import SqsWorkQueue

    return SqsWorkQueue(settings.work_queue_url, endpoint_url=settings.sqs_endpoint or None)


@functools.cache
def services() -> Services:
    return build_services(load_settings())
