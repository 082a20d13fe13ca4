"""The question's meaning during one recall: its vector, made at most once and only if a
step needs it (early, beside the store's first reads, for a model across the network),
and the searches and similarities by it. A model or index failure degrades the recall
(the caller gets None and names what was lost), never fails it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .model import Hit, Role, VectorKind
from .ports.vectors import Embedder, VectorIndex, embed_questions

logger = logging.getLogger(__name__)


class Question:
    """The question's vector, made at most once per recall and only if a step needs it.

    Made `early`, the model is asked in a thread from the start of the recall while the
    store reads names and facts (neither needs the vector): on AWS both are network
    waits, which then overlap."""

    def __init__(
        self, text: str, embedder: Embedder, *, early: bool = False, twin: str | None = None
    ) -> None:
        self.text = text
        self.embedder = embedder
        self._vector: Sequence[float] | None = None
        self.failed = False
        self.early = early
        self._thread: threading.Thread | None = None
        # Another text the recall will also want a vector of (the question without its
        # names: domain/question_topic.py). A local model embeds both in one call (about
        # 1.6 times one text, where two calls cost twice); a model across the network is
        # asked for it in a thread of its own, beside this one.
        self._twin: Question | None = None
        if twin is not None and twin != text:
            self._twin = Question(twin, embedder, early=early)
        if early:
            # A thread per recall, not a pool: nothing to go stale in a forked process.
            self._thread = threading.Thread(target=self._embed, name="question-vector")
            self._thread.start()

    def _embed(self) -> None:
        twin = self._twin
        batched = twin is not None and not twin.early and twin._vector is None and not twin.failed
        texts = [self.text, twin.text] if batched and twin is not None else [self.text]
        try:
            vectors = embed_questions(self.embedder, texts)
        except Exception:  # any model failure degrades the recall, never fails it
            logger.exception("embedding the question failed")
            self.failed = True
            if batched and twin is not None:
                twin.failed = True
            return
        self._vector = vectors[0]
        if batched and twin is not None:
            twin._vector = vectors[1]

    def twin(self) -> Question | None:
        """The twin text's Question (None if there is none)."""
        return self._twin

    def vector(self) -> Sequence[float] | None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        elif self._vector is None and not self.failed:
            self._embed()
        return self._vector

    def nearest(
        self, index: VectorIndex, project: str, kind: VectorKind, k: int, roles: Sequence[Role]
    ) -> list[Hit] | None:
        """The k items of `kind` nearest the question, or None if the model or the
        index failed."""
        vector = self.vector()
        if vector is None:
            return None
        return attempt(f"{kind} search", lambda: index.search(project, kind, vector, k, roles))


@dataclass(frozen=True)
class Meaning:
    """The question's vector and the index: the meaning signal of the fact ranking."""

    question: Question
    index: VectorIndex

    def similarities(
        self, project: str, kind: VectorKind, ids: list[str], other: Question | None = None
    ) -> dict[str, float] | None:
        """Cosine with the question (or with `other`) of each of these items that has a
        vector, or None if the model or the index failed."""
        vector = (other or self.question).vector()
        if vector is None:
            return None
        try:
            return self.index.similarities(project, kind, vector, ids)
        except Exception:  # an index failure degrades the recall, never fails it
            logger.exception("%s similarities failed during a recall", kind)
            return None


def attempt(what: str, search: Callable[[], list[Hit]]) -> list[Hit] | None:
    try:
        return search()
    except Exception:  # an index failure degrades the recall, never fails it
        logger.exception("%s failed during a recall", what)
        return None
