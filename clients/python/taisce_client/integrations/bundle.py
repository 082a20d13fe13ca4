"""A recall bundle as items and as text for a model's context (no framework needed).

Every integration hands the bundle on in one of these two forms: items (one per fact,
report and passage, with what the API says about each) for retrievers, and text for
prompts and tool results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..models import Recall

Kind = Literal["fact", "report", "passage"]


@dataclass(frozen=True, slots=True)
class BundleItem:
    """One thing a recall found: its text and what the API says about it."""

    kind: Kind
    id: str
    text: str
    metadata: dict[str, Any]


def _kept(**given: Any) -> dict[str, Any]:
    """The metadata that applies: None (not sent by the API) is left out."""
    return {k: v for k, v in given.items() if v is not None}


def bundle_items(bundle: Recall) -> list[BundleItem]:
    """Facts, then reports, then passages, each in the bundle's order (its ranking)."""
    items: list[BundleItem] = []
    for rank, fact in enumerate(bundle.facts):
        meta = _kept(
            kind="fact",
            id=fact.id,
            rank=rank,
            role=fact.source_role,
            subject=fact.subject,
            predicate=fact.predicate,
            object=fact.object,
            message_id=fact.message_id,
            quote=fact.quote,
            context=fact.context,
            valid_from=fact.valid_from,
            valid_to=fact.valid_to,
            recorded_at=fact.recorded_at,
            path=fact.path,
            why=fact.why,
        )
        items.append(BundleItem("fact", fact.id, fact.statement, meta))
    for rank, report in enumerate(bundle.reports):
        meta = _kept(
            kind="report",
            id=report.id,
            rank=rank,
            title=report.title,
            path=report.path,
            source_messages=report.source_messages,
            why=report.why,
        )
        items.append(BundleItem("report", report.id, report.summary, meta))
    for rank, passage in enumerate(bundle.passages):
        meta = _kept(
            kind="passage",
            id=passage.id,
            rank=rank,
            role=passage.role,
            source=passage.source,
            message_id=passage.message_id,
            start=passage.start,
            end=passage.end,
            why=passage.why,
        )
        items.append(BundleItem("passage", passage.id, passage.quote, meta))
    return items


def bundle_text(bundle: Recall) -> str:
    """The bundle for a model: facts with who said them, reports, passages with their
    role and source. Empty when the recall found nothing."""
    lines: list[str] = []
    if bundle.facts:
        lines.append("Facts:")
        for fact in bundle.facts:
            lines.append(f"- {fact.statement} (said by {fact.source_role})")
            if fact.path:
                lines.append(f"  via {' → '.join(fact.path)}")
            if fact.quote:
                lines.append(f"  quote: “{fact.quote}”")
    if bundle.reports:
        lines.append("Reports:")
        lines.extend(f"- {report.title}: {report.summary}" for report in bundle.reports)
    if bundle.passages:
        lines.append("Passages:")
        for passage in bundle.passages:
            where = f", {passage.source}" if passage.source else ""
            lines.append(f"- [{passage.role}{where}] “{passage.quote}”")
    if bundle.truncated:
        lines.append("(more was found than fits the budget)")
    return "\n".join(lines)
