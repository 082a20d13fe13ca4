"""The faster forms of recall's ranking helpers give exactly what their plain
definitions give (the performance work of issue 11 must not change an answer)."""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis import given, settings
from hypothesis import strategies as st

from taisce.domain.model import Passage
from taisce.domain.passage_ranking import DUPLICATE, distinct_passages
from taisce.domain.words import words

# Few distinct words, so that overlapping and repeated passages are common.
_VOCABULARY = ["pottery", "class", "went", "Caroline", "kids", "paint", "lake", "camp", "a", "the"]
_quotes = st.lists(st.sampled_from(_VOCABULARY), min_size=0, max_size=9).map(" ".join)


def _plain_distinct(passages: Iterable[Passage]) -> list[Passage]:
    """The rule as docs/API.md states it: a passage whose word set has Jaccard at
    least DUPLICATE with any earlier kept one's is dropped."""
    kept: list[Passage] = []
    bags: list[frozenset[str]] = []
    for p in passages:
        bag = frozenset(words(p.quote))
        if any(
            (1.0 if not bag and not other else len(bag & other) / len(bag | other)) >= DUPLICATE
            for other in bags
        ):
            continue
        bags.append(bag)
        kept.append(p)
    return kept


@settings(max_examples=400, deadline=None)
@given(st.lists(_quotes, max_size=40))
def test_distinct_passages_keeps_what_the_plain_rule_keeps(quotes: list[str]) -> None:
    found = [Passage(f"m{n}#0", f"m{n}", "user", None, 0, len(q), q) for n, q in enumerate(quotes)]
    assert list(distinct_passages(found)) == _plain_distinct(found)


def _plain_words(text: str) -> list[str]:
    from taisce.domain.names import fold_piece, fold_separators
    from taisce.domain.words import _TOKEN, STOPWORDS, stem

    folded = fold_separators(fold_piece(text))
    return [stem(t) for t in _TOKEN.findall(folded) if t not in STOPWORDS]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from("aeiosuxyzchSI's-_ .\u00ad\u0130\u00df"), max_size=60))
def test_words_are_the_plain_words(text: str) -> None:
    assert words(text) == _plain_words(text)
