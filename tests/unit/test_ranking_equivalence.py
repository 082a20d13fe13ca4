"""The faster forms of recall's ranking helpers give exactly what their plain
definitions give (the performance work of issue 11 must not change an answer)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taisce.api.bodies import passage
from taisce.domain.budget import item_characters, passage_characters
from taisce.domain.fact_ranking import K1, B, word_scores
from taisce.domain.model import Passage
from taisce.domain.names import fold_piece, fold_separators
from taisce.domain.passage_ranking import (
    _STATES_TIME,
    DUPLICATE,
    NEIGHBOUR,
    NEIGHBOUR_STEPS,
    SIBLING,
    add_neighbours,
    asked_time,
    best_first,
    distinct_passages,
    order_by_times,
    order_passages,
    order_passages_lazily,
    spread_messages,
    states_time,
)
from taisce.domain.words import _TOKEN, STOPWORDS, stem, words

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


# Longer quotes from more words: sets of up to 16 words, where the first-words index
# (prefix filtering) and the size bounds decide which kept sets are compared.
_LONGER = [f"w{n:02d}" for n in range(20)]
_long_quotes = st.lists(st.sampled_from(_LONGER), min_size=0, max_size=16).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(_long_quotes, max_size=40))
def test_distinct_passages_keeps_what_the_plain_rule_keeps_for_longer_passages(
    quotes: list[str],
) -> None:
    found = [Passage(f"m{n}#0", f"m{n}", "user", None, 0, len(q), q) for n, q in enumerate(quotes)]
    assert list(distinct_passages(found)) == _plain_distinct(found)


# Every quote opens with its speaker's name (as in real conversations: the word met first
# and in nearly every set), and new words keep arriving: the order of the first-words
# index (words met later first) changes as passages come, and must stay exact.
_SPOKEN = [f"v{n:02d}" for n in range(40)]
_spoken_quotes = st.tuples(
    st.sampled_from(["Caroline:", "Melanie:"]),
    st.lists(st.sampled_from(_SPOKEN), min_size=0, max_size=12),
).map(lambda t: " ".join([t[0], *t[1]]))


@settings(max_examples=400, deadline=None)
@given(st.lists(_spoken_quotes, max_size=50))
def test_distinct_passages_keeps_what_the_plain_rule_keeps_when_a_name_opens_each(
    quotes: list[str],
) -> None:
    found = [Passage(f"m{n}#0", f"m{n}", "user", None, 0, len(q), q) for n, q in enumerate(quotes)]
    assert list(distinct_passages(found)) == _plain_distinct(found)


def _plain_words(text: str) -> list[str]:
    folded = fold_separators(fold_piece(text))
    return [stem(t) for t in _TOKEN.findall(folded) if t not in STOPWORDS]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from("aeiosuxyzchSI's-_ .\u00ad\u0130\u00df"), max_size=60))
def test_words_are_the_plain_words(text: str) -> None:
    assert words(text) == _plain_words(text)


def _plain_word_scores(question: list[str], documents: list[list[str]]) -> list[float]:
    """fact_ranking.word_scores as first written (a Counter of every document)."""
    n = len(documents)
    terms = list(dict.fromkeys(question))
    if not n or not terms:
        return [0.0] * n
    counts = [Counter(d) for d in documents]
    lengths = [len(d) for d in documents]
    average = sum(lengths) / n or 1.0
    df = {t: sum(1 for c in counts if t in c) for t in terms}
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms if df[t]}
    ideal = sum(idf.values())
    if ideal <= 0:
        return [0.0] * n
    scores: list[float] = []
    for c, length in zip(counts, lengths, strict=True):
        norm = K1 * (1 - B + B * length / average)
        s = 0.0
        for t, weight in idf.items():
            tf = c.get(t, 0)
            if tf:
                s += weight * tf * (K1 + 1) / (tf + norm)
        scores.append(min(1.0, s / ideal))
    return scores


_word_lists = st.lists(st.sampled_from(["art", "camp", "lake", "paint", "kid", "run"]), max_size=8)


@settings(max_examples=400, deadline=None)
@given(_word_lists, st.lists(_word_lists, max_size=12))
def test_word_scores_are_the_plain_scores(question: list[str], documents: list[list[str]]) -> None:
    assert word_scores(question, documents) == _plain_word_scores(question, documents)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["user", "assistant", "system", "tool"]),
    st.one_of(st.none(), st.text(max_size=30)),
    st.text(max_size=200),
)
def test_passage_characters_counts_what_the_budget_counts(
    role: str, source: str | None, quote: str
) -> None:
    p = Passage("m#0", "m", role, source, 0, len(quote), quote)  # type: ignore[arg-type]
    assert passage_characters(p) == item_characters("passages", passage(p))


# Pieces of passages that do and do not state a time, in any case, glued by what may or
# may not make a word boundary (an underscore or a digit joins two runs).
_TIME_PIECES = [
    "yesterday",
    "Last",
    "WEEKS",
    "week",
    "weekend",
    "Months",
    "ago",
    "March",
    "may",
    "Sunday",
    "2023",
    "1999",
    "20234",
    "1823",
    "year",
    "years",
    "yearly",
    "today",
    "tonight",
    "Xmonth",
    "caroline",
    "k",
    "\u212a",
    "\u017f",
    "_",
    "1",
    " ",
    ", ",
    "'",
    "-",
]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_TIME_PIECES), max_size=8).map("".join))
def test_states_time_says_what_its_pattern_says(text: str) -> None:
    assert states_time(text) == (_STATES_TIME.search(text) is not None)


# Passage ids of a few messages ("m3#1": message m3's second passage), scores from a few
# values so that ties are common, and storing positions that often neighbour.
_pids = st.builds(lambda m, n: f"m{m}#{n}", st.integers(0, 6), st.integers(0, 2))
_scores = st.dictionaries(_pids, st.sampled_from([0.0, 0.05, 0.1, 0.1 / 3, 0.2, 1.0]))


def _plain_spread(scores: dict[str, float]) -> dict[str, float]:
    ahead: dict[str, int] = {}
    spread: dict[str, float] = {}
    for pid in sorted(scores, key=lambda i: (-scores[i], i)):
        message = pid.rpartition("#")[0]
        n = ahead.get(message, 0)
        spread[pid] = scores[pid] * SIBLING**n
        ahead[message] = n + 1
    return spread


def _plain_neighbours(scores: dict[str, float], positions: dict[str, int]) -> dict[str, float]:
    best: dict[int, float] = {}
    for pid, position in positions.items():
        score = scores.get(pid)
        if score is not None and score > best.get(position, 0.0):
            best[position] = score
    raised = dict(scores)
    for pid, position in positions.items():
        if pid in raised:
            gain = max(best.get(position + step, 0.0) for step in NEIGHBOUR_STEPS)
            if gain > 0.0:
                raised[pid] += NEIGHBOUR * gain
    return raised


@settings(max_examples=400, deadline=None)
@given(_scores)
def test_best_first_and_spread_are_the_plain_forms(scores: dict[str, float]) -> None:
    assert [pid for _, pid in best_first(scores)] == sorted(scores, key=lambda i: (-scores[i], i))
    assert spread_messages(scores) == _plain_spread(scores)


@settings(max_examples=400, deadline=None)
@given(_scores, st.dictionaries(_pids, st.integers(0, 8)))
def test_add_neighbours_is_the_plain_form(
    scores: dict[str, float], positions: dict[str, int]
) -> None:
    assert add_neighbours(scores, positions) == _plain_neighbours(scores, positions)


# Passages of a few messages with times in two months, some stating a time.
_TIMED = ["we went camping last week", "a lake", "in July", "pottery class", "2023 was good"]
_timed_passages = st.lists(
    st.tuples(st.sampled_from(_TIMED), st.sampled_from(["2023-07-02", "2023-06-30", None])),
    max_size=30,
)
_QUESTIONS = [
    "When did Mel go camping in July?",
    "What did Mel paint in July 2023?",
    "What did Mel do on July 2, 2023?",
    "When did Mel go camping?",
]


@settings(max_examples=400, deadline=None)
@given(
    _timed_passages,
    st.lists(st.sampled_from([0.0, 0.05, 0.1, 0.1 / 3, 0.2, 1.0]), min_size=30, max_size=30),
    st.sampled_from(_QUESTIONS),
    st.integers(1, 5),
)
def test_order_passages_lazily_is_order_passages(
    texts: list[tuple[str, str | None]], values: list[float], question: str, first: int
) -> None:
    passages = [
        Passage(f"m{n}#0", f"m{n}", "user", None, 0, len(q), q, when)
        for n, (q, when) in enumerate(texts)
    ]
    # Scores for some ids the store no longer holds too (deleted: never read back).
    scores = {p.id: v for p, v in zip(passages, values, strict=False)}
    scores.update({f"gone{n}": v for n, v in enumerate(values[:3])})
    held = {p.id: p for p in passages}
    asked = asked_time(question)
    ids = [pid for _, pid in best_first(scores)]
    lazy = order_passages_lazily(
        ids, lambda c: [held[i] for i in c if i in held], scores, asked, first
    )
    assert list(lazy) == order_passages(passages, scores, asked)


# Questions that name a month or day but do not ask "when": the order is known from each
# candidate's message time alone (the index carries it with each hit).
_DATED = [q for q in _QUESTIONS if asked_time(q).dated and not asked_time(q).when]


@settings(max_examples=400, deadline=None)
@given(
    _timed_passages,
    st.lists(st.sampled_from([0.0, 0.05, 0.1, 0.1 / 3, 0.2, 1.0]), min_size=30, max_size=30),
    st.sampled_from(_DATED),
    st.integers(1, 5),
)
def test_order_by_times_is_order_passages(
    texts: list[tuple[str, str | None]], values: list[float], question: str, first: int
) -> None:
    passages = [
        Passage(f"m{n}#0", f"m{n}", "user", None, 0, len(q), q, when)
        for n, (q, when) in enumerate(texts)
    ]
    scores = {p.id: v for p, v in zip(passages, values, strict=False)}
    # Hits of passages the store no longer holds carry a time too (never read back).
    scores.update({f"gone{n}": v for n, v in enumerate(values[:3])})
    # A message without a time is carried as "" (None: not carried).
    times = {p.id: p.occurred_at or "" for p in passages}
    times.update({f"gone{n}": "2023-07-02" for n in range(3)})
    held = {p.id: p for p in passages}
    asked = asked_time(question)
    order = order_by_times(scores, times, asked)
    assert sorted(order) == sorted(scores)
    expected = order_passages(passages, scores, asked)
    assert [held[i] for i in order if i in held] == expected
    # And the same as the lazy order the recall keeps for hits without times.
    ids = [pid for _, pid in best_first(scores)]
    lazy = order_passages_lazily(
        ids, lambda c: [held[i] for i in c if i in held], scores, asked, first
    )
    assert list(lazy) == expected


def test_order_by_times_refuses_a_when_question() -> None:
    with pytest.raises(ValueError, match="when"):
        order_by_times({"a#0": 1.0}, {"a#0": ""}, asked_time("When did Mel paint in July?"))
