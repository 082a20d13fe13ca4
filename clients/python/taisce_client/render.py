"""A recall bundle as text for a person at a terminal."""

from __future__ import annotations

from .models import Recall


def render_recall(bundle: Recall) -> str:
    """Facts (with role and path), reports (with path), passages, then the budget used."""
    lines: list[str] = []
    if bundle.facts:
        lines.append(f"Facts ({len(bundle.facts)})")
        for fact in bundle.facts:
            lines.append(f"  [{fact.source_role}] {fact.statement}")
            if fact.path:
                lines.append(f"      via {' → '.join(fact.path)}")
            if fact.context:
                lines.append(f"      context: {fact.context}")
            if fact.quote:
                lines.append(f"      quote: “{fact.quote}”")
    if bundle.reports:
        lines.append(f"Reports ({len(bundle.reports)})")
        for report in bundle.reports:
            lines.append(f"  {' > '.join(report.path)}")
            lines.append(f"      {report.summary}")
    if bundle.passages:
        lines.append(f"Passages ({len(bundle.passages)})")
        for passage in bundle.passages:
            where = f" {passage.source}" if passage.source else ""
            lines.append(f"  [{passage.role}{where}] “{passage.quote}”")
    if not lines:
        lines.append("Nothing found.")
    controls = bundle.controls
    used = f"{bundle.characters:,} of {controls.max_characters:,} characters"
    notes = [used, f"hops {controls.hops}", f"roles {', '.join(controls.source_roles)}"]
    if bundle.truncated:
        notes.append("truncated: more was found than fits")
    if bundle.degraded:
        notes.append(f"could not run: {', '.join(bundle.degraded)}")
    lines.append("— " + "; ".join(notes))
    return "\n".join(lines)
