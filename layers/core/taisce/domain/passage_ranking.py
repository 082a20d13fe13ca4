"""The order of passages: the question's meaning and words fused, near-duplicates out.

Two rankings of the visible passages, each `PASSAGE_DEPTH` deep (or the row limit, if
more): nearest by vector, and best by BM25 over the text index. They are fused by
weighted reciprocal rank, score = sum of weight / (RRF_K + rank), ties by id; a passage
whose words nearly repeat one already ranked (Jaccard of word sets at least
`DUPLICATE`) is dropped, the first copy kept. Nothing here depends on the budget.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ..ports import Hit
from .model import Passage
from .words import words

RRF_K = 10
# Weights of the vector and the text ranking in the fusion: equal. Words at 1.5 led
# by 1.3 points at 1,000 characters on the real conversations but lost 1.4 of "all"
# at 16,000 and 7-11 points at 1,000 on the synthetic set, whose distractors share
# the evidence's words by construction (docs/API.md, step 4).
MEANING_WEIGHT = 1.0
WORDS_WEIGHT = 1.0
# Each ranking is read this deep at least (the row limit if larger).
PASSAGE_DEPTH = 200
# Word-set overlap (Jaccard) from which a passage counts as a repeat of an earlier one.
DUPLICATE = 0.8


def fuse_rankings(nearest: Sequence[Hit], lexical: Sequence[Hit]) -> list[str]:
    """Ids by weighted reciprocal-rank fusion of the two rankings, best first."""
    scores: dict[str, float] = {}
    for weight, hits in ((MEANING_WEIGHT, nearest), (WORDS_WEIGHT, lexical)):
        if weight <= 0:
            continue
        for rank, hit in enumerate(hits, start=1):
            scores[hit.id] = scores.get(hit.id, 0.0) + weight / (RRF_K + rank)
    return sorted(scores, key=lambda i: (-scores[i], i))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def distinct_passages(passages: Iterable[Passage]) -> Iterator[Passage]:
    """The passages in order, less those that nearly repeat an earlier one."""
    seen: list[frozenset[str]] = []
    exact: set[frozenset[str]] = set()
    for passage in passages:
        bag = frozenset(words(passage.quote))
        if bag in exact or any(_jaccard(bag, other) >= DUPLICATE for other in seen):
            continue
        exact.add(bag)
        seen.append(bag)
        yield passage
