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

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..ports import Embedder, Hit, Store, VectorIndex, VectorKind
from .budget import Bundle, fact_characters
from .controls import RecallControls
from .filters import FactFilter
from .model import Fact, Passage, Role
from .names import QuestionNames, candidate_spans
from .reports import Report
from .similar_names import similar_names

logger = logging.getLogger(__name__)

SEMANTIC_SURFACES = ("reports", "passages")
REPORTS = 5


@dataclass(frozen=True)
class Semantic:
    """What steps 2-4 need: a model for the question and an index to search."""

    embedder: Embedder
    index: VectorIndex


@dataclass(frozen=True, slots=True)
class _Link:
    """How a hop-2 entity was reached: the names walked from the matched one."""

    path: tuple[str, ...]


def _neighbours(hop1: list[Fact], matched: set[str]) -> dict[str, _Link]:
    """Entities one link away from the matched names, in the order first reached."""
    links: dict[str, _Link] = {}
    for fact in hop1:
        if fact.subject_key in matched and fact.object_key and fact.object_key not in matched:
            links.setdefault(fact.object_key, _Link((fact.subject, fact.object)))
        elif fact.object_key in matched and fact.subject_key not in matched:
            links.setdefault(fact.subject_key, _Link((fact.object, fact.subject)))
    return links


def _reached_through(fact: Fact, order: dict[str, int]) -> str:
    ends = [k for k in (fact.subject_key, fact.object_key) if k in order]
    return min(ends, key=order.__getitem__)


def _fill_facts(
    store: Store,
    project: str,
    matched: list[str],
    controls: RecallControls,
    bundle: Bundle,
    filters: FactFilter,
) -> None:
    # A fact the filters hide is neither returned nor walked: only hop-1 facts that
    # passed them name the entities of hop 2.
    roles = controls.source_roles
    hop1: list[Fact] = []
    for fact in store.facts_about(
        project, matched, roles, limit=controls.max_rows + 1, filters=filters
    ):
        if not bundle.add("facts", fact.wire(), fact_characters(fact)):
            return  # closed: nothing more is read
        hop1.append(fact)
    if controls.hops < 2:
        return
    links = _neighbours(hop1, set(matched))
    if not links:
        return
    order = {key: i for i, key in enumerate(links)}
    hop2 = store.facts_about(
        project,
        list(links),
        roles,
        limit=controls.max_rows + 1 - bundle.rows,
        exclude={f.id for f in hop1},
        filters=filters,
    )
    for fact in hop2:
        path = links[_reached_through(fact, order)].path
        item = fact.wire()
        item["path"] = list(path)
        if not bundle.add("facts", item, fact_characters(fact, path)):
            return


class _Question:
    """The question's vector, made at most once per recall and only if a step needs it."""

    def __init__(self, text: str, embedder: Embedder) -> None:
        self.text = text
        self.embedder = embedder
        self._vector: Sequence[float] | None = None
        self.failed = False

    def vector(self) -> Sequence[float] | None:
        if self._vector is None and not self.failed:
            try:
                self._vector = self.embedder.embed([self.text])[0]
            except Exception:  # any model failure degrades the recall, never fails it
                logger.exception("embedding the question failed")
                self.failed = True
        return self._vector

    def nearest(
        self, index: VectorIndex, project: str, kind: VectorKind, k: int, roles: Sequence[Role]
    ) -> list[Hit] | None:
        """The k items of `kind` nearest the question, or None if the model or the
        index failed."""
        vector = self.vector()
        if vector is None:
            return None
        return _attempt(f"{kind} search", lambda: index.search(project, kind, vector, k, roles))


def _attempt(what: str, search: Callable[[], list[Hit]]) -> list[Hit] | None:
    try:
        return search()
    except Exception:  # an index failure degrades the recall, never fails it
        logger.exception("%s failed during a recall", what)
        return None


def recall(
    store: Store,
    project: str,
    question: str,
    controls: RecallControls,
    *,
    semantic: Semantic | None,
    now: str,
) -> dict[str, object]:
    """One recall; `now` (a stored-form timestamp) is when facts must hold unless
    the request sent `as_of`."""
    bundle = Bundle(controls.max_characters, controls.max_rows)
    surfaces = controls.surfaces
    filters = controls.fact_filter(now)
    names = QuestionNames(question)
    # Only names that facts of the asked roles use count: what was not asked for
    # cannot shape the answer (a tool's longer name cannot hide the user's).
    # An alias found in the question stands for its entity (domain/aliases.py).
    found = store.resolve_names(project, names.keys(), controls.source_roles)
    matched = list(dict.fromkeys(found[k] for k in names.matches(found)))
    if matched and "facts" in surfaces:
        _fill_facts(store, project, matched, controls, bundle, filters)
    if semantic is None:
        lost = {s for s in surfaces if s in SEMANTIC_SURFACES}
    else:
        lost = _semantic_steps(
            store, project, question, controls, bundle, matched, semantic, filters
        )
    return {
        "controls": controls.echo(),
        "characters": bundle.characters,
        "truncated": bundle.truncated,
        "degraded": [s for s in surfaces if s in lost],
        **bundle.items,
    }


def _semantic_steps(
    store: Store,
    project: str,
    question: str,
    controls: RecallControls,
    bundle: Bundle,
    matched: list[str],
    semantic: Semantic,
    filters: FactFilter,
) -> set[str]:
    """Steps 2-4; returns the surfaces that could not run."""
    lost: set[str] = set()
    surfaces, roles = controls.surfaces, controls.source_roles
    q = _Question(question, semantic.embedder)
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
            _fill_facts(store, project, matched, controls, bundle, filters)

    # Step 3: reports, when nothing matched or themes is asked for. A report sums up
    # facts that a filter cannot cut out of it, so a filtered recall returns none.
    if "reports" in surfaces and (not matched or controls.themes) and not controls.filtered:
        if matched:
            reports = _themes(store, project, matched, roles)
        else:
            hits = q.nearest(index, project, "report", REPORTS, roles)
            reports = None if hits is None else store.reports_by_ids(project, [h.id for h in hits])
        if reports is None:
            lost.add("reports")
        else:
            for report in reports:
                if not bundle.add("reports", report.wire()):
                    break

    # Step 4: passages, with whatever budget is left, nearest the question by meaning.
    # Fusing BM25 in lowered evidence recall on the development set (see README), so
    # words rank passages only when the model or the vector index fails.
    if "passages" in surfaces and not bundle.truncated:
        k = controls.max_rows + 1 - bundle.rows
        hits = q.nearest(index, project, "passage", k, roles)
        if hits is None:
            # Listed even when words still find something: the answer lacks what the
            # vectors would have found. What was found is still returned.
            lost.add("passages")
            hits = _attempt(
                "passage text search",
                lambda: index.search_text(project, "passage", question, k, roles),
            )
        ids = [h.id for h in hits or []]
        messages = controls.message_filter()
        found = store.passages_by_ids(project, ids, messages if messages.active else None)
        for passage in found:
            if filters.subjects is not None and not _names_one(passage, filters.subjects):
                continue
            if not bundle.add("passages", passage.wire()):
                break
    return lost


def _names_one(passage: Passage, subjects: frozenset[str]) -> bool:
    """Whether the passage names one of these entities, found as in a question."""
    return any(span.key in subjects for span in candidate_spans(passage.quote))


def _themes(store: Store, project: str, matched: list[str], roles: Sequence[Role]) -> list[Report]:
    """The reports of the matched entities, each after its ancestors (top down)."""
    ordered: dict[str, Report] = {}
    for key in matched:
        for report in store.reports_of_entity(project, key, roles):
            chain = [report]
            parent = report.parent_id
            while parent and parent not in ordered:
                found = store.reports_by_ids(project, [parent])
                if not found:
                    break
                chain.append(found[0])
                parent = found[0].parent_id
            for r in reversed(chain):
                ordered.setdefault(r.id, r)
    return list(ordered.values())
