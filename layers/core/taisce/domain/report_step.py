"""Recall step 3: reports, when nothing matched or `themes` is asked for, nearest the
question first (domain/report_ranking.py); with themes, the matched entities' reports.
A report sums up facts that a filter cannot cut out of it, so a filtered recall returns
none."""

from __future__ import annotations

from collections.abc import Sequence

from .budget import report_characters
from .question_vector import Meaning, attempt
from .recall_context import RecallContext
from .recalled import RecalledReport
from .report_ranking import (
    REPORT_DEPTH,
    ScoredReport,
    hierarchy_of,
    nearest_reports,
    themed_reports,
)


def report_step(
    ctx: RecallContext, meaning: Meaning, matched: list[str], said: Sequence[str]
) -> set[str]:
    """Step 3 for the entities steps 1 and 2 matched (`said`: step 1's names as the
    question wrote them); returns {"reports"} if the vectors' part was lost."""
    controls = ctx.controls
    if not ctx.wants("reports") or (matched and not controls.themes) or controls.filtered:
        return set()
    lost: set[str] = set()
    chosen = _themed(ctx, meaning, matched, said) if matched else _nearest(ctx, meaning, lost)
    for scored in chosen:
        why = scored.why() if controls.explain else None
        if not ctx.bundle.add(
            "reports", RecalledReport(scored.report, why), report_characters(scored.report)
        ):
            break
    return lost


def _themed(
    ctx: RecallContext, meaning: Meaning, matched: list[str], said: Sequence[str]
) -> list[ScoredReport]:
    """The matched entities' reports, each after its ancestors. Themes come from the
    graph: if the model fails, words alone order them and `reports` is not degraded
    (as for facts)."""
    project, roles = ctx.project, ctx.roles
    reports, reached = hierarchy_of(
        matched,
        lambda key: ctx.store.reports_of_entity(project, key, roles),
        lambda ids: ctx.store.reports_by_ids(project, ids),
    )
    ids = [r.id for r in reports]
    similarities = meaning.similarities(project, "report", ids) if ids else None
    return themed_reports(ctx.question, reports, reached, similarities, [*said, *matched])


def _nearest(ctx: RecallContext, meaning: Meaning, lost: set[str]) -> list[ScoredReport]:
    """The reports nearest the question by vector and by words; adds "reports" to
    `lost` if the vectors failed (what words still find is returned)."""
    project, roles, index = ctx.project, ctx.roles, meaning.index
    # A question mostly in a script an English-only model does not know ("박지훈은 어디에
    # 살아요?") is near any report in such a script by its cosines (MiniLM: above the
    # floor): words alone find and keep its reports (domain/languages.py).
    readable = ctx.model_reads_question()
    nearest = (
        meaning.question.nearest(index, project, "report", REPORT_DEPTH, roles)
        if readable
        else None
    )
    lexical = attempt(
        "report text search",
        lambda: index.search_text(project, "report", ctx.question, REPORT_DEPTH, roles),
    )
    if nearest is None and readable:
        lost.add("reports")
    ids = list(dict.fromkeys(h.id for h in [*(nearest or ()), *(lexical or ())]))
    held = [r for r in ctx.store.reports_by_ids(project, ids) if r.role in roles]
    similarities = None
    if nearest is not None:
        similarities = {h.id: h.score for h in nearest}
        unscored = [r.id for r in held if r.id not in similarities]
        if unscored:
            similarities.update(meaning.similarities(project, "report", unscored) or {})
    return nearest_reports(ctx.question, held, similarities, ctx.floors.report)
