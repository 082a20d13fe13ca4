"""The VectorIndex port on an OpenSearch Serverless (`aoss`) VECTORSEARCH collection.

One index holds every project's and kind's items; each document carries `project`,
`kind`, `item_id` and `role` as keyword fields, the item's `text` (BM25, english
analyzer: stemming and stop words, like the embedded index's porter/FTS5 side) and its
`vector` (knn_vector, HNSW on faiss).

Choices forced or made for aoss:

- Document ids. Vector search collections reject a client-supplied `_id` on index and
  create ("Document ID is not supported in create/index operation request"), and do not
  serve `_delete_by_query`, `_update_by_query` or `_refresh`. So the service assigns
  `_id`s; our id lives in the `item_id` field. An upsert looks up the `_id`s already
  stored for its (project, kind, item ids) with one filtered search, then sends one
  `_bulk` request that deletes those documents and indexes the new ones. A delete does
  the same lookup and bulk-deletes what it found.
- Visibility. aoss makes writes searchable after its refresh interval (seconds), and
  a refresh cannot be forced, so a lookup by search can miss a document written less
  than that interval ago. With a ledger (`DocumentIdLedger`; the DynamoDB store keeps one,
  read strongly consistent), every `_id` the service assigned is recorded from the
  `_bulk` answer, and deletes and replacements remove the ledger's `_id`s as well as
  what the search finds: an erasure right after indexing deletes the new document by
  its `_id` instead of missing it. Without a ledger (or for a document whose ledger
  write was lost to a crash right after `_bulk`), documents carry a `written_at` stamp,
  a search keeps only the newest copy of an item (searches fetch twice k so that
  duplicates rarely push a real neighbour out), and the next write of that item
  removes the stale copy.
- Filtered k-NN. The `filter` inside the `knn` clause ("efficient filtering") narrows
  the graph search to one project, kind and role set while it runs, so k results come
  back whenever k matching items exist; a post-filter could return fewer or none. aoss
  serves HNSW on faiss (nmslib rejects filters; NextGen collections convert every
  knn_vector to faiss HNSW), and faiss supports `innerproduct` on every OpenSearch
  version, whereas faiss `cosinesimil` is recent. Vectors are unit length, so the inner
  product is the cosine; the OpenSearch score is mapped back to it (see `_cosine`).
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np
from opensearchpy import OpenSearch
from opensearchpy.exceptions import TransportError

from ...domain.model import Hit, Role, VectorItem, VectorKind
from ...domain.ports.vectors import VectorIndexError, VectorIndexMismatch
from ...domain.scope import partitions
from ...domain.search_text import asked_form, search_form
from .client import Action, Requests
from .documents import DocumentIdLedger, cosine, fields, index_body, newest_hits

DEFAULT_INDEX = "taisce-vectors"
# Ids per lookup search, and documents fetched per lookup (room for stale copies).
_LOOKUP_IDS = 500
_LOOKUP_SIZE = 10_000
# Searches fetch this many times k, so that stale copies of an item cannot crowd out
# a real neighbour, and ties at the k-th place are broken by id here.
_FETCH_FACTOR = 2
_MAX_WINDOW = 10_000
_WORD = re.compile(r"\w+")


def _stored_vector(hit: Any) -> tuple[str, int, list[float]]:
    """(item id, written_at, vector) of a hit whose `_source` holds them."""
    try:
        source = hit["_source"]
        return str(source["item_id"]), int(source.get("written_at", 0)), list(source["vector"])
    except (KeyError, TypeError, ValueError):
        raise VectorIndexError("OpenSearch vector read returned an unexpected response") from None


# Models whose index is named for its dimensions alone (they were first, and their
# dimensions differ: 384 MiniLM, 1,024 Titan). Another model of the same dimensions
# makes vectors that do not compare with theirs, so its index carries its name too.
NAMED_BY_DIMENSIONS = ("local", "bedrock")


def index_for(dimensions: int, model: str = "local") -> str:
    """The index a deploy uses unless told another: named for its vectors' dimensions,
    since an index keeps the dimension it was created with, and for the model (its
    TAISCE_EMBEDDINGS) unless it is one of the first two: multilingual-e5 has MiniLM's
    384 dimensions, and a switch from one to the other must not mix their vectors."""
    if model in NAMED_BY_DIMENSIONS:
        return f"{DEFAULT_INDEX}-{dimensions}"
    return f"{DEFAULT_INDEX}-{model}-{dimensions}"


class OpenSearchVectorIndex:
    def __init__(
        self,
        client: OpenSearch,
        index_name: str = DEFAULT_INDEX,
        dimensions: int = 384,
        *,
        max_attempts: int = 4,
        base_delay: float = 0.2,
        max_delay: float = 5.0,
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[float, float], float] = random.uniform,
        clock: Callable[[], int] = time.time_ns,
        ledger: DocumentIdLedger | None = None,
    ) -> None:
        self.client = client
        self.ledger = ledger
        self.index_name = index_name
        self.dimensions = dimensions
        self._clock = clock
        self._requests = Requests(
            client, index_name, max(1, max_attempts), base_delay, max_delay, sleep, jitter
        )

    def _vector(self, vector: Sequence[float]) -> list[float]:
        """The vector as float32 values (what knn_vector stores), each written as its
        shortest float32 repr: 0.6, not 0.6000000238418579, which halves the JSON."""
        array = np.asarray(vector, dtype=np.float32)
        if array.shape != (self.dimensions,):
            raise VectorIndexError(f"a vector must have {self.dimensions} dimensions")
        if not np.isfinite(array).all():
            raise VectorIndexError("a vector must be finite")
        return [float(str(x)) for x in array]

    @staticmethod
    def _scope(project: str, kind: str) -> list[dict[str, Any]]:
        return [{"term": {"project": project}}, {"term": {"kind": kind}}]

    @staticmethod
    def _seen(project: str, kind: str) -> list[dict[str, Any]]:
        """A read's filter: the shared partition and the request's user's (domain/scope.py)
        in the k-NN query's filter, so no other user's document is ever scored."""
        parts = partitions(project)
        if len(parts) == 1:
            return [{"term": {"project": project}}, {"term": {"kind": kind}}]
        return [{"terms": {"project": list(parts)}}, {"term": {"kind": kind}}]

    def _stored(self, project: str, kind: str, ids: list[str]) -> list[tuple[str, str]]:
        """(document _id, item id) of every stored copy of these items."""
        found: list[tuple[str, str]] = []
        for start in range(0, len(ids), _LOOKUP_IDS):
            chunk = ids[start : start + _LOOKUP_IDS]
            body = {
                "size": _LOOKUP_SIZE,
                "_source": ["item_id"],
                "query": {
                    "bool": {"filter": [*self._scope(project, kind), {"terms": {"item_id": chunk}}]}
                },
            }
            for hit in self._requests.search("lookup", body):
                try:
                    found.append((str(hit["_id"]), str(hit["_source"]["item_id"])))
                except (KeyError, TypeError):
                    raise VectorIndexError(
                        "OpenSearch lookup returned an unexpected response"
                    ) from None
        return found

    # -- the port ----------------------------------------------------------------

    def ensure_index(self) -> bool:
        """Create the index with its mapping if it is missing; True if it was created.
        An index already there must hold vectors of this model's dimensions: one made
        for another model would refuse every write and search, so it is refused here,
        before the worker's first pass (VectorIndexMismatch)."""
        result = self._requests.call(
            "index creation",
            lambda: self.client.indices.create(
                index=self.index_name, body=index_body(self.dimensions)
            ),
            tolerate=("resource_already_exists_exception",),
        )
        if not isinstance(result, TransportError):
            return True
        found = self._stored_dimension()
        if found != self.dimensions:
            raise VectorIndexMismatch(
                f"the OpenSearch index {self.index_name!r} holds vectors of {found} "
                f"dimensions but the embedding model makes {self.dimensions}: set "
                f"TAISCE_OPENSEARCH_INDEX (the template's VectorIndexName) to another index, "
                f"or leave it empty for {index_for(self.dimensions)!r}, then run taisce reindex"
            )
        return False

    def _stored_dimension(self) -> int:
        """The dimension of the existing index's `vector` field, from its mapping."""
        answer = self._requests.call(
            "mapping read", lambda: self.client.indices.get_mapping(index=self.index_name)
        )
        try:
            (mapping,) = answer.values()
            return int(mapping["mappings"]["properties"]["vector"]["dimension"])
        except (AttributeError, KeyError, TypeError, ValueError):
            raise VectorIndexError(
                f"OpenSearch index {self.index_name!r} has no knn_vector mapping to check"
            ) from None

    def upsert(self, project: str, kind: VectorKind, items: Sequence[VectorItem]) -> None:
        if not items:
            return
        latest = {item.id: item for item in items}  # the last of repeated ids wins
        vectors = {item_id: self._vector(item.vector) for item_id, item in latest.items()}
        stored = self._known(project, kind, list(latest))
        written_at = self._clock() // 1000  # microseconds
        actions: list[Action] = [
            ({"delete": {"_id": doc_id}}, None, item_id) for doc_id, item_id in stored
        ]
        for item_id, item in latest.items():
            source: dict[str, Any] = {
                "project": project,
                "kind": kind,
                "item_id": item_id,
                "vector": vectors[item_id],
                "written_at": written_at,
            }
            if item.role is not None:
                source["role"] = item.role
            if item.text:
                source["text"] = search_form(item.text)
            if item.position is not None:
                source["position"] = item.position
            if item.occurred_at is not None:
                source["occurred_at"] = item.occurred_at
            actions.append(({"index": {}}, source, item_id))
        assigned = self._requests.bulk("upsert", actions)
        if self.ledger is not None:
            self.ledger.set_document_ids(project, kind, assigned)

    def purge(self) -> None:
        """Nothing to do: a deleted document is gone from every search at once, and the
        service merges its segments itself."""

    def delete(self, project: str, kind: VectorKind, ids: Collection[str]) -> None:
        """Delete every copy of these items: by the `_id`s the ledger recorded (found
        even within the refresh interval) and those a search finds."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return
        stored = self._known(project, kind, wanted)
        if stored:
            self._requests.bulk(
                "delete",
                [({"delete": {"_id": doc_id}}, None, item_id) for doc_id, item_id in stored],
            )
        if self.ledger is not None:
            self.ledger.drop_document_ids(project, kind, wanted)

    def _known(self, project: str, kind: str, ids: list[str]) -> list[tuple[str, str]]:
        """(document _id, item id) of every copy: the ledger's, then the search's."""
        found: dict[str, str] = {}
        if self.ledger is not None:
            for item_id, doc_ids in self.ledger.document_ids(project, kind, ids).items():
                found.update(dict.fromkeys(doc_ids, item_id))
        for doc_id, item_id in self._stored(project, kind, ids):
            found.setdefault(doc_id, item_id)
        return list(found.items())

    def _filters(
        self, project: str, kind: str, roles: Collection[Role] | None
    ) -> list[dict[str, Any]]:
        filters = self._seen(project, kind)
        if roles is not None:
            filters.append({"terms": {"role": sorted(set(roles))}})
        return filters

    def search(
        self,
        project: str,
        kind: VectorKind,
        vector: Sequence[float],
        k: int,
        roles: Collection[Role] | None = None,
    ) -> list[Hit]:
        query = self._vector(vector)
        if k <= 0 or (roles is not None and not roles):
            return []
        fetch = min(_MAX_WINDOW, k * _FETCH_FACTOR)
        body = {
            "size": fetch,
            "_source": fields(kind),
            "query": {
                "knn": {
                    "vector": {
                        "vector": query,
                        "k": fetch,
                        "filter": {"bool": {"filter": self._filters(project, kind, roles)}},
                    }
                }
            },
        }
        return newest_hits(self._requests.search("search", body), k, cosine)

    def vectors(
        self, project: str, kind: VectorKind, ids: Collection[str]
    ) -> dict[str, list[float]]:
        """Each item's stored vector, from its newest copy: one filtered search per
        _LOOKUP_IDS items, the vector read from `_source`."""
        wanted = sorted(set(ids))
        found: dict[str, tuple[int, list[float]]] = {}
        for start in range(0, len(wanted), _LOOKUP_IDS):
            chunk = wanted[start : start + _LOOKUP_IDS]
            filters = [*self._seen(project, kind), {"terms": {"item_id": chunk}}]
            body = {
                "size": min(_MAX_WINDOW, len(chunk) * _FETCH_FACTOR),
                "_source": ["item_id", "written_at", "vector"],
                "query": {"bool": {"filter": filters}},
            }
            for hit in self._requests.search("vector read", body):
                item_id, written_at, vector = _stored_vector(hit)
                if item_id not in found or written_at > found[item_id][0]:
                    found[item_id] = (written_at, vector)
        return {item_id: vector for item_id, (_, vector) in found.items()}

    def similarities(
        self, project: str, kind: VectorKind, vector: Sequence[float], ids: Collection[str]
    ) -> dict[str, float]:
        query = self._vector(vector)
        wanted = sorted(set(ids))
        scores: dict[str, float] = {}
        # Filtered k-NN over exactly these items: with a filter this small the engine
        # scores every one of them (exact search), so each with a vector comes back.
        for start in range(0, len(wanted), _LOOKUP_IDS):
            chunk = wanted[start : start + _LOOKUP_IDS]
            fetch = min(_MAX_WINDOW, len(chunk) * _FETCH_FACTOR)
            filters = [*self._seen(project, kind), {"terms": {"item_id": chunk}}]
            body = {
                "size": fetch,
                "_source": ["item_id", "written_at"],
                "query": {
                    "knn": {
                        "vector": {
                            "vector": query,
                            "k": fetch,
                            "filter": {"bool": {"filter": filters}},
                        }
                    }
                },
            }
            for hit in newest_hits(self._requests.search("similarities", body), fetch, cosine):
                scores[hit.id] = hit.score
        return scores

    def search_text(
        self,
        project: str,
        kind: VectorKind,
        text: str,
        k: int,
        roles: Collection[Role] | None = None,
    ) -> list[Hit]:
        if k <= 0 or (roles is not None and not roles) or not _WORD.search(text):
            return []
        fetch = min(_MAX_WINDOW, k * _FETCH_FACTOR)
        body = {
            "size": fetch,
            "_source": fields(kind),
            "query": {
                "bool": {
                    "must": [{"match": {"text": {"query": asked_form(text)}}}],
                    "filter": self._filters(project, kind, roles),
                }
            },
        }
        return newest_hits(self._requests.search("text search", body), k, lambda s: s)
