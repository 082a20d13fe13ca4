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
  than that interval ago. With a ledger (`DocumentIds`; the DynamoDB store keeps one,
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
- Retries. Throttling (429) and server errors (5xx, lost connections) are retried with
  full-jitter exponential backoff a bounded number of times, bulk items included; then,
  and on any other failure, VectorIndexError. Error messages name the operation, the
  HTTP status, the error type and item ids, never a reason string (OpenSearch quotes
  field values in some) nor any stored text or vector.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
from opensearchpy import OpenSearch, Urllib3AWSV4SignerAuth, Urllib3HttpConnection
from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError
from opensearchpy.exceptions import OpenSearchException, TransportError

from ..domain.model import Hit, Role, VectorItem, VectorKind
from ..domain.ports.vectors import VectorIndexError

DEFAULT_INDEX = "taisce-vectors"
# Ids per lookup search, and documents fetched per lookup (room for stale copies).
_LOOKUP_IDS = 500
_LOOKUP_SIZE = 10_000
# Searches fetch this many times k, so that stale copies of an item cannot crowd out
# a real neighbour, and ties at the k-th place are broken by id here.
_FETCH_FACTOR = 2
_MAX_WINDOW = 10_000
_WORD = re.compile(r"\w+")
_ERROR_TYPE = re.compile(r"[A-Za-z_.]{1,80}")


def make_client(
    endpoint: str,
    region: str,
    *,
    credentials: Any = None,
    pool_maxsize: int = 16,
    timeout: float = 10.0,
) -> OpenSearch:
    """An opensearch-py client for an aoss collection endpoint, signed with SigV4.

    `endpoint` is the collection endpoint, with or without `https://`. Credentials come
    from boto3's default chain unless given. The transport does not retry: the adapter
    retries with backoff, which the transport's own retries lack.
    """
    host = re.sub(r"^https?://", "", endpoint.strip()).rstrip("/")
    if not host or "/" in host:
        raise ValueError(
            "endpoint must be a collection host, e.g. https://id.region.aoss.amazonaws.com"
        )
    if credentials is None:
        import boto3

        credentials = boto3.Session().get_credentials()
        if credentials is None:
            raise VectorIndexError("no AWS credentials found for OpenSearch Serverless")
    return OpenSearch(
        hosts=[{"host": host, "port": 443}],
        http_auth=Urllib3AWSV4SignerAuth(credentials, region, "aoss"),
        use_ssl=True,
        verify_certs=True,
        connection_class=Urllib3HttpConnection,
        pool_maxsize=pool_maxsize,
        timeout=timeout,
        max_retries=0,
        retry_on_status=(),
    )


def index_body(dimensions: int) -> dict[str, Any]:
    """Settings and mapping of the vector index."""
    return {
        "settings": {"index": {"knn": True}},
        "mappings": {
            "properties": {
                "project": {"type": "keyword"},
                "kind": {"type": "keyword"},
                "item_id": {"type": "keyword"},
                "role": {"type": "keyword"},
                "text": {"type": "text", "analyzer": "english"},
                "written_at": {"type": "long"},
                # A passage's message's storing position (recall's neighbour signal).
                "position": {"type": "long"},
                # Its message's time, the stored string as it was written ("" for none):
                # recall's month and day factors (a keyword gives the string back as is;
                # a date would refuse "").
                "occurred_at": {"type": "keyword"},
                "vector": {
                    "type": "knn_vector",
                    "dimension": dimensions,
                    "method": {
                        "name": "hnsw",
                        "engine": "faiss",
                        "space_type": "innerproduct",
                    },
                },
            }
        },
    }


def _fields(kind: str) -> list[str]:
    """What a search reads of each hit: a passage's storing position and message time
    too (the neighbour signal and the asked time of recall step 4 need them, and they
    cost no other request)."""
    if kind == "passage":
        return ["item_id", "written_at", "position", "occurred_at"]
    return ["item_id", "written_at"]


def _whole(value: Any) -> int:
    """A stored position: a whole number (JSON may hand it back as 7 or 7.0)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise ValueError("position")
    return int(value)


def _cosine(score: float) -> float:
    """The inner product back from faiss `innerproduct`'s OpenSearch score.

    faiss reports d = -(x . y); OpenSearch scores 1 - d when d < 0, else 1 / (1 + d).
    """
    return score - 1.0 if score >= 1.0 else 1.0 - 1.0 / score


def _error_type(exc: TransportError) -> str:
    error = exc.error
    return error if isinstance(error, str) and _ERROR_TYPE.fullmatch(error) else ""


class DocumentIds(Protocol):
    """Where the `_id`s OpenSearch assigned are kept, per (project, kind, item id), so a
    delete finds a document before a search can (see the module docstring)."""

    def document_ids(
        self, project: str, kind: str, item_ids: Collection[str]
    ) -> dict[str, list[str]]: ...

    def set_document_ids(self, project: str, kind: str, ids: Mapping[str, list[str]]) -> None:
        """Replace the recorded `_id`s of these items."""
        ...

    def drop_document_ids(self, project: str, kind: str, item_ids: Collection[str]) -> None: ...


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
        ledger: DocumentIds | None = None,
    ) -> None:
        self.client = client
        self.ledger = ledger
        self.index_name = index_name
        self.dimensions = dimensions
        self.max_attempts = max(1, max_attempts)
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._sleep = sleep
        self._jitter = jitter
        self._clock = clock

    # -- plumbing ----------------------------------------------------------------

    def _backoff(self, attempt: int) -> None:
        self._sleep(self._jitter(0.0, min(self.max_delay, self.base_delay * 2**attempt)))

    def _call(self, what: str, request: Callable[[], Any], tolerate: Collection[str] = ()) -> Any:
        """Run one request, retrying throttling and server errors with backoff.

        An error whose type is in `tolerate` is returned rather than raised.
        """
        for attempt in range(self.max_attempts):
            try:
                return request()
            except TransportError as exc:
                if tolerate and _error_type(exc) in tolerate:
                    return exc
                status = exc.status_code
                retryable = (
                    isinstance(exc, OpenSearchConnectionError)
                    or status == 429
                    or (isinstance(status, int) and status >= 500)
                )
                if retryable and attempt + 1 < self.max_attempts:
                    self._backoff(attempt)
                    continue
                detail = f"HTTP {status}" if isinstance(status, int) else type(exc).__name__
                kind = _error_type(exc)
                suffix = (
                    f" {kind}" if kind and not isinstance(exc, OpenSearchConnectionError) else ""
                )
                tried = f" after {attempt + 1} attempts" if attempt else ""
                raise VectorIndexError(
                    f"OpenSearch {what} failed{tried}: {detail}{suffix}"
                ) from None
            except OpenSearchException as exc:
                raise VectorIndexError(f"OpenSearch {what} failed: {type(exc).__name__}") from None
        raise AssertionError("unreachable")  # pragma: no cover

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

    def _search(self, what: str, body: dict[str, Any]) -> list[dict[str, Any]]:
        response = self._call(what, lambda: self.client.search(index=self.index_name, body=body))
        try:
            hits = response["hits"]["hits"]
            if not isinstance(hits, list):
                raise TypeError
            return hits
        except (KeyError, TypeError):
            raise VectorIndexError(f"OpenSearch {what} returned an unexpected response") from None

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
            for hit in self._search("lookup", body):
                try:
                    found.append((str(hit["_id"]), str(hit["_source"]["item_id"])))
                except (KeyError, TypeError):
                    raise VectorIndexError(
                        "OpenSearch lookup returned an unexpected response"
                    ) from None
        return found

    def _bulk(
        self, what: str, actions: list[tuple[dict[str, Any], dict[str, Any] | None, str]]
    ) -> dict[str, list[str]]:
        """One `_bulk` request for (action, source, item id) triples; failed items that
        were throttled or hit a server error are sent again, with backoff. Returns the
        `_id`s the service assigned to the indexed documents, by item id."""
        pending = actions
        assigned: dict[str, list[str]] = {}
        for attempt in range(self.max_attempts):
            lines: list[str] = []
            for action, source, _ in pending:
                lines.append(json.dumps(action, separators=(",", ":")))
                if source is not None:
                    lines.append(json.dumps(source, separators=(",", ":")))
            body = "\n".join(lines) + "\n"
            response = self._call(
                what, lambda body=body: self.client.bulk(body=body, index=self.index_name)
            )
            if not isinstance(response, dict):
                raise VectorIndexError(f"OpenSearch {what} returned an unexpected response")
            items = response.get("items")
            if not response.get("errors") and not isinstance(items, list):
                return assigned
            if not isinstance(items, list) or len(items) != len(pending):
                raise VectorIndexError(f"OpenSearch {what} returned an unexpected response")
            failed: list[tuple[tuple[dict[str, Any], dict[str, Any] | None, str], int, str]] = []
            for sent, item in zip(pending, items, strict=True):
                result = next(iter(item.values()), {}) if isinstance(item, dict) else {}
                error = result.get("error") if isinstance(result, dict) else None
                if error is None:
                    doc_id = result.get("_id") if isinstance(result, dict) else None
                    if "index" in sent[0] and isinstance(doc_id, str):
                        assigned.setdefault(sent[2], []).append(doc_id)
                    continue
                status = result.get("status")
                kind = error.get("type", "") if isinstance(error, dict) else ""
                failed.append((sent, status if isinstance(status, int) else 0, str(kind)))
            if not failed:
                return assigned
            retryable = all(status == 429 or status >= 500 for _, status, _ in failed)
            if retryable and attempt + 1 < self.max_attempts:
                pending = [sent for sent, _, _ in failed]
                self._backoff(attempt)
                continue
            ids = sorted({sent[2] for sent, _, _ in failed})
            kinds = sorted({kind for _, _, kind in failed if _ERROR_TYPE.fullmatch(kind)})
            raise VectorIndexError(
                f"OpenSearch {what} failed for {len(ids)} item(s): {', '.join(ids)}"
                + (f" ({', '.join(kinds)})" if kinds else "")
            )

    # -- the port ----------------------------------------------------------------

    def ensure_index(self) -> bool:
        """Create the index with its mapping if it is missing; True if it was created."""
        result = self._call(
            "index creation",
            lambda: self.client.indices.create(
                index=self.index_name, body=index_body(self.dimensions)
            ),
            tolerate=("resource_already_exists_exception",),
        )
        return not isinstance(result, TransportError)

    def upsert(self, project: str, kind: VectorKind, items: Sequence[VectorItem]) -> None:
        if not items:
            return
        latest = {item.id: item for item in items}  # the last of repeated ids wins
        vectors = {item_id: self._vector(item.vector) for item_id, item in latest.items()}
        stored = self._known(project, kind, list(latest))
        written_at = self._clock() // 1000  # microseconds
        actions: list[tuple[dict[str, Any], dict[str, Any] | None, str]] = [
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
                source["text"] = item.text
            if item.position is not None:
                source["position"] = item.position
            if item.occurred_at is not None:
                source["occurred_at"] = item.occurred_at
            actions.append(({"index": {}}, source, item_id))
        assigned = self._bulk("upsert", actions)
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
            self._bulk(
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
        filters = self._scope(project, kind)
        if roles is not None:
            filters.append({"terms": {"role": sorted(set(roles))}})
        return filters

    @staticmethod
    def _hits(raw: list[dict[str, Any]], k: int, score: Callable[[float], float]) -> list[Hit]:
        """Newest copy of each item, best first, ties by id, at most k."""
        best: dict[str, tuple[int, float, int | None, str | None]] = {}
        for hit in raw:
            try:
                item_id = str(hit["_source"]["item_id"])
                stamp = int(hit["_source"].get("written_at", 0))
                value = score(float(hit["_score"]))
                held = hit["_source"].get("position")
                position = None if held is None else _whole(held)
                occurred = hit["_source"].get("occurred_at")
                if occurred is not None and not isinstance(occurred, str):
                    raise ValueError("occurred_at")
            except (KeyError, TypeError, ValueError, ZeroDivisionError):
                raise VectorIndexError(
                    "OpenSearch search returned an unexpected response"
                ) from None
            seen = best.get(item_id)
            if seen is None or (stamp, value) > seen[:2]:
                best[item_id] = (stamp, value, position, occurred)
        hits = [Hit(item_id, value, *held) for item_id, (_, value, *held) in best.items()]
        hits.sort(key=lambda h: (-h.score, h.id))
        return hits[:k]

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
            "_source": _fields(kind),
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
        return self._hits(self._search("search", body), k, _cosine)

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
            filters = [*self._scope(project, kind), {"terms": {"item_id": chunk}}]
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
            for hit in self._hits(self._search("similarities", body), fetch, _cosine):
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
            "_source": _fields(kind),
            "query": {
                "bool": {
                    "must": [{"match": {"text": {"query": text}}}],
                    "filter": self._filters(project, kind, roles),
                }
            },
        }
        return self._hits(self._search("text search", body), k, lambda s: s)
