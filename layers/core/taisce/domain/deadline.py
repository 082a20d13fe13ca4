"""A recall's deadline over its calls across the network: the question's vector (the
model) and the index's searches. A call still running when the time left runs out is
abandoned (it finishes in its thread, unread) and raises DeadlineExceeded, which the
recall's steps already treat as a model or index failure: the step is reported in
`degraded` and the recall answers with what the store gave, before the function's own
timeout would have ended it with a 5xx."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .model import Hit, Role, VectorKind
from .ports.vectors import Embedder, VectorIndex, embed_questions

T = TypeVar("T")


class DeadlineExceeded(Exception):
    """A call across the network outlived the recall's deadline."""


@dataclass(frozen=True)
class Deadline:
    """A point in `clock`'s time (monotonic seconds) after which no call is waited for."""

    at: float
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds)

    def remaining(self) -> float:
        return self.at - self.clock()

    def call(self, what: str, function: Callable[[], T]) -> T:
        """`function()`'s result if it ends before the deadline; else DeadlineExceeded."""
        left = self.remaining()
        if left <= 0:
            raise DeadlineExceeded(f"{what}: no time left")
        outcome: dict[str, Any] = {}
        done = threading.Event()

        def run() -> None:
            try:
                outcome["value"] = function()
            except BaseException as error:  # handed to the waiting caller
                outcome["error"] = error
            finally:
                done.set()

        # A daemon thread: one abandoned at the deadline never holds the process.
        threading.Thread(target=run, name=f"deadline-{what}", daemon=True).start()
        if not done.wait(left):
            raise DeadlineExceeded(f"{what}: past the deadline")
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]  # type: ignore[no-any-return]


class DeadlineEmbedder:
    """An embedder whose every call is bounded by the deadline."""

    def __init__(self, embedder: Embedder, deadline: Deadline) -> None:
        self._embedder = embedder
        self._deadline = deadline
        self.name = embedder.name
        self.dimensions = embedder.dimensions

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._deadline.call("embedding", lambda: self._embedder.embed(texts))

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._deadline.call("embedding", lambda: embed_questions(self._embedder, texts))


class DeadlineIndex:
    """A vector index whose reads are bounded by the deadline (a recall only reads)."""

    def __init__(self, index: VectorIndex, deadline: Deadline) -> None:
        self._index = index
        self._deadline = deadline

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)

    def search(
        self,
        project: str,
        kind: VectorKind,
        vector: Sequence[float],
        k: int,
        roles: Collection[Role] | None = None,
    ) -> list[Hit]:
        return self._deadline.call(
            f"{kind} search", lambda: self._index.search(project, kind, vector, k, roles)
        )

    def search_text(
        self,
        project: str,
        kind: VectorKind,
        text: str,
        k: int,
        roles: Collection[Role] | None = None,
    ) -> list[Hit]:
        return self._deadline.call(
            f"{kind} text search", lambda: self._index.search_text(project, kind, text, k, roles)
        )

    def vectors(
        self, project: str, kind: VectorKind, ids: Collection[str]
    ) -> dict[str, list[float]]:
        return self._deadline.call(
            f"{kind} vectors", lambda: self._index.vectors(project, kind, ids)
        )

    def similarities(
        self, project: str, kind: VectorKind, vector: Sequence[float], ids: Collection[str]
    ) -> dict[str, float]:
        return self._deadline.call(
            f"{kind} similarities", lambda: self._index.similarities(project, kind, vector, ids)
        )
