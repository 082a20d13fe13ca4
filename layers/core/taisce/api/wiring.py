"""The one place that picks adapters from settings. Built lazily on the first
request (cold start), never at import, and reused while the process lives."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..adapters.embedders import make_embedder
from ..adapters.extractors import BEDROCK_CALL_ATTEMPTS, make_extractor
from ..domain.floors import floors_of
from ..domain.ports.credentials import CredentialStore
from ..domain.ports.extractor import Extractor
from ..domain.ports.queue import WorkQueue
from ..domain.ports.vectors import Embedder, VectorIndex
from ..domain.semantic import Semantic
from ..service.memory import EXTRACTION_RETRY_WAIT, Memory
from ..service.work import extraction_seconds
from ..settings import Settings, SettingsError, load_settings
from .observe import spans, trace_direct_calls, traced, traced_semantic

# Each store's adapter is imported where the settings pick it: on Lambda the embedded
# store's (and numpy, which its vectors use) would add a third of a handler's cold import.
if TYPE_CHECKING:
    from ..adapters.dynamodb.store import DynamoDbStore
    from ..adapters.sqlite.store import SqliteStore
    from ..adapters.sqlite.vectors import SqliteVectorIndex

logger = logging.getLogger(__name__)


def _nothing() -> None:
    return None


@dataclass(frozen=True)
class Services:
    settings: Settings
    memory: Memory
    credentials: CredentialStore
    # Where the API tells the worker about new work (None: the worker polls the store).
    queue: WorkQueue | None = None
    # What the worker settles before its first pass, never a request (worker_setup).
    prepare_worker: Callable[[], object] = _nothing
    # The memory table's DynamoDB client, built on the first call (None with the
    # embedded store): the worker keeps its idempotency records in that table.
    table_client: Callable[[], Any] | None = None


def open_semantic(settings: Settings, store: object = None) -> Semantic | None:
    """The embedding model and vector index, or None when embeddings are off."""
    if settings.embeddings == "none":
        return None
    if settings.store == "dynamodb":
        return open_opensearch_semantic(settings, store)
    embedder = make_embedder(settings.embeddings)
    if embedder is None:
        return None
    from ..adapters.sqlite.store import SqliteStore
    from ..adapters.sqlite.vectors import SqliteVectorIndex

    index = SqliteVectorIndex(settings.sqlite_path, embedder.dimensions)
    if isinstance(store, SqliteStore):
        _adopt_model(store, index, f"{embedder.name}/{embedder.dimensions}")
    return _semantic(settings, embedder, index, local_index=True)


def _adopt_model(store: SqliteStore, index: SqliteVectorIndex, model: str) -> None:
    """Vectors of another model (TAISCE_EMBEDDINGS changed) do not compare with this
    one's: everything is marked for the worker to embed again (as `taisce reindex`
    does), then the old vectors are dropped. Marking first, so that a crash in between
    leaves work to redo, never an item without a vector and without a mark."""
    recorded = index.recorded_model()
    if recorded == model:
        return
    if recorded is None:
        index.adopt_model(model)
        return
    marked = store.mark_everything()
    dropped = index.adopt_model(model)
    logger.warning(
        "embedding model changed from %s to %s: %s vectors dropped, %s items marked to embed again",
        recorded,
        model,
        dropped,
        marked,
    )


def open_opensearch_semantic(settings: Settings, store: object = None) -> Semantic | None:
    """Beside DynamoDB, vectors live in an OpenSearch Serverless collection; the store
    keeps the document ids it assigns, so deletes find new documents by id."""
    if not settings.opensearch_endpoint or not settings.region:
        raise SettingsError(
            "invalid setting: TAISCE_OPENSEARCH_ENDPOINT and TAISCE_REGION are needed with "
            f"TAISCE_STORE=dynamodb and TAISCE_EMBEDDINGS={settings.embeddings}"
        )
    embedder = make_embedder(settings.embeddings)
    if embedder is None:
        return None
    from ..adapters.opensearch.client import make_client
    from ..adapters.opensearch.index import OpenSearchVectorIndex, index_for

    client = make_client(settings.opensearch_endpoint, settings.region)
    from ..adapters.dynamodb.store import DynamoDbStore

    ledger = store if isinstance(store, DynamoDbStore) else None
    # Two attempts with short backoff: four, with the client's 10 s each, outlived a
    # recall's function (a recall also stops waiting at its deadline: domain/deadline.py).
    index = OpenSearchVectorIndex(
        client,
        settings.opensearch_index or index_for(embedder.dimensions, settings.embeddings),
        embedder.dimensions,
        ledger=ledger,
        max_attempts=2,
        max_delay=1.0,
    )
    return _semantic(settings, embedder, index)


def _semantic(
    settings: Settings, embedder: Embedder, index: VectorIndex, *, local_index: bool = False
) -> Semantic:
    remote = _across_network(settings)
    # A model across the network is never waited on by storing; a local one is, unless
    # TAISCE_EMBED_ON_WRITE=false leaves it to the worker.
    inline = settings.embed_on_write and not remote
    return Semantic(
        embedder=embedder,
        index=index,
        early_vector=remote,
        embed_on_write=inline,
        any_language=bool(getattr(embedder, "any_language", False)),
        floors=floors_of(embedder),
        local_model=not remote,
        local_index=local_index,
    )


def _across_network(settings: Settings) -> bool:
    """Whether the model is a network call (Bedrock): a recall then asks it for the
    question's vector beside the store's first reads (domain/question_vector.py, Question)."""
    return settings.embeddings == "bedrock"


def open_store(settings: Settings) -> SqliteStore | DynamoDbStore:
    """The Store (and CredentialStore) the settings name."""
    if settings.store == "dynamodb":
        from ..adapters.dynamodb.store import DynamoDbStore

        return DynamoDbStore(
            settings.dynamodb_table,
            endpoint_url=settings.dynamodb_endpoint or None,
            mark_extractions=settings.extractor != "none",
            mark_vectors=settings.embeddings != "none",
        )
    from ..adapters.sqlite.store import SqliteStore

    return SqliteStore(
        settings.sqlite_path,
        mark_vectors=settings.embeddings != "none",
        mark_extractions=settings.extractor != "none",
    )


def open_extractor(settings: Settings) -> Extractor | None:
    """The extraction model, or None when extraction is off (TAISCE_EXTRACTOR=none)."""
    if settings.extractor == "none":
        return None
    if not (settings.extractor_model or "").strip():
        raise SettingsError(
            f"invalid setting: TAISCE_EXTRACTOR_MODEL must be set with "
            f"TAISCE_EXTRACTOR={settings.extractor}"
        )
    if settings.extractor == "openai" and settings.extractor_base_url is None:
        raise SettingsError(
            "invalid setting: TAISCE_EXTRACTOR_BASE_URL must be set with TAISCE_EXTRACTOR=openai"
        )
    key = settings.extractor_api_key
    return make_extractor(
        settings.extractor,
        model=settings.extractor_model,
        base_url=str(settings.extractor_base_url) if settings.extractor_base_url else None,
        api_key=key.get_secret_value() if key else None,
        timeout=settings.extractor_timeout,
        max_tokens=settings.extractor_max_tokens,
    )


def summary_model(settings: Settings, extractor: Extractor | None) -> Extractor | None:
    """The model that writes report summaries: the extraction model, unless
    TAISCE_REPORT_SUMMARIES=statements (or no extractor is configured)."""
    if settings.report_summaries == "llm" and extractor is None:
        raise SettingsError(
            "invalid setting: TAISCE_REPORT_SUMMARIES=llm needs TAISCE_EXTRACTOR "
            "(bedrock or openai): summaries are written by the extraction model"
        )
    return None if settings.report_summaries == "statements" else extractor


def worker_setup(settings: Settings, semantic: Semantic | None) -> Callable[[], object]:
    """What the worker settles before its first pass: OpenSearch's index with its
    mapping (the worker is the only writer of vectors, so no request waits on it). The
    embedded index makes its tables when it is opened."""
    if semantic is None or settings.store != "dynamodb":
        return _nothing
    from ..adapters.opensearch.index import OpenSearchVectorIndex

    index = semantic.index
    return index.ensure_index if isinstance(index, OpenSearchVectorIndex) else _nothing


def extraction_worst_case(settings: Settings) -> float:
    """The longest one extraction can take with these settings (service/work.py,
    `Budget`): Bedrock's client makes BEDROCK_CALL_ATTEMPTS calls per attempt."""
    calls = BEDROCK_CALL_ATTEMPTS if settings.extractor == "bedrock" else 1
    return extraction_seconds(settings.extractor_timeout, calls, EXTRACTION_RETRY_WAIT)


def build_services(settings: Settings) -> Services:
    extractor = open_extractor(settings)
    store = open_store(settings)
    semantic = open_semantic(settings, store)
    # While tracing (on Lambda), each call of the store, the vector index and the model,
    # each HTTP call they send and each recall step is a subsegment (the worker's setup
    # keeps the index as is).
    trace_direct_calls()
    memory = Memory(
        traced(store, "store"),
        settings.limits,
        semantic=traced_semantic(semantic),
        extractor=extractor,
        summary_model=summary_model(settings, extractor),
        spans=spans(),
        late_writes=settings.write_seconds,
    )
    return Services(
        settings=settings,
        memory=memory,
        credentials=store,
        queue=open_queue(settings),
        prepare_worker=worker_setup(settings, semantic),
        table_client=_table_client(store),
    )


def _table_client(store: Any) -> Callable[[], Any] | None:
    """The DynamoDB store's client, built on the first call; None with the embedded
    store (which has none). Read off the class: reading it off the store builds it."""
    if not hasattr(type(store), "client"):
        return None
    return lambda: store.client


def open_queue(settings: Settings) -> WorkQueue | None:
    if not settings.work_queue_url:
        return None
    from ..adapters.sqs_queue import SqsWorkQueue

    return SqsWorkQueue(settings.work_queue_url, endpoint_url=settings.sqs_endpoint or None)


@functools.cache
def services() -> Services:
    return build_services(load_settings())
