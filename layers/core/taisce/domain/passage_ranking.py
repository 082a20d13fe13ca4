"""The order of passages: the question's meaning and words fused, the time it asks about,
near-duplicates out.

Three rankings of the visible passages, each `PASSAGE_DEPTH` deep (or the row limit, if
more): nearest by vector, best by BM25 over the text index, and nearest the vector of
the question with its written names replaced (domain/question_topic.py; the first
ranking again when it writes none). They are fused by weighted reciprocal rank, score =
sum of weight / (RRF_K + rank), ties by id. A passage of a message that already has n
passages ahead of it in that order keeps `SIBLING` ** n of its score
(`spread_messages`), so the budget reaches more messages. A passage then gains
`NEIGHBOUR` times the best spread score among the candidate passages of the message
stored just before its own (`add_neighbours`: a conversation's answer often sits in the
reply to the message that matches). Then the time the question asks about multiplies a
passage's score (`time_factor`): a passage of a message from the one month the question
names counts `MONTH_BOOST` times, from the one day it names `DAY_BOOST` times more; a
passage that states a time ("yesterday", "last week", "in June") counts `WHEN_BOOST`
times when the question asks "when" (among the first `WHEN_DEPTH` of the fused order
only, if it names no month or day). A passage whose words nearly repeat one already
ranked (Jaccard of word sets at least `DUPLICATE`) is dropped, the first copy kept.
Nothing here depends on the budget."""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice

from .languages import reads_as_english
from .model import Hit, Passage
from .words import words

# Reciprocal-rank constant: 5 weighs the first few of either ranking more than 10 did
# (+1.1 points at 1,000 characters on the real conversations, +1.4 with their facts;
# 3 to 8 alike; the same at 4,000 and 16,000; docs/API.md, step 4).
RRF_K = 5
# Weights of the vector and the text ranking in the fusion: equal. Words at 1.5 led
# by 1.3 points at 1,000 characters on the real conversations but lost 1.4 of "all"
# at 16,000 and 7-11 points at 1,000 on the synthetic set, whose distractors share
# the evidence's words by construction (docs/API.md, step 4).
MEANING_WEIGHT = 1.0
WORDS_WEIGHT = 1.0
# Weight of the ranking by the question without its written names: a name pulls the
# question's vector towards every passage that names that person. Chosen on the real
# conversations, with the synthetic set as a guard (docs/API.md, step 4): at 1.0 evidence
# any +1.7 / +2.0 / +0.3 points at 1,000 / 4,000 / 16,000 characters, multi-hop all at
# 4,000 +7.1; 0.7 and 1.5 gained less on the real conversations.
TOPIC_WEIGHT = 1.0
# Each ranking is read this deep at least (the row limit if larger): 400 rather than 200
# reaches evidence that only a 16,000-character bundle holds (+0.7 point there on the
# real conversations with their facts, with SIBLING; docs/API.md, step 4).
PASSAGE_DEPTH = 400
# Share of its fused score a passage keeps per passage of its own message ahead of it in
# the fused order: the second half of a long message says less than another message
# that also matches (docs/API.md, step 4: 0.5, 0.3 and 0.7 alike).
SIBLING = 0.5
# Share of the best spread score among the passages of the message stored just before
# its own (positions NEIGHBOUR_STEPS away) that a passage gains: an answer sits in the
# reply to the message that matches. Chosen on the real conversations (docs/API.md,
# step 4): they gain with it up to 0.3 and little more after; the synthetic set, whose
# neighbours are distractors sharing the evidence's words, must stay within 1 point of
# its reference at every budget. Before the topic ranking it allowed 0.075 at most
# (both sides at 0.05 broke it at 4,000); with it, 0.3 keeps it (0.4 and 0.5 lose
# multi-hop "all" on every file).
NEIGHBOUR = 0.3
NEIGHBOUR_STEPS = (-1,)
# Word-set overlap (Jaccard) from which a passage counts as a repeat of an earlier one.
DUPLICATE = 0.8
# Factors of the fused score (docs/API.md, step 4): a passage from the month the
# question names; from the day it names (on top of the month's); one that states a
# time when the question asks "when".
MONTH_BOOST = 3.0
DAY_BOOST = 4.0
WHEN_BOOST = 2.0
# "When" alone reorders only the first this many passages of the fused order (the
# first chunk the stores read anyway): the same figures on the real conversations as
# reordering every candidate, without reading them all.
WHEN_DEPTH = 64

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
# four digits from 1900 to 2099 standing alone; a day is "October 13", "13 October"
# or "October 13th", with its year if one follows ("October 13, 2023").
_MONTH_NAME = "|".join(_MONTHS)
_MONTH = re.compile(r"\b(" + _MONTH_NAME + r")\b")
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
_YEAR_AFTER = r"(?:,?\s*((?:19|20)\d\d)(?!\d))?"
_DAY_MONTH = re.compile(r"\b(" + _MONTH_NAME + r")\s+(\d{1,2})(?:st|nd|rd|th)?(?!\d)" + _YEAR_AFTER)
_DAY_FIRST = re.compile(
    r"(?<!\d)(\d{1,2})(?:st|nd|rd|th)?\s+(" + _MONTH_NAME + r")\b" + _YEAR_AFTER
)
# A question asks for a time; a passage states one (relative days and weeks, weekdays,
# months, years: what a person says when telling when something happened).
_ASKS_WHEN = re.compile(
    r"\bwhen\b|\bwhat (?:year|month|date|day|time)\b|\bhow long ago\b", re.IGNORECASE
)
_STATES_TIME = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|ago|last|next|weekend|weeks?|months?|years?"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|january|february|march|april|june|july|august|september|october|november|december"
    r"|(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
# states_time's fast path for ASCII text: the pattern's words, a word run, and a year.
_TIME_WORDS = frozenset(
    [
        *("yesterday", "today", "tonight", "tomorrow", "ago", "last", "next", "weekend"),
        *("week", "weeks", "month", "months", "year", "years"),
        *("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
        *("january", "february", "march", "april", "june", "july", "august"),
        *("september", "october", "november", "december"),
    ]
)
_ASCII_RUN = re.compile(r"\w+", re.ASCII)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b", re.ASCII)


@dataclass(frozen=True, slots=True)
class AskedTime:
    """The time a question asks about, as far as a passage's message time or text can
    answer it."""

    # (month, year or None) if the question names exactly one month (at most one year).
    month: tuple[int, int | None] | None = None
    # (year or None, month, day) if it names exactly one day.
    day: tuple[int | None, int, int] | None = None
    # Whether it asks "when" (or what year, month, date...).
    when: bool = False

    @property
    def reorders(self) -> bool:
        """Whether any passage's score can change (else the fused order is final)."""
        return self.month is not None or self.day is not None or self.when

    @property
    def dated(self) -> bool:
        """Whether the factors need each passage's message time."""
        return self.month is not None or self.day is not None


def fused_scores(
    nearest: Sequence[Hit], lexical: Sequence[Hit], topic: Sequence[Hit] = ()
) -> dict[str, float]:
    """Each id's weighted reciprocal-rank score in the rankings (`topic`: by the
    question without its written names)."""
    scores: dict[str, float] = {}
    rankings = ((MEANING_WEIGHT, nearest), (WORDS_WEIGHT, lexical), (TOPIC_WEIGHT, topic))
    for weight, hits in rankings:
        if weight <= 0:
            continue
        for rank, hit in enumerate(hits, start=1):
            scores[hit.id] = scores.get(hit.id, 0.0) + weight / (RRF_K + rank)
    return scores


def spread_messages(scores: Mapping[str, float]) -> dict[str, float]:
    """The fused scores with each passage's multiplied by SIBLING ** n, n the passages
    of its message ahead of it in the fused order (score, then id). Only ids are read:
    a passage's id is its message's id, "#", its number (domain/ingest.py)."""
    ahead: dict[str, int] = {}
    spread: dict[str, float] = {}
    for negated, pid in best_first(scores):
        message = pid.rpartition("#")[0]
        n = ahead.get(message, 0)
        spread[pid] = -negated * SIBLING**n
        ahead[message] = n + 1
    return spread


def best_first(scores: Mapping[str, float]) -> list[tuple[float, str]]:
    """(-score, id) of each id, best first, ties by id: the order of
    sorted(scores, key=lambda i: (-scores[i], i)), sorted as plain tuples (no key
    function per id: ~600 ids, up to three sorts a recall)."""
    return sorted([(-score, pid) for pid, score in scores.items()])


def add_neighbours(scores: Mapping[str, float], positions: Mapping[str, int]) -> dict[str, float]:
    """The scores with each passage's raised by NEIGHBOUR times the best score among
    the passages of the messages at its own message's position plus NEIGHBOUR_STEPS.

    `positions` holds the storing position of each candidate that may shape the
    ranking (a passage without one neither gives nor gains); only ids in `scores`
    count. Every candidate's gain is read from the scores before any is added, so
    the result does not depend on the order of the ids."""
    best: dict[int, float] = {}
    for pid, position in positions.items():
        score = scores.get(pid)
        if score is not None and score > best.get(position, 0.0):
            best[position] = score
    raised = dict(scores)
    if not best:
        return raised
    # Plain loops, not max() over a generator per passage (~400 a recall).
    for pid, position in positions.items():
        if pid in raised:
            gain = 0.0
            for step in NEIGHBOUR_STEPS:
                near = best.get(position + step, 0.0)
                if near > gain:
                    gain = near
            if gain > 0.0:
                raised[pid] += NEIGHBOUR * gain
    return raised


def keep_first(
    raised: Mapping[str, float], spread: Mapping[str, float], first: str | None
) -> Mapping[str, float]:
    """`raised` with `first` still ahead of every other passage, where it led `spread`
    (the order before the neighbours' gains): lifted to just above the best other
    score if a gain took its place; otherwise `raised` itself.

    `first` is the passage every ranking put first (first_of_all) where one did and the
    recall may see it. A new memory's rankings are short and close, so a gain lent by
    another message could otherwise outweigh the one passage all the signals agree on;
    every other passage keeps its place."""
    if first is None or first not in raised or not spread:
        return raised
    if min((-score, pid) for pid, score in spread.items())[1] != first:
        return raised  # something else led already (the facts' pointers)
    others = max((score for pid, score in raised.items() if pid != first), default=None)
    if others is None or raised[first] > others:
        return raised
    kept = dict(raised)
    kept[first] = math.nextafter(others, math.inf)
    return kept


def floors_passages(question: str, asked: AskedTime) -> bool:
    """Whether the passage floor (domain/floors.py) holds for this question: it reads
    as English (the floor was chosen on English questions; a model's cosines sit lower
    in a language it reads less well) and names no month or day (the passages of the
    day asked about bear on it whatever their words, and the time orders them)."""
    return not asked.dated and reads_as_english(question)


def above_floor(hits: Sequence[Hit] | None, floor: float) -> list[Hit] | None:
    """A ranking by meaning less the hits under `floor` (their cosine with the
    question), in order; None stays None (the ranking failed)."""
    if hits is None:
        return None
    return [h for h in hits if h.score >= floor]


def first_of_all(rankings: Iterable[Sequence[Hit] | None]) -> str | None:
    """The id that every ranking that found something put first, if they agree."""
    firsts = {ranking[0].id for ranking in rankings if ranking}
    return next(iter(firsts)) if len(firsts) == 1 else None


def asked_month(question: str) -> tuple[int, int | None] | None:
    """The (month, year or None) the question names, if it names exactly one month
    (and at most one year); None otherwise."""
    months = {_MONTHS.index(m) + 1 for m in _MONTH.findall(question)}
    if len(months) != 1:
        return None
    years = {int(y) for y in _YEAR.findall(question)}
    return months.pop(), years.pop() if len(years) == 1 else None


def asked_day(question: str) -> tuple[int | None, int, int] | None:
    """The (year or None, month, day) the question names, if it names exactly one day."""
    days: set[tuple[int | None, int, int]] = set()
    for month, day, year in _DAY_MONTH.findall(question):
        days.add((int(year) if year else None, _MONTHS.index(month) + 1, int(day)))
    for day, month, year in _DAY_FIRST.findall(question):
        days.add((int(year) if year else None, _MONTHS.index(month) + 1, int(day)))
    if len(days) != 1:
        return None
    found = days.pop()
    return found if 1 <= found[2] <= 31 else None


def asked_time(question: str) -> AskedTime:
    """What the question asks about time (domain/passage_ranking.py's factors)."""
    return AskedTime(
        asked_month(question), asked_day(question), _ASKS_WHEN.search(question) is not None
    )


def in_month(occurred_at: str | None, asked: tuple[int, int | None]) -> bool:
    """Whether a stored timestamp ("YYYY-MM-DD...") falls in the asked month (and year)."""
    if not occurred_at or len(occurred_at) < 7 or not occurred_at[:4].isdigit():
        return False
    year, month = int(occurred_at[:4]), occurred_at[5:7]
    if not month.isdigit() or int(month) != asked[0]:
        return False
    return asked[1] is None or asked[1] == year


def on_day(occurred_at: str | None, asked: tuple[int | None, int, int]) -> bool:
    """Whether a stored timestamp ("YYYY-MM-DD...") falls on the asked day (and year)."""
    if not occurred_at or len(occurred_at) < 10:
        return False
    year, month, day = occurred_at[:4], occurred_at[5:7], occurred_at[8:10]
    if not (year.isdigit() and month.isdigit() and day.isdigit()):
        return False
    return (asked[0] is None or asked[0] == int(year)) and (int(month), int(day)) == asked[1:]


def states_time(text: str) -> bool:
    """Whether a passage's text says when something happened."""
    if text.isascii():
        # The same answer as the pattern, up to 3x faster (a "when" question with a
        # month tests every candidate, ~700 on a long conversation): in ASCII text a
        # word matches only as a whole run of word characters (\b on both sides).
        if not _TIME_WORDS.isdisjoint(_ASCII_RUN.findall(text.lower())):
            return True
        return _YEAR.search(text) is not None
    return _STATES_TIME.search(text) is not None


def date_factor(occurred_at: str | None, asked: AskedTime) -> float:
    """The factor the asked month and day give a passage of a message that occurred
    at `occurred_at` (stored form; "" or None: no time, no factor): time_factor's part
    that needs no text."""
    factor = 1.0
    if asked.month is not None and in_month(occurred_at, asked.month):
        factor *= MONTH_BOOST
    if asked.day is not None and on_day(occurred_at, asked.day):
        factor *= DAY_BOOST
    return factor


def time_factor(passage: Passage, asked: AskedTime) -> float:
    """The factor the asked time gives this passage's fused score (1.0: none)."""
    factor = date_factor(passage.occurred_at, asked)
    if asked.when and states_time(passage.quote):
        factor *= WHEN_BOOST
    return factor


def order_passages(
    passages: Sequence[Passage], scores: Mapping[str, float], question: str | AskedTime
) -> list[Passage]:
    """The passages best first: fused score times the asked time's factor; ties by id."""
    asked = asked_time(question) if isinstance(question, str) else question
    if not asked.reorders:
        return sorted(passages, key=lambda p: (-scores.get(p.id, 0.0), p.id))
    return sorted(passages, key=lambda p: (-scores.get(p.id, 0.0) * time_factor(p, asked), p.id))


def largest_factor(asked: AskedTime) -> float:
    """The most time_factor can give any passage for this question (multiplied in
    time_factor's own order, so that a passage's product never exceeds it)."""
    factor = 1.0
    if asked.month is not None:
        factor *= MONTH_BOOST
    if asked.day is not None:
        factor *= DAY_BOOST
    if asked.when:
        factor *= WHEN_BOOST
    return factor


def order_passages_lazily(
    ids: Sequence[str],
    read: Callable[[Sequence[str]], Iterable[Passage]],
    scores: Mapping[str, float],
    asked: AskedTime,
    first: int,
) -> Iterator[Passage]:
    """order_passages over the passages of `ids` (sorted by score, best first, ties
    by id), read `first` ids at first and twice as many each time after, as the
    caller consumes them: a passage is yielded once no unread one can pass it (an
    unread passage scores at most the next unread id's score times largest_factor).
    A question that names a month or day reorders every candidate, but the bundle
    usually closes long before the last of ~800 is needed."""
    top = largest_factor(asked)
    # "When" is tested (states_time, the costly factor) only on passages that reach the
    # front: each waits with the factor it would have if it stated a time, an upper
    # bound, and is put back with its own once it is the best waiting.
    dated = AskedTime(asked.month, asked.day) if asked.when else asked
    waiting: list[tuple[float, str, bool, Passage]] = []

    def front(bound: float) -> Iterator[Passage]:
        # Strictly above the bound: an unread passage can neither pass nor tie it.
        while waiting and -waiting[0][0] > bound:
            _, pid, known, p = heapq.heappop(waiting)
            if known:
                yield p
            else:
                exact = -scores.get(pid, 0.0) * time_factor(p, asked)
                heapq.heappush(waiting, (exact, pid, True, p))

    for chunk, end in doubling_chunks(ids, first):
        for p in read(chunk):
            factor = time_factor(p, dated)
            if asked.when:
                factor *= WHEN_BOOST
            heapq.heappush(waiting, (-scores.get(p.id, 0.0) * factor, p.id, not asked.when, p))
        if end < len(ids):
            yield from front(scores.get(ids[end], 0.0) * top)
    yield from front(-math.inf)


def order_by_times(
    scores: Mapping[str, float], times: Mapping[str, str], asked: AskedTime
) -> list[str]:
    """The ids of `scores` in order_passages' order for a question that names a month
    or day but does not ask "when", from each id's message time (`times`, held for
    every id: the index carries it with each hit) rather than from its passage: the
    passages can then be read in this order, a chunk at a time, as the bundle fills."""
    if asked.when:
        raise ValueError("'when' needs each passage's text: use order_passages_lazily")
    # One factor per distinct time: a message's passages share it, and a conversation's
    # messages often share their session's (date_factor per id was ~0.4 ms at 800 ids).
    factors = {when: date_factor(when, asked) for when in set(times.values())}
    keyed = sorted([(-score * factors[times[pid]], pid) for pid, score in scores.items()])
    return [pid for _, pid in keyed]


def doubling_chunks(ids: Sequence[str], first: int) -> Iterator[tuple[Sequence[str], int]]:
    """The ids `first` at first and twice as many each time after, each chunk with the
    index of the first id after it: reads that grow as a bundle keeps taking passages."""
    start, size = 0, first
    while start < len(ids):
        yield ids[start : start + size], start + size
        start += size
        size *= 2


def reorder_head(
    passages: Iterable[Passage],
    scores: Mapping[str, float],
    asked: AskedTime,
    head: set[str] | None = None,
) -> Iterator[Passage]:
    """Passages in fused order with the first WHEN_DEPTH of them ordered by
    order_passages (for a question that asks "when" but names no month or day); the
    ids of those first ones are added to `head` if given (the factor applied to them)."""
    rest = iter(passages)
    first = list(islice(rest, WHEN_DEPTH))
    if head is not None:
        head.update(p.id for p in first)
    yield from order_passages(first, scores, asked)
    yield from rest


def distinct_passages(passages: Iterable[Passage]) -> Iterator[Passage]:
    """The passages in order, less those that nearly repeat an earlier one."""
    # Prefix filtering (the exact filter of set-similarity joins): with each word set's
    # words in one fixed order, two sets of Jaccard at least DUPLICATE share a word among
    # the first len - ceil(DUPLICATE * len) + 1 of each, and their sizes are within a
    # factor DUPLICATE of each other. A kept set is indexed by those first words, and a
    # new one is compared only with the kept sets its own first words reach: the same
    # answer as comparing with every earlier set, with far fewer comparisons.
    # The order: words first met later come first. Any fixed order is exact, and a word
    # keeps its place once met, so this is one; it puts the words most passages share
    # (the speakers' names, met first) last, out of the prefixes, where alphabetical
    # order put "caroline" in nearly every one (half the time of this step, measured).
    by_word: dict[str, list[frozenset[str]]] = {}
    exact: set[frozenset[str]] = set()
    place: dict[str, int] = {}
    for passage in passages:
        bag = frozenset(words(passage.quote))
        if bag in exact:
            continue
        for word in sorted(bag.difference(place)):  # sorted: the same order every run
            place[word] = -len(place)
        prefix = sorted(bag, key=place.__getitem__)[: _prefix_length(len(bag))]
        if _repeats(bag, prefix, by_word):
            continue
        exact.add(bag)
        for word in prefix:
            by_word.setdefault(word, []).append(bag)
        yield passage


def _prefix_length(size: int) -> int:
    """How many of a set's sorted words must hold one it shares with any set it nearly
    repeats (rounded up where floating point blurs ceil: a longer prefix is still exact)."""
    return size - math.ceil(DUPLICATE * size - 1e-9) + 1


def _repeats(
    bag: frozenset[str], prefix: list[str], by_word: dict[str, list[frozenset[str]]]
) -> bool:
    """Whether `bag` nearly repeats a kept set (Jaccard at least DUPLICATE). A kept set
    two of its first words reach is compared twice: cheaper than remembering it."""
    size = len(bag)
    # Jaccard <= min / max of the sizes: only sizes within these bounds can reach it
    # (bounds widened a little, as for the prefix: never skipping a repeat).
    low, high = DUPLICATE * size - 1e-9, size / DUPLICATE + 1e-9
    for word in prefix:
        for other in by_word.get(word, ()):
            other_size = len(other)
            if other_size < low or other_size > high:
                continue
            shared = len(bag & other)  # Jaccard = shared / |union|, the union not built
            if shared / (size + other_size - shared) >= DUPLICATE:
                return True
    return False
