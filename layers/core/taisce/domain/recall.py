"""Recall: the steps that fill one budgeted bundle from memory.

1. Exact entity names in the question, then links for up to two hops.
2. Similar entity names (vector search), if no exact name matched, then links.
3. Reports, if nothing matched or `themes` is true.
4. Passages, with whatever budget is left.

All steps share one Bundle: items go in whole and in order, and the first that does
not fit closes it. Steps 2-4 need an embedding model; without one they do not run,
and when the model or an index fails during a recall the step is skipped: the
recall still answers, and `degraded` names each surface in effect that was lost.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from .budget import Bundle, passage_characters, report_characters
from .controls import RecallControls
from .fact_ranking import (
    POINTER_DEPTH,
    cited_message_ranks,
    pointer_scores,
)
from .fact_step import fill_facts
from .filters import FactFilter, MessageFilter
from .model import Fact, Hit, Passage, Role
from .names import QuestionNames, candidate_spans
from .passage_ranking import (
    PASSAGE_DEPTH,
    RRF_K,
    AskedTime,
    add_neighbours,
    asked_time,
    best_first,
    distinct_passages,
    doubling_chunks,
    fused_scores,
    order_by_times,
    order_passages,
    order_passages_lazily,
    reorder_head,
    spread_messages,
    time_factor,
)
from .ports.facts import FactStore
from .ports.messages import MessageStore
from .ports.store import Store
from .ports.vectors import Embedder, VectorIndex
from .question_vector import Meaning, Question, attempt
from .recalled import (
    PassageWhy,
    RecallAnswer,
    RecalledPassage,
    RecalledReport,
)
from .report_ranking import REPORT_DEPTH, hierarchy_of, nearest_reports, themed_reports
from .similar_names import similar_names

SEMANTIC_SURFACES = ("reports", "passages")
# Passages read from the store at a time while the bundle fills.
PASSAGE_CHUNK = 64


@dataclass(frozen=True)
class Semantic:
    """What steps 2-4 need: a model for the question and an index to search."""

    embedder: Embedder
    index: VectorIndex
    # A model across the network (Bedrock) is asked for the question's vector at the
    # start of the recall, beside the store's first reads (Question). A local model
    # is not: it takes the same cores the reads need (measured: no gain, 2 cores).
    early_vector: bool = False


def recall(
    store: Store,
    project: str,
    question: str,
    controls: RecallControls,
    *,
    semantic: Semantic | None,
    now: str,
) -> RecallAnswer:
    """One recall; `now` (a stored-form timestamp) is when facts must hold unless
    the request sent `as_of`."""
    bundle = Bundle(controls.max_characters, controls.max_rows)
    surfaces = controls.surfaces
    filters = controls.fact_filter(now)
    q = None
    if semantic is not None:
        q = Question(question, semantic.embedder, early=semantic.early_vector)
    names = QuestionNames(question)
    # Only names that facts of the asked roles use count: what was not asked for
    # cannot shape the answer (a tool's longer name cannot hide the user's).
    # An alias found in the question stands for its entity (domain/aliases.py).
    found = store.resolve_names(project, names.keys(), controls.source_roles)
    picked = names.matches(found)
    matched = list(dict.fromkeys(found[k] for k in picked))
    # The names as the question wrote them (an alias too) are not asked words.
    said = [*matched, *picked]
    meaning = Meaning(q, semantic.index) if q is not None and semantic is not None else None
    lost: set[str] = set()
    # The facts steps 1 and 2 read: step 4 follows the facts nearest the question to
    # their messages, and two in three of those are facts already read (real
    # conversations), which it then need not read again.
    read: dict[str, Fact] = {}
    if matched and "facts" in surfaces:
        fill_facts(
            store,
            project,
            question,
            matched,
            controls,
            bundle,
            filters,
            meaning,
            names=said,
            read=read,
        )
    if semantic is None or q is None:
        lost |= {s for s in surfaces if s in SEMANTIC_SURFACES}
    else:
        lost |= _semantic_steps(
            store, project, question, controls, bundle, matched, semantic, q, filters, said, read
        )
    return RecallAnswer(
        controls,
        bundle.characters,
        bundle.truncated,
        [s for s in surfaces if s in lost],
        bundle.facts,
        bundle.reports,
        bundle.passages,
    )


def _semantic_steps(
    store: Store,
    project: str,
    question: str,
    controls: RecallControls,
    bundle: Bundle,
    matched: list[str],
    semantic: Semantic,
    q: Question,
    filters: FactFilter,
    said: Sequence[str] = (),
    read: dict[str, Fact] | None = None,
) -> set[str]:
    """Steps 2-4; returns the surfaces that could not run. `read`: the facts step 1
    read (step 2 adds its own)."""
    read = {} if read is None else read
    lost: set[str] = set()
    surfaces, roles = controls.surfaces, controls.source_roles
    index = semantic.index

    # Step 2: similar names (the question's name-like spans, by spelling and by
    # meaning: domain/similar_names.py), when no exact name matched.
    if not matched:
        similar = similar_names(
            store, project, question, roles, embedder=semantic.embedder, index=index
        )
        if similar.failed and "facts" in surfaces:
            lost.add("facts")
        matched = [m.key for m in similar.matches]
        if matched and "facts" in surfaces and not bundle.truncated:
            # Ranked as in step 1, by the question with each span that found a name
            # read as that name ("Where is Atlas Moren employed?" asks about Atlas
            # Moran: the misspelling would pull the question's vector away).
            asked = question
            for m in similar.matches:
                asked = asked.replace(m.span, m.key)
            meaning = Meaning(q if asked == question else Question(asked, q.embedder), index)
            spans = [m.span for m in similar.matches]
            fill_facts(
                store,
                project,
                asked,
                matched,
                controls,
                bundle,
                filters,
                meaning,
                "similar_name",
                names=spans,
                read=read,
            )

    # Step 3: reports, when nothing matched or themes is asked for, nearest the
    # question first (domain/report_ranking.py). A report sums up facts that a filter
    # cannot cut out of it, so a filtered recall returns none.
    if "reports" in surfaces and (not matched or controls.themes) and not controls.filtered:
        meaning = Meaning(q, index)
        if matched:
            reports, reached = hierarchy_of(
                matched,
                lambda key: store.reports_of_entity(project, key, roles),
                lambda ids: store.reports_by_ids(project, ids),
            )
            # Themes come from the graph: if the model fails, words alone order them
            # and `reports` is not degraded (as for facts).
            ids = [r.id for r in reports]
            similarities = meaning.similarities(project, "report", ids) if ids else None
            chosen = themed_reports(question, reports, reached, similarities, [*said, *matched])
        else:
            nearest = q.nearest(index, project, "report", REPORT_DEPTH, roles)
            lexical = attempt(
                "report text search",
                lambda: index.search_text(project, "report", question, REPORT_DEPTH, roles),
            )
            if nearest is None:
                # What words still find is returned, but the vectors' part is lost.
                lost.add("reports")
            ids = list(dict.fromkeys(h.id for h in [*(nearest or ()), *(lexical or ())]))
            held = [r for r in store.reports_by_ids(project, ids) if r.role in roles]
            similarities = None
            if nearest is not None:
                similarities = {h.id: h.score for h in nearest}
                unscored = [r.id for r in held if r.id not in similarities]
                if unscored:
                    more = meaning.similarities(project, "report", unscored)
                    similarities.update(more or {})
            chosen = nearest_reports(question, held, similarities)
        for scored in chosen:
            why = None
            if controls.explain:
                why = scored.why()
            item = RecalledReport(scored.report, why)
            if not bundle.add("reports", item, report_characters(scored.report)):
                break

    # Step 4: passages, with whatever budget is left, by the question's meaning and
    # words fused (domain/passage_ranking.py), near-duplicates dropped.
    if "passages" in surfaces and not bundle.truncated:
        k = controls.max_rows + 1 - bundle.rows
        depth = max(k, PASSAGE_DEPTH)
        # Words first: the question's vector may still be on its way (Question).
        lexical = attempt(
            "passage text search",
            lambda: index.search_text(project, "passage", question, depth, roles),
        )
        nearest = q.nearest(index, project, "passage", depth, roles)
        if nearest is None:
            # Listed even when words still find something: the answer lacks what the
            # vectors would have found. What was found is still returned.
            lost.add("passages")
        scores = fused_scores(nearest or [], lexical or [])
        # The facts nearest the question point at the messages they cite
        # (domain/fact_ranking.py): a third ranking, over the passages found.
        ranks = _cited_messages(store, project, q, index, roles, filters, read)
        for pid, added in pointer_scores(list(scores), ranks, RRF_K).items():
            scores[pid] += added
        # A message's later passages yield to other messages (domain/passage_ranking.py).
        fused = scores
        spread = spread_messages(fused)
        messages = controls.message_filter()
        wanted = messages if messages.active else None
        asked = asked_time(question)
        # Each hit carries its message's storing position (the index keeps it with the
        # vector): the neighbour signal costs no read. Only candidates shape it, and a
        # filtered recall reads them all first, so that a message the filters hide
        # gives its neighbours nothing.
        positions = {
            h.id: h.position for h in (*(nearest or ()), *(lexical or ())) if h.position is not None
        }
        restricted = wanted is not None or filters.subjects is not None
        found: list[Passage] = []
        if restricted:
            # A filtered recall reads every candidate first (with times if a named month
            # or day reorders by each message's time).
            found = store.passages_by_ids(project, sorted(spread), wanted, times=asked.dated)
            if filters.subjects is not None:
                found = [p for p in found if _names_one(p, filters.subjects)]
            if restricted:
                positions = {p.id: positions[p.id] for p in found if p.id in positions}
        scores = add_neighbours(spread, positions)
        # The passages the "when" factor was applied to (all of them when dated).
        head: set[str] = set()
        ordered: Iterable[Passage]
        if asked.dated and restricted:
            ordered = order_passages(found, scores, asked)
        elif asked.dated and not asked.when and (times := _hit_times(scores, nearest, lexical)):
            # A named month or day reorders every candidate by its message's time, which
            # each hit carries (the index keeps it with the vector): the order is known
            # before any read, and passages are read in it as the bundle fills. Their
            # times come from the hits too (for `explain`'s factor).
            ordered = (
                p._replace(occurred_at=times[p.id] or None)
                for p in _passages_in_order(
                    store, project, order_by_times(scores, times, asked), None
                )
            )
        elif asked.dated:
            # The same order where a hit lacks its time (indexed before times were kept)
            # or "when" needs each passage's text: read with times, a growing chunk at a
            # time, until no unread passage can pass those read.
            ordered = order_passages_lazily(
                [pid for _, pid in best_first(scores)],
                lambda ids: store.passages_by_ids(project, ids, None, times=True),
                scores,
                asked,
                PASSAGE_CHUNK,
            )
        else:
            # The fused order: read a chunk at a time as the bundle fills ("when" reorders
            # the first chunk's passages only: domain/passage_ranking.py).
            if restricted:
                ordered = sorted(found, key=lambda p: (-scores[p.id], p.id))
            else:
                ordered = _passages_in_order(
                    store, project, [pid for _, pid in best_first(scores)], wanted
                )
            if asked.when:
                ordered = reorder_head(ordered, scores, asked, head)
        kept = distinct_passages(ordered)
        # Ranks for `explain` only (800 entries at depth 400: not built otherwise).
        explained = controls.explain
        vector_rank = {h.id: n for n, h in enumerate(nearest or (), 1)} if explained else {}
        word_rank = {h.id: n for n, h in enumerate(lexical or (), 1)} if explained else {}
        for passage in kept:
            why = None
            if explained:
                why = PassageWhy(
                    vector_rank.get(passage.id),
                    word_rank.get(passage.id),
                    ranks.get(passage.message_id),
                    *_passage_factors(passage, fused, spread, scores, asked, head),
                )
            item = RecalledPassage(passage, why)
            if not bundle.add("passages", item, passage_characters(passage)):
                break
    return lost


def _passage_factors(
    passage: Passage,
    fused: Mapping[str, float],
    spread: Mapping[str, float],
    raised: Mapping[str, float],
    asked: AskedTime,
    head: set[str],
) -> tuple[float | None, float | None, float | None]:
    """`why`'s factors of a passage's fused score (None where none applied): the share
    its message's passages ahead of it left it, the share of its raised score its
    neighbouring messages gave, and the asked time's factor."""
    share = spread[passage.id] / fused[passage.id] if fused[passage.id] else 1.0
    gain = raised[passage.id] - spread[passage.id]
    neighbour = gain / raised[passage.id] if gain > 0.0 else None
    factor = time_factor(passage, asked) if asked.dated or passage.id in head else 1.0
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


def _hit_times(
    scores: Mapping[str, float], nearest: Sequence[Hit] | None, lexical: Sequence[Hit] | None
) -> dict[str, str] | None:
    """Each candidate's message time as its hits carry it ("" for a message that holds
    none); None if a candidate's hits carry none (indexed before times were kept)."""
    times = {
        h.id: h.occurred_at
        for hits in (nearest or (), lexical or ())
        for h in hits
        if h.occurred_at is not None
    }
    return times if all(pid in times for pid in scores) else None


def _names_one(passage: Passage, subjects: frozenset[str]) -> bool:
    """Whether the passage names one of these entities, found as in a question."""
    return any(span.key in subjects for span in candidate_spans(passage.quote))
