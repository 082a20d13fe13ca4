"""Recall step 4: passages, with whatever budget is left, by the question's meaning (with
and without the names it writes) and words fused by reciprocal rank, raised by the
messages the nearest facts cite, spread across messages and their neighbours, ordered by
the time the question asks about, near-duplicates dropped (domain/passage_ranking.py).
Passages are read in order, a chunk at a time, until the bundle closes."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from .budget import passage_characters
from .diversity import DIVERSE_DEPTH, diversify
from .fact_ranking import POINTER_DEPTH, cited_message_ranks, pointer_scores
from .filters import FactFilter, MessageFilter
from .model import Fact, Hit, Passage, Role
from .names import candidate_spans
from .passage_ranking import (
    PASSAGE_DEPTH,
    RRF_K,
    AskedTime,
    above_floor,
    add_neighbours,
    asked_time,
    best_first,
    distinct_passages,
    doubling_chunks,
    first_of_all,
    floors_passages,
    fused_scores,
    keep_first,
    order_by_times,
    order_passages,
    order_passages_lazily,
    reorder_head,
    spread_messages,
    time_factor,
)
from .ports.facts import FactStore
from .ports.messages import MessageStore
from .ports.vectors import VectorIndex
from .question_vector import Meaning, Question, attempt
from .recall_context import RecallContext
from .recalled import PassageWhy, RecalledPassage
from .search import passage_message_id

logger = logging.getLogger(__name__)

# Passages read from the store at a time while the bundle fills.
PASSAGE_CHUNK = 64
# Share of its fused score a passage keeps when a fact already in the bundle cites its
# message: the fact names the message (its id), so the budget goes first to messages
# the bundle does not cite, and the cited one's passages still come where nothing
# else ranks as high. Chosen on the real conversations with their facts, replayed
# (docs/API.md, step 4): 0.25 gave evidence any at 1,000 characters +1.6 points, 0.5
# +1.2, leaving them out +1.4; nothing changes on the messages-only file.
CITED_SHARE = 0.25


@dataclass(frozen=True, slots=True)
class _Hits:
    """The rankings: by vector (None if the model or the index failed), by words (None
    if the text search failed) and by the vector of the question without its written
    names (`nearest` itself if it writes none; None if the model or the index failed)."""

    nearest: list[Hit] | None
    lexical: list[Hit] | None
    topic: list[Hit] | None

    def all(self) -> tuple[Hit, ...]:
        return (*(self.nearest or ()), *(self.lexical or ()), *self.topic_only())

    def topic_only(self) -> tuple[Hit, ...]:
        """The topic ranking's hits, unless it is the nearest ranking itself."""
        return () if self.topic is None or self.topic is self.nearest else tuple(self.topic)


@dataclass(frozen=True, slots=True)
class _Scores:
    """A passage's score at each stage, each its own dict: `fused`, the rankings
    fused by reciprocal rank plus what the facts' pointers add (the score
    spread_messages spreads, and what `message_share` is a share of); `spread`, after
    a message's later passages yielded; `raised`, after the neighbouring messages gave
    theirs (the order's score before the asked time's factor)."""

    fused: dict[str, float]
    spread: dict[str, float]
    raised: dict[str, float]
    # The messages cited by the bundle's facts: their passages kept CITED_SHARE.
    cited: frozenset[str]


@dataclass(frozen=True, slots=True)
class _Pool:
    """What may shape the order. `found`: with a message filter or `subjects` (the
    recall is restricted), every candidate the filters admit, read first, so that a
    message the filters hide gives its neighbours nothing; None otherwise. `positions`:
    each candidate's storing position, which its hits carry (the index keeps it with
    the vector), so the neighbour signal costs no read."""

    wanted: MessageFilter | None
    found: list[Passage] | None
    positions: dict[str, int]


def passage_step(ctx: RecallContext, meaning: Meaning) -> set[str]:
    """Step 4; returns {"passages"} if the vectors' part was lost (listed even when
    words still find something: what was found is still returned)."""
    if not ctx.wants("passages") or ctx.bundle.truncated:
        return set()
    # A question mostly in a script an English-only model does not know is ranked by
    # words alone: that model's cosines order such passages and facts as noise (as
    # step 3 does, domain/report_step.py).
    readable = ctx.model_reads_question()
    asked = asked_time(ctx.question)
    hits = _floored(ctx, _search(ctx, meaning, readable), asked)
    # The facts nearest the question point at the messages they cite
    # (domain/fact_ranking.py): a third ranking, over the passages found.
    ranks: dict[str, int] = {}
    if readable:
        q, index = meaning.question, meaning.index
        ranks = _cited_messages(ctx.store, ctx.project, q, index, ctx.roles, ctx.filters, ctx.read)
    cited = _cited_in_bundle(ctx)
    fused = _fused(hits, ranks, cited)
    # A message's later passages yield to other messages (domain/passage_ranking.py).
    spread = spread_messages(fused)
    pool = _pool(ctx, hits, spread, asked)
    scores = _Scores(fused, spread, add_neighbours(spread, pool.positions), cited)
    # The passage every ranking put first keeps its place against the neighbours' gains.
    first = first_of_all((hits.nearest, hits.lexical, hits.topic))
    if pool.found is not None and first not in {p.id for p in pool.found}:
        first = None  # hidden by the filters: it shapes nothing
    placed = keep_first(scores.raised, spread, first)
    # The passages the "when" factor was applied to (all of them when dated), and the
    # places the diverse head moved each passage it moved.
    head: set[str] = set()
    shifts: dict[str, int] = {}
    ordered = _ordered(ctx, meaning.index, hits, pool, placed, asked, head, shifts)
    _fill(ctx, distinct_passages(ordered), hits, ranks, scores, asked, head, shifts)
    return set() if hits.nearest is not None and hits.topic is not None else {"passages"}


def _search(ctx: RecallContext, meaning: Meaning, vectors: bool = True) -> _Hits:
    """The rankings, as deep as the rows left need (PASSAGE_DEPTH at least); the words'
    alone unless `vectors` (no vector search runs then, so nothing is lost)."""
    depth = max(ctx.controls.max_rows + 1 - ctx.bundle.rows, PASSAGE_DEPTH)
    index = meaning.index
    q = meaning.question
    # Words first: the question's vector may still be on its way (Question).
    lexical = attempt(
        "passage text search",
        lambda: index.search_text(ctx.project, "passage", ctx.question, depth, ctx.roles),
    )
    if not vectors:
        return _Hits([], lexical, [])
    # The question without its names, if it writes any (made with the question's vector).
    topic_q = q.twin()
    nearest = q.nearest(index, ctx.project, "passage", depth, ctx.roles)
    topic = nearest
    if topic_q is not None:
        topic = topic_q.nearest(index, ctx.project, "passage", depth, ctx.roles)
    return _Hits(nearest, lexical, topic)


def _floored(ctx: RecallContext, hits: _Hits, asked: AskedTime) -> _Hits:
    """The rankings less the passages found by meaning alone too far from the question
    (the model's passage floor, domain/floors.py), for a question that reads as English
    and names no month or day (`floors_passages`); the words' ranking whole."""
    if not floors_passages(ctx.question, asked):
        return hits
    floor = ctx.floors.passage
    nearest = above_floor(hits.nearest, floor)
    topic = nearest if hits.topic is hits.nearest else above_floor(hits.topic, floor)
    return _Hits(nearest, hits.lexical, topic)


def _fused(hits: _Hits, ranks: Mapping[str, int], in_bundle: frozenset[str]) -> dict[str, float]:
    """The rankings fused by reciprocal rank, plus what the cited messages' ranks add
    to their passages; a passage of a message that a fact in the bundle cites keeps
    CITED_SHARE of it."""
    fused = fused_scores(hits.nearest or [], hits.lexical or [], hits.topic or [])
    for pid, added in pointer_scores(list(fused), ranks, RRF_K).items():
        fused[pid] += added
    if in_bundle:
        for pid in fused:
            if passage_message_id(pid) in in_bundle:
                fused[pid] *= CITED_SHARE
    return fused


def _pool(ctx: RecallContext, hits: _Hits, spread: Mapping[str, float], asked: AskedTime) -> _Pool:
    """The candidates' positions and, for a restricted recall, the candidates the
    filters admit (read with times if a named month or day reorders by each message's
    time)."""
    messages = ctx.controls.message_filter()
    wanted = messages if messages.active else None
    positions = {h.id: h.position for h in hits.all() if h.position is not None}
    subjects = ctx.filters.subjects
    if wanted is None and subjects is None:
        return _Pool(None, None, positions)
    found = ctx.store.passages_by_ids(ctx.project, sorted(spread), wanted, times=asked.dated)
    if subjects is not None:
        found = [p for p in found if _names_one(p, subjects)]
    return _Pool(wanted, found, {p.id: positions[p.id] for p in found if p.id in positions})


def _cited_in_bundle(ctx: RecallContext) -> frozenset[str]:
    """The messages the bundle's facts cite."""
    return frozenset(f.fact.message_id for f in ctx.bundle.facts if f.fact.message_id)


def _ordered(
    ctx: RecallContext,
    index: VectorIndex,
    hits: _Hits,
    pool: _Pool,
    raised: Mapping[str, float],
    asked: AskedTime,
    head: set[str],
    shifts: dict[str, int],
) -> Iterable[Passage]:
    """The passages in the order they go in, the head made diverse (domain/diversity.py;
    the places each moved into `shifts`) unless a named month or day orders them. The
    fused order is read a chunk at a time as the bundle fills ("when" reorders the first
    chunk's passages only: domain/passage_ranking.py)."""
    if asked.dated:
        return _dated_order(ctx, hits, pool, raised, asked)
    ordered: Iterable[Passage]
    if pool.found is not None:
        found = {p.id: p for p in pool.found}
        by_score = sorted(found, key=lambda pid: (-raised[pid], pid))
        ids = _diverse(ctx, index, by_score, raised, shifts)
        ordered = [found[pid] for pid in ids]
    else:
        ids = _diverse(ctx, index, [pid for _, pid in best_first(raised)], raised, shifts)
        ordered = _passages_in_order(ctx.store, ctx.project, ids, pool.wanted)
    if asked.when:
        ordered = reorder_head(ordered, raised, asked, head)
    return ordered


def _diverse(
    ctx: RecallContext,
    index: VectorIndex,
    ids: list[str],
    scores: Mapping[str, float],
    shifts: dict[str, int],
) -> list[str]:
    """`ids` with their head made diverse by the passages' stored vectors (one read of
    DIVERSE_DEPTH vectors), the places each passage moved put into `shifts`; in the
    order given if the index fails (logged: the order is still the fused one, so
    nothing is listed as degraded)."""
    head = ids[:DIVERSE_DEPTH]
    if len(head) < 2:
        return ids
    try:
        vectors = index.vectors(ctx.project, "passage", head)
    except Exception:  # an index failure degrades the recall, never fails it
        logger.exception("passage vectors failed during a recall")
        return ids
    diverse = diversify(ids, scores, vectors)
    was = {pid: place for place, pid in enumerate(head)}
    for place, pid in enumerate(diverse[: len(head)]):
        if pid != head[place]:
            shifts[pid] = place - was[pid]
    return diverse


def _dated_order(
    ctx: RecallContext, hits: _Hits, pool: _Pool, raised: Mapping[str, float], asked: AskedTime
) -> Iterable[Passage]:
    """The order when the question names a month or day: every candidate reordered by
    its message's time."""
    if pool.found is not None:
        return order_passages(pool.found, raised, asked)
    times = None if asked.when else _hit_times(raised, hits.all())
    if times:
        # Each hit carries its message's time (the index keeps it with the vector): the
        # order is known before any read, and passages are read in it as the bundle
        # fills. Their times come from the hits too (for `explain`'s factor).
        ids = order_by_times(raised, times, asked)
        return (
            p._replace(occurred_at=times[p.id] or None)
            for p in _passages_in_order(ctx.store, ctx.project, ids, None)
        )
    # The same order where a hit lacks its time (indexed before times were kept) or
    # "when" needs each passage's text: read with times, a growing chunk at a time,
    # until no unread passage can pass those read.
    return order_passages_lazily(
        [pid for _, pid in best_first(raised)],
        lambda ids: ctx.store.passages_by_ids(ctx.project, ids, None, times=True),
        raised,
        asked,
        PASSAGE_CHUNK,
    )


def _fill(
    ctx: RecallContext,
    kept: Iterable[Passage],
    hits: _Hits,
    ranks: Mapping[str, int],
    scores: _Scores,
    asked: AskedTime,
    head: set[str],
    shifts: Mapping[str, int],
) -> None:
    """The passages into the bundle, in order, until it closes."""
    # Ranks for `explain` only (800 entries at depth 400: not built otherwise).
    explained = ctx.controls.explain
    vector_rank = {h.id: n for n, h in enumerate(hits.nearest or (), 1)} if explained else {}
    word_rank = {h.id: n for n, h in enumerate(hits.lexical or (), 1)} if explained else {}
    topic_rank = {h.id: n for n, h in enumerate(hits.topic_only(), 1)} if explained else {}
    for passage in kept:
        why = None
        if explained:
            why = PassageWhy(
                vector_rank.get(passage.id),
                word_rank.get(passage.id),
                ranks.get(passage.message_id),
                topic_rank.get(passage.id),
                *_passage_factors(passage, scores, asked, head),
                CITED_SHARE if passage.message_id in scores.cited else None,
                shifts.get(passage.id),
            )
        item = RecalledPassage(passage, why)
        if not ctx.bundle.add("passages", item, passage_characters(passage)):
            break


def _passage_factors(
    passage: Passage, scores: _Scores, asked: AskedTime, head: set[str]
) -> tuple[float | None, float | None, float | None]:
    """`why`'s factors of a passage's fused score (None where none applied): the share
    its message's passages ahead of it left it (of the fused score with the pointers'
    part, which spread_messages spread: 0.5 per passage), the share of its raised score
    its neighbouring messages gave, and the asked time's factor."""
    pid = passage.id
    fused, spread, raised = scores.fused[pid], scores.spread[pid], scores.raised[pid]
    share = spread / fused if fused else 1.0
    gain = raised - spread
    neighbour = gain / raised if gain > 0.0 else None
    factor = time_factor(passage, asked) if asked.dated or pid in head else 1.0
    return (
        None if share == 1.0 else share,
        neighbour,
        None if factor == 1.0 else factor,
    )


def _cited_messages(
    store: FactStore,
    project: str,
    q: Question,
    index: VectorIndex,
    roles: Sequence[Role],
    filters: FactFilter,
    read: Mapping[str, Fact],
) -> dict[str, int]:
    """The messages cited by the visible facts nearest the question, ranked by the
    first fact citing each (empty if the model or the index failed: the passages are
    then ranked as without facts, and nothing more is degraded). A fact in `read` (read
    by this recall, through the same roles and filters) is not read again."""
    hits = q.nearest(index, project, "fact", POINTER_DEPTH, roles)
    if not hits:
        return {}
    # The store's facts, as the recall may see them: a fact deleted, erased, of a role
    # not asked for or hidden by a filter points at nothing.
    unread = [h.id for h in hits if h.id not in read]
    pointers = {p.id: p for p in store.fact_pointers(project, unread)} if unread else {}
    facts = (read.get(h.id) or pointers.get(h.id) for h in hits)
    return cited_message_ranks(
        f for f in facts if f is not None and f.source_role in roles and filters.admits(f)
    )


def _passages_in_order(
    store: MessageStore, project: str, ids: list[str], messages: MessageFilter | None
) -> Iterator[Passage]:
    """The passages of these ids that pass the filter, in the ids' order, read a chunk
    at a time: the bundle usually closes long before the last of hundreds of ids. The
    chunks double (64, 128, 256...): a large budget needs two reads, not three."""
    for chunk, _ in doubling_chunks(ids, PASSAGE_CHUNK):
        yield from store.passages_by_ids(project, chunk, messages)


def _hit_times(scores: Mapping[str, float], hits: Iterable[Hit]) -> dict[str, str] | None:
    """Each candidate's message time as its hits carry it ("" for a message that holds
    none); None if a candidate's hits carry none (indexed before times were kept)."""
    times = {h.id: h.occurred_at for h in hits if h.occurred_at is not None}
    return times if all(pid in times for pid in scores) else None


def _names_one(passage: Passage, subjects: frozenset[str]) -> bool:
    """Whether the passage names one of these entities, found as in a question."""
    return any(span.key in subjects for span in candidate_spans(passage.quote))
