"""Vectors: the embedding model and the nearest-neighbour index."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

from ..model import Hit, Role, VectorItem, VectorKind


class EmbeddingError(Exception):
    """The embedding model failed (unreachable, throttled, malformed answer)."""


class VectorIndexError(Exception):
    """The vector index failed to read or write."""


class VectorIndexMismatch(VectorIndexError):
    """The vector index exists but was made for vectors of other dimensions."""


class Embedder(Protocol):
    """A text embedding model. Vectors are unit length, so a dot product is the cosine."""

    name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order, from as few model calls as the model allows.

        Raises EmbeddingError when the model fails.
        """
        ...


def embed_questions(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    """Questions' vectors. A model trained with two sides (e5: "query: " for what is
    asked, "passage: " for what is searched) has `embed_queries` for the asking side;
    `embed` is the searched side, which every stored text goes through. A model with one
    side (MiniLM, Titan) embeds questions as anything else."""
    queries = getattr(embedder, "embed_queries", None)
    return queries(texts) if callable(queries) else embedder.embed(texts)


class VectorIndex(Protocol):
    """Nearest neighbours by cosine, per project and kind, filtered by role.

    Raises VectorIndexError when the index fails.
    """

    def upsert(self, project: str, kind: VectorKind, items: Sequence[VectorItem]) -> None: ...

    def search(
        self,
        project: str,
        kind: VectorKind,
        vector: Sequence[float],
        k: int,
        roles: Collection[Role] | None = None,
    ) -> list[Hit]:
        """The k nearest items, best first (ties by id); only those of `roles` if given."""
        ...

    def search_text(
        self,
        project: str,
        kind: VectorKind,
        text: str,
        k: int,
        roles: Collection[Role] | None = None,
    ) -> list[Hit]:
        """The k items whose text best matches `text` by BM25, best first."""
        ...

    def similarities(
        self, project: str, kind: VectorKind, vector: Sequence[float], ids: Collection[str]
    ) -> dict[str, float]:
        """The cosine with `vector` of each of these items that has a vector (items
        without one are left out): scores a given set, unlike `search`, so that what the
        caller may not see never takes a place."""
        ...

    def vectors(
        self, project: str, kind: VectorKind, ids: Collection[str]
    ) -> dict[str, list[float]]:
        """The stored vector of each of these items that has one (others are left out),
        so a caller that needs an item's vector need not ask the model again."""
        ...

    def delete(self, project: str, kind: VectorKind, ids: Collection[str]) -> None: ...

    def purge(self) -> None:
        """Drop what deleted items leave behind in storage the index keeps itself (the
        embedded index's full-text segments and its WAL); nothing where a service
        manages its own storage."""
        ...
