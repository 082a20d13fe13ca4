"""The figures of a quality run: evidence covered per method, budget and category,
latency percentiles, and the markdown table `taisce bench quality` prints."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

TAISCE = "taisce"


def _percentiles(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None}
    if len(values) == 1:
        return {"p50": values[0], "p95": values[0]}
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": statistics.median(values), "p95": cuts[94]}


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _method_figures(
    records: Sequence[dict[str, Any]], method: str, budget: str, categories: Sequence[str]
) -> dict[str, Any]:
    answerable = [r for r in records if r["evidence"]]
    outcomes = [r["results"][method][budget] for r in answerable]
    by_category: dict[str, Any] = {}
    for category in categories:
        chosen = [r["results"][method][budget] for r in answerable if r["category"] == category]
        by_category[category] = {"questions": len(chosen), **_evidence(chosen)}
    every = [r["results"][method][budget] for r in records]
    figures: dict[str, Any] = {
        "questions": len(outcomes),
        **_evidence(outcomes),
        "by_category": by_category,
        "mean_characters": statistics.fmean(o["characters"] for o in outcomes)
        if outcomes
        else None,
        "latency_ms": _percentiles([o["ms"] for o in every]),
    }
    if method == TAISCE:
        figures.update(_taisce_figures(every))
    return figures


def _evidence(outcomes: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """The shares of these outcomes that covered any and all of their evidence."""
    return {
        "evidence_any": _share(sum(o["any"] for o in outcomes), len(outcomes)),
        "evidence_all": _share(sum(o["all"] for o in outcomes), len(outcomes)),
    }


def _taisce_figures(every: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What only taisce's outcomes hold: items per kind, truncation, degradation, errors."""
    items = [o["items"] for o in every if "items" in o]
    degraded: Counter[str] = Counter(s for o in every for s in o.get("degraded", ()))
    return {
        "mean_items": {
            kind: statistics.fmean(i[n] for i in items) if items else None
            for n, kind in enumerate(("facts", "reports", "passages"))
        },
        "truncated_share": _share(sum(o.get("truncated", False) for o in every), len(every)),
        # Mean characters per recall spent on reports citing no evidence message.
        "reports_without_evidence": statistics.fmean(
            o.get("reports_without_evidence", 0) for o in every
        )
        if every
        else None,
        "degraded": dict(degraded),
        "errors": sum(1 for o in every if "error" in o),
    }


def _no_answer_figures(records: Sequence[dict[str, Any]], method: str, budget: str) -> dict:
    outcomes = [r["results"][method][budget] for r in records if not r["evidence"]]
    return {
        "questions": len(outcomes),
        "mean_characters": statistics.fmean(o["characters"] for o in outcomes)
        if outcomes
        else None,
        "empty_share": _share(sum(o["characters"] == 0 for o in outcomes), len(outcomes)),
    }


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def summarise(
    records: Sequence[dict[str, Any]], methods: Sequence[str], budgets: Sequence[int]
) -> dict[str, Any]:
    categories = list(dict.fromkeys(r["category"] for r in records if r["evidence"]))
    per_budget = []
    for budget in budgets:
        key = str(budget)
        figures = {m: _method_figures(records, m, key, categories) for m in methods}
        ratios = {
            m: {
                "evidence_any": _ratio(figures[TAISCE]["evidence_any"], figures[m]["evidence_any"]),
                "evidence_all": _ratio(figures[TAISCE]["evidence_all"], figures[m]["evidence_all"]),
            }
            for m in methods
            if m != TAISCE
        }
        per_budget.append(
            {
                "budget": budget,
                "methods": figures,
                "taisce_over": ratios,
                "no_answer": {m: _no_answer_figures(records, m, key) for m in methods},
            }
        )
    return {"categories": categories, "budgets": per_budget}


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None, digits: int = 0) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def _times(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def markdown(report: dict[str, Any]) -> str:
    d, s = report["dataset"], report["settings"]
    categories = report["categories"]
    lines = [
        f"## Retrieval quality: {d['name']}",
        "",
        f"- dataset: {d['file']}; {d['conversations']} conversations, {d['messages']:,} "
        f"messages, {d['facts']:,} facts (in {d['conversations_with_facts']} "
        f"conversations), {d['questions']} questions ({d['answerable']} with evidence, "
        f"{d['no_answer']} without)",
        f"- Taisce: embeddings {s['embeddings']}, {s['store']} store, max_rows "
        f"{s['max_rows']}; recall with source_roles all four, hops {s['recall']['hops']}, "
        "default surfaces, max_characters = the budget",
        f"- speaker: {s['speaker_storage']}",
        f"- baselines: {s['item_characters']}",
        f"- {report['date']}, {report['machine']['cpu_count']} CPUs, "
        f"{report['seconds']:.1f} s in all",
    ]
    lines += [f"- note: {n}" for n in report["notes"][:20]]
    if len(report["notes"]) > 20:
        lines.append(f"- ... and {len(report['notes']) - 20} more notes (see --json)")
    lines += [
        "",
        "Evidence recall = share of questions with evidence whose evidence messages the "
        "bundle covers (any: at least one; all: every one). Category cells: any / all. "
        "Latency: Taisce through the gateway (authorizer, handler, JSON); baselines "
        "in-process ranking and packing (dense includes embedding the question).",
    ]
    cat_heads = "".join(f" {c} ({d['categories'][c]}) |" for c in categories)
    for block in report["budgets"]:
        lines += [
            "",
            f"### max_characters {block['budget']:,}",
            "",
            f"| method | evidence any | evidence all |{cat_heads} mean characters "
            "| p50 ms | p95 ms |",
            "|---|---:|---:|" + "---:|" * len(categories) + "---:|---:|---:|",
        ]
        for method, f in block["methods"].items():
            cells = "".join(
                f" {_pct(f['by_category'][c]['evidence_any'])} / "
                f"{_pct(f['by_category'][c]['evidence_all'])} |"
                for c in categories
            )
            lines.append(
                f"| {method} | {_pct(f['evidence_any'])} | {_pct(f['evidence_all'])} |{cells} "
                f"{_num(f['mean_characters'])} | {_num(f['latency_ms']['p50'], 2)} "
                f"| {_num(f['latency_ms']['p95'], 2)} |"
            )
    baselines = [m for m in s["methods"] if m != TAISCE]
    lines += [
        "",
        "### Taisce ÷ baseline (evidence any / all)",
        "",
        "| budget |" + "".join(f" ÷ {m} |" for m in baselines),
        "|---:|" + "---:|" * len(baselines),
    ]
    for block in report["budgets"]:
        cells = "".join(
            f" {_times(block['taisce_over'][m]['evidence_any'])} / "
            f"{_times(block['taisce_over'][m]['evidence_all'])} |"
            for m in baselines
        )
        lines.append(f"| {block['budget']:,} |{cells}")
    lines += [
        "",
        "### Taisce bundles",
        "",
        "| budget | facts | reports | passages (mean items) | characters on reports without "
        "evidence (mean) | truncated | degraded | errors |",
        "|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for block in report["budgets"]:
        t = block["methods"][TAISCE]
        items = t["mean_items"]
        degraded = ", ".join(f"{k} {v}" for k, v in t["degraded"].items()) or "none"
        lines.append(
            f"| {block['budget']:,} | {_num(items['facts'], 1)} | {_num(items['reports'], 1)} "
            f"| {_num(items['passages'], 1)} | {_num(t['reports_without_evidence'], 1)} "
            f"| {_pct(t['truncated_share'])} | {degraded} "
            f"| {t['errors']} |"
        )
    if d["no_answer"]:
        lines += [
            "",
            f"### Questions without evidence ({d['no_answer']}): characters returned",
            "",
            "| budget |" + "".join(f" {m} |" for m in s["methods"]),
            "|---:|" + "---:|" * len(s["methods"]),
        ]
        for block in report["budgets"]:
            cells = "".join(
                f" {_num(block['no_answer'][m]['mean_characters'])} "
                f"({_pct(block['no_answer'][m]['empty_share'])} empty) |"
                for m in s["methods"]
            )
            lines.append(f"| {block['budget']:,} |{cells}")
    return "\n".join(lines)
