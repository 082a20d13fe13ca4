"""The order of passages: the question's meaning and words fused, near-duplicates out.

Two rankings of the visible passages, each `PASSAGE_DEPTH` deep (or the row limit, if
more): nearest by vector, and best by BM25 over the text index. They are fused by
weighted reciprocal rank, score = sum of weight / (RRF_K + rank), ties by id. When the
question names one calendar month ("in June", "in October 2023"), a passage of a
message that occurred in that month (and year, if named) counts `TIME_BOOST` times its
score. A passage whose words nearly repeat one already ranked (Jaccard of word sets at
least `DUPLICATE`) is dropped, the first copy kept. Nothing here depends on the budget.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence

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
# Factor of the fused score of a passage from the month the question names.
TIME_BOOST = 2.0

_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
# A month counts as written in English prose, capitalised ("may" is a verb); a year is
# four digits from 1900 to 2099 standing alone.
_MONTH = re.compile(r"\b(" + "|".join(_MONTHS) + r")\b")
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")


def fused_scores(nearest: Sequence[Hit], lexical: Sequence[Hit]) -> dict[str, float]:
    """Each id's weighted reciprocal-rank score in the two rankings."""
    scores: dict[str, float] = {}
    for weight, hits in ((MEANING_WEIGHT, nearest), (WORDS_WEIGHT, lexical)):
        if weight <= 0:
            continue
        for rank, hit in enumerate(hits, start=1):
            scores[hit.id] = scores.get(hit.id, 0.0) + weight / (RRF_K + rank)
    return scores


def fuse_rankings(nearest: Sequence[Hit], lexical: Sequence[Hit]) -> list[str]:
    """Ids by weighted reciprocal-rank fusion of the two rankings, best first."""
    scores = fused_scores(nearest, lexical)
    return sorted(scores, key=lambda i: (-scores[i], i))


def asked_month(question: str) -> tuple[int, int | None] | None:
    """The (month, year or None) the question names, if it names exactly one month
    (and at most one year); None otherwise."""
    months = {_MONTHS.index(m) + 1 for m in _MONTH.findall(question)}
    if len(months) != 1:
        return None
    years = {int(y) for y in _YEAR.findall(question)}
    return months.pop(), years.pop() if len(years) == 1 else None


def in_month(occurred_at: str | None, asked: tuple[int, int | None]) -> bool:
    """Whether a stored timestamp ("YYYY-MM-DD...") falls in the asked month (and year)."""
    if not occurred_at or len(occurred_at) < 7 or not occurred_at[:4].isdigit():
        return False
    year, month = int(occurred_at[:4]), occurred_at[5:7]
    if not month.isdigit() or int(month) != asked[0]:
        return False
    return asked[1] is None or asked[1] == year


def order_passages(
    passages: Sequence[Passage], scores: Mapping[str, float], question: str
) -> list[Passage]:
    """The passages best first: fused score, times `TIME_BOOST` for a passage of the
    month the question names; ties by id."""
    asked = asked_month(question)

    def score(p: Passage) -> float:
        base = scores.get(p.id, 0.0)
        if asked is not None and in_month(p.occurred_at, asked):
            return base * TIME_BOOST
        return base

    return sorted(passages, key=lambda p: (-score(p), p.id))


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
