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
# Weights of the vector and the text ranking in the fusion.
MEANING_WEIGHT = 1.0
WORDS_WEIGHT = 1.5
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


def distinct_passages(passages: Iterable[Passage]) -> Iterator[Passage]:
    """The passages in order, less those that nearly repeat an earlier one."""
    # Kept word sets by size: Jaccard(a, b) <= min(|a|, |b|) / max(|a|, |b|), so only
    # sets of a size within that ratio of the new one's can reach DUPLICATE; the rest
    # are skipped unseen (same answer as comparing with every earlier set, far fewer
    # comparisons when a recall reads hundreds of passages).
    by_size: dict[int, list[frozenset[str]]] = {}
    exact: set[frozenset[str]] = set()
    for passage in passages:
        bag = frozenset(words(passage.quote))
        if bag in exact or _repeats(bag, by_size):
            continue
        exact.add(bag)
        by_size.setdefault(len(bag), []).append(bag)
        yield passage


def _repeats(bag: frozenset[str], by_size: dict[int, list[frozenset[str]]]) -> bool:
    """Whether `bag` nearly repeats one of the kept sets (Jaccard at least DUPLICATE)."""
    size = len(bag)
    for other_size, others in by_size.items():
        small, large = min(size, other_size), max(size, other_size)
        # The bound holds in floating point too (division rounds monotonically): a
        # set skipped here would score below DUPLICATE.
        if large and small / large < DUPLICATE:
            continue
        for other in others:
            if not size and not other_size:
                return True
            shared = len(bag & other)  # Jaccard = shared / |union|, the union not built
            if shared / (size + other_size - shared) >= DUPLICATE:
                return True
    return False
