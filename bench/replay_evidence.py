"""What the replay tools (bench/fact_replay.py, bench/passage_replay.py) share: a
question's bundle refilled at each budget in step order, whole items until the first
that does not fit or the row limit, evidence any / all counted as `taisce bench quality`
counts it, and a variant's line of figures."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

BUDGETS = (1000, 4000, 16000)

# A bundle's items in step order: each its characters and the messages it cites.
Items = Sequence[tuple[int, set[str]]]
Figures = dict[str, dict[int, tuple[float, float]]]


def evidence_recall(questions: Iterable[tuple[str, set[str], Items]], max_rows: int) -> Figures:
    """Evidence any / all per budget, over all questions ("all") and per category, from
    each question's (category, evidence, items)."""
    counts: dict[str, dict[int, list[int]]] = {}
    for category, evidence, items in questions:
        for budget in BUDGETS:
            characters = 0
            covered: set[str] = set()
            for rows, (size, cited) in enumerate(items):
                if rows >= max_rows or characters + size > budget:
                    break
                characters += size
                covered |= cited
            for key in ("all", category):
                c = counts.setdefault(key, {b: [0, 0, 0] for b in BUDGETS})[budget]
                c[0] += 1
                c[1] += bool(covered & evidence)
                c[2] += evidence <= covered
    return {
        key: {b: (c[1] / c[0], c[2] / c[0]) for b, c in by_budget.items()}
        for key, by_budget in counts.items()
    }


def figures_line(name: str, result: Figures) -> str:
    """A variant's any / all at each budget, and multi-hop's where there is any."""
    cells = "  ".join(f"{100 * a:.1f}/{100 * al:.1f}" for a, al in result["all"].values())
    multi = result.get("multi-hop")
    extra = ""
    if multi:
        multi_cells = "  ".join(f"{100 * a:.1f}/{100 * al:.1f}" for a, al in multi.values())
        extra = f"  (multi-hop {multi_cells})"
    return f"{name:45} {cells}{extra}"
