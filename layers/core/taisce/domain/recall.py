"""Recall: the steps that fill one budgeted bundle from memory, in order.

1. Exact entity names in the question, then links for up to two hops (fact_step).
2. Similar entity names, if no exact name matched, then links (similar_step).
3. Reports, if nothing matched or `themes` is true (report_step).
4. Passages, with whatever budget is left (passage_step).

Every step reads one RecallContext (domain/recall_context.py) and fills its Bundle:
items go in whole and in order, and the first that does not fit closes it. Steps 2-4
need an embedding model; without one they do not run, and when the model or an index
fails during a recall the step is skipped: the recall still answers, and `degraded`
names each surface in effect that was lost.
"""

from __future__ import annotations

from .controls import RecallControls
from .fact_step import FactAsk, exact_names, fill_facts
from .passage_step import passage_step
from .ports.spans import NO_SPANS, Spans
from .ports.store import Store
from .recall_context import RecallContext
from .recalled import RecallAnswer
from .report_step import report_step
from .semantic import Semantic
from .similar_step import similar_step

__all__ = ["SEMANTIC_SURFACES", "Semantic", "recall"]

SEMANTIC_SURFACES = ("reports", "passages")


def recall(
    store: Store,
    project: str,
    question: str,
    controls: RecallControls,
    *,
    semantic: Semantic | None,
    now: str,
    spans: Spans = NO_SPANS,
) -> RecallAnswer:
    """One recall; `now` (a stored-form timestamp) is when facts must hold unless
    the request sent `as_of`. Each step runs in a span of its own (`spans`)."""
    with spans.span("recall.open"):
        ctx = RecallContext.open(store, project, question, controls, semantic, now)
    with spans.span("recall.names"):
        names = exact_names(ctx)  # 1. names in the question, their facts and links
        if names.matched and ctx.wants("facts"):
            fill_facts(ctx, FactAsk(question, names.matched, ctx.meaning, names=names.said))
    lost: set[str] = set()
    meaning = ctx.meaning
    if meaning is None:
        lost = set(SEMANTIC_SURFACES)
    else:
        matched = names.matched
        if not matched:
            with spans.span("recall.similar_names"):
                similar = similar_step(ctx, meaning)  # 2. similar names, their facts
            matched, lost = similar.matched, similar.lost
        with spans.span("recall.reports"):
            lost |= report_step(ctx, meaning, matched, names.said)  # 3. reports
        with spans.span("recall.passages"):
            lost |= passage_step(ctx, meaning)  # 4. passages, with the budget left
    bundle = ctx.bundle
    return RecallAnswer(
        controls,
        bundle.characters,
        bundle.truncated,
        [s for s in controls.surfaces if s in lost],
        bundle.facts,
        bundle.reports,
        bundle.passages,
    )
