"""Baselines over whole messages and over Taisce's own passages, packed into the same
budget as Taisce.

Each baseline ranks a conversation's units for a question; `pack` then takes whole units
in that order, counted as Taisce counts a passage (role + source + text code points),
until the first one that does not fit or the row limit: the same rule as a Taisce
bundle. Every baseline reads the text exactly as it was stored. A unit is a whole
message, or (the `-passages` baselines) one of the passages the domain's own splitter
cuts it into (`split_passages`, at most 150 code points), the unit Taisce packs, so that
a gap between Taisce and a baseline is the ranking's and not the unit's.

- bm25: BM25 (bm25s, Lucene variant, k1 1.5, b 0.75) over lower-cased word tokens of
  two or more characters, less bm25s's English stop words (Lucene's list); only messages sharing a
  term with the question are ranked.
- dense: cosine of the question's vector with each message's (the same embedder as
  Taisce), every message ranked; each distinct text is embedded once per run.
- hybrid: reciprocal-rank fusion of bm25 and dense, score = sum of 1 / (60 + rank).
- bm25-passages, dense-passages, hybrid-passages: the same three over passages; a
  passage covers its message. Passages of the same text are not merged.
- recency: the most recent messages, by occurred_at then order in the file.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

import numpy as np

from taisce.domain.budget import passage_characters
from taisce.domain.ingest import split_passages
from taisce.domain.model import Message, Role

from .dataset import StoredMessage

RRF_K = 60
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_EMBED_BATCH = 128


def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


class Tokenizer:
    def __init__(self) -> None:
        self.stopwords = _stopwords()

    def __call__(self, text: str) -> list[str]:
        stop = self.stopwords
        return [t for t in _TOKEN.findall(text.lower()) if t not in stop]


class BM25Ranker:
    def __init__(self, texts: Sequence[str], tokenizer: Tokenizer | None = None) -> None:
        import bm25s

        self.tokenize = tokenizer or Tokenizer()
        self.size = len(texts)
        self.model = bm25s.BM25()
        self.model.index([self.tokenize(t) for t in texts], show_progress=False)

    def rank(self, question: str) -> list[int]:
        tokens = self.tokenize(question)
        if not tokens or not self.size:
            return []
        scores = np.asarray(self.model.get_scores(tokens), dtype=np.float64)
        order = np.argsort(-scores, kind="stable")
        positive = int(np.count_nonzero(scores > 0))
        return order[:positive].tolist()


class EmbeddingCache:
    """Each distinct text is embedded once per run (small talk repeats a lot), asked for
    in batches of similar length so that a model padding to the longest wastes little."""

    def __init__(self, embedder: Any, batch: int = _EMBED_BATCH) -> None:
        self.embedder = embedder
        self.batch = batch
        self.rows: dict[str, np.ndarray] = {}
        self.embedded = 0

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        missing = sorted({t for t in texts if t not in self.rows}, key=len)
        for i in range(0, len(missing), self.batch):
            chunk = missing[i : i + self.batch]
            vectors = self.embedder.embed(chunk)
            if len(vectors) != len(chunk):
                raise RuntimeError(
                    f"the embedder returned {len(vectors)} vectors for {len(chunk)} texts"
                )
            for text, vector in zip(chunk, vectors, strict=True):
                self.rows[text] = np.asarray(vector, dtype=np.float32)
        self.embedded += len(missing)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self.rows[t] for t in texts])


class DenseRanker:
    def __init__(self, vectors: np.ndarray, embed_question: Callable[[str], np.ndarray]) -> None:
        self.vectors = vectors
        self.embed_question = embed_question

    def rank(self, question: str) -> list[int]:
        if not len(self.vectors):
            return []
        scores = self.vectors @ self.embed_question(question)
        return np.argsort(-scores, kind="stable").tolist()


@dataclass(frozen=True)
class Units:
    """What a baseline ranks and packs: each unit's text, its characters by Taisce's
    rule, and the index of the message it is from."""

    texts: list[str]
    sizes: list[int]
    owners: list[int]


def message_units(messages: Sequence[StoredMessage]) -> Units:
    """Each message whole."""
    return Units(
        [m.text for m in messages], [m.characters for m in messages], list(range(len(messages)))
    )


def passage_units(messages: Sequence[StoredMessage]) -> Units:
    """Each message split into passages exactly as Taisce splits it when it is stored."""
    units = Units([], [], [])
    for n, m in enumerate(messages):
        message = Message(
            str(n), cast(Role, m.role), m.text, m.source, occurred_at="", recorded_at=""
        )
        for passage in split_passages(message):
            units.texts.append(passage.quote)
            units.sizes.append(passage_characters(passage))
            units.owners.append(n)
    return units


@dataclass(frozen=True)
class Rankers:
    """BM25, dense and their fusion over one set of units, built once per conversation."""

    units: Units
    bm25: BM25Ranker
    dense: DenseRanker | None

    @classmethod
    def build(
        cls,
        units: Units,
        cache: EmbeddingCache | None,
        embed_question: Callable[[str], np.ndarray] | None,
    ) -> Rankers:
        dense = None
        if cache is not None and embed_question is not None:
            dense = DenseRanker(cache.matrix(units.texts), embed_question)
        return cls(units, BM25Ranker(units.texts), dense)

    def rankings(self, question: str) -> dict[str, tuple[list[int], float]]:
        """Each method's ranking of the units for `question`, with the seconds it took
        (hybrid's includes both rankings it fuses)."""
        started = time.perf_counter()
        lexical = self.bm25.rank(question)
        out = {"bm25": (lexical, time.perf_counter() - started)}
        if self.dense is not None:
            started = time.perf_counter()
            semantic = self.dense.rank(question)
            out["dense"] = (semantic, time.perf_counter() - started)
            started = time.perf_counter()
            fused = fuse([lexical, semantic])
            spent = out["bm25"][1] + out["dense"][1] + time.perf_counter() - started
            out["hybrid"] = (fused, spent)
        return out


def fuse(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> list[int]:
    """Reciprocal-rank fusion: each list adds 1 / (k + rank) (rank from 1) to an item;
    ties keep the earlier list's earlier item first."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    first_seen = {item: n for n, item in enumerate(scores)}
    return sorted(scores, key=lambda item: (-scores[item], first_seen[item]))


_EPOCH = datetime.min.replace(tzinfo=UTC)


def recency_order(messages: Sequence[StoredMessage]) -> list[int]:
    """Indices of `messages`, most recent first: by time, then by order in the file."""
    return sorted(
        range(len(messages)),
        key=lambda i: (messages[i].when or _EPOCH, messages[i].order),
        reverse=True,
    )


def pack(
    ranking: Sequence[int], sizes: Sequence[int], max_characters: int, max_rows: int
) -> tuple[list[int], int]:
    """Whole items in ranked order until the first that does not fit or the row limit;
    returns the indices taken and the characters used."""
    taken: list[int] = []
    used = 0
    for i in ranking:
        if len(taken) >= max_rows or used + sizes[i] > max_characters:
            break
        taken.append(i)
        used += sizes[i]
    return taken, used
