"""The documents of the vector index: its mapping, what a search reads back, and how a
hit's score and fields are read.

Each document carries `project`, `kind`, `item_id` and `role` as keyword fields, the
item's `text` (BM25, english analyzer) and its `vector` (knn_vector, HNSW on faiss,
`innerproduct`: vectors are unit length, so it is the cosine), with a `written_at`
stamp so that a search keeps only the newest copy of an item (see index.py).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, Protocol

from ...domain.model import Hit
from ...domain.ports.vectors import VectorIndexError


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


def fields(kind: str) -> list[str]:
    """What a search reads of each hit: a passage's storing position and message time
    too (the neighbour signal and the asked time of recall step 4 need them, and they
    cost no other request)."""
    if kind == "passage":
        return ["item_id", "written_at", "position", "occurred_at"]
    return ["item_id", "written_at"]


def whole(value: Any) -> int:
    """A stored position: a whole number (JSON may hand it back as 7 or 7.0)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise ValueError("position")
    return int(value)


def cosine(score: float) -> float:
    """The inner product back from faiss `innerproduct`'s OpenSearch score.

    faiss reports d = -(x . y); OpenSearch scores 1 - d when d < 0, else 1 / (1 + d).
    """
    return score - 1.0 if score >= 1.0 else 1.0 - 1.0 / score


def newest_hits(raw: list[dict[str, Any]], k: int, score: Callable[[float], float]) -> list[Hit]:
    """Newest copy of each item, best first, ties by id, at most k."""
    best: dict[str, tuple[int, float, int | None, str | None]] = {}
    for hit in raw:
        try:
            item_id = str(hit["_source"]["item_id"])
            stamp = int(hit["_source"].get("written_at", 0))
            value = score(float(hit["_score"]))
            held = hit["_source"].get("position")
            position = None if held is None else whole(held)
            occurred = hit["_source"].get("occurred_at")
            if occurred is not None and not isinstance(occurred, str):
                raise ValueError("occurred_at")
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            raise VectorIndexError("OpenSearch search returned an unexpected response") from None
        seen = best.get(item_id)
        if seen is None or (stamp, value) > seen[:2]:
            best[item_id] = (stamp, value, position, occurred)
    hits = [Hit(item_id, value, *held) for item_id, (_, value, *held) in best.items()]
    hits.sort(key=lambda h: (-h.score, h.id))
    return hits[:k]


class DocumentIdLedger(Protocol):
    """Where the `_id`s OpenSearch assigned are kept, per (project, kind, item id), so a
    delete finds a document before a search can (see the module docstring)."""

    def document_ids(
        self, project: str, kind: str, item_ids: Collection[str]
    ) -> dict[str, list[str]]: ...

    def set_document_ids(self, project: str, kind: str, ids: Mapping[str, list[str]]) -> None:
        """Replace the recorded `_id`s of these items."""
        ...

    def drop_document_ids(self, project: str, kind: str, item_ids: Collection[str]) -> None: ...
