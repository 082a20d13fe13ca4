"""Draw docs/quality-chart.svg from the evidence-recall tables of docs/quality.md.

    .venv/bin/python -m bench.quality_chart [--check]

The chart shows "evidence any" for Taisce and each baseline at each budget, from the
tables of the section named below, so the picture always says what the page's figures
say: rerun after the tables change (`--check` exits 1 when the committed chart differs).
Plain SVG written here: no plotting library is needed for a dozen bars.
"""

from __future__ import annotations

import argparse
import re
import sys
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "quality.md"
CHART = ROOT / "docs" / "quality-chart.svg"
SECTION = "### `locomo-dev.json`"
METHODS = (
    ("taisce", "Taisce", "#0f766e"),
    ("hybrid-passages", "hybrid, same passages", "#7c3aed"),
    ("hybrid", "hybrid, whole messages", "#d97706"),
    ("dense", "dense", "#2563eb"),
    ("bm25", "BM25", "#6b7280"),
    ("recency", "most recent", "#c4c4c4"),
)

_BUDGET = re.compile(r"^#### max_characters ([\d,]+)$")
_ROW = re.compile(r"^\| ([\w-]+) \| ([\d.]+)% \|")
_DATASET = re.compile(r"^- dataset: .*?(\d[\d,]*) questions \((\d[\d,]*) with evidence")
_RUN = re.compile(r"on commit (\w+)\s*\((\d{4}-\d\d-\d\d)")


class ChartError(ValueError):
    """The page's tables are not where or what the chart expects."""


def read_figures(page: str) -> tuple[dict[int, dict[str, float]], dict[str, str]]:
    """Evidence any (%) per budget and method, and what the caption states, from the page."""
    start = page.find(SECTION)
    if start < 0:
        raise ChartError(f"no section {SECTION!r} in {PAGE.name}")
    end = page.find("\n### ", start + 1)
    lines = page[start : end if end > 0 else len(page)].splitlines()
    figures: dict[int, dict[str, float]] = {}
    facts: dict[str, str] = {}
    budget: int | None = None
    for line in lines:
        if match := _BUDGET.match(line):
            budget = int(match.group(1).replace(",", ""))
            figures[budget] = {}
        elif budget is not None and (match := _ROW.match(line)):
            figures[budget][match.group(1)] = float(match.group(2))
        elif match := _DATASET.match(line):
            facts["questions"] = match.group(2)
        elif line.startswith("#### ") and budget is not None:
            budget = None
    if run := _RUN.search(page):
        facts["commit"], facts["date"] = run.group(1), run.group(2)
    missing = [(b, m) for b in figures for m, _, _ in METHODS if m not in figures[b]]
    if not figures or missing or "questions" not in facts or "commit" not in facts:
        raise ChartError(f"incomplete tables in {SECTION!r}: missing {missing[:3]}")
    return figures, facts


def svg(figures: dict[int, dict[str, float]], facts: dict[str, str]) -> str:
    width, height = 760, 420
    left, right, top, bottom = 56, 16, 78, 92
    plot_w, plot_h = width - left - right, height - top - bottom
    budgets = sorted(figures)
    group_w = plot_w / len(budgets)
    bar_w = (group_w * 0.8) / len(METHODS)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" '
        'role="img" aria-labelledby="title desc">',
        '<title id="title">Evidence recall on LoCoMo: Taisce against five baselines</title>',
        '<desc id="desc">Share of questions whose evidence messages the bundle covers, '
        "at three character budgets, from the tables of docs/quality.md.</desc>",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        '<text x="16" y="26" font-size="16" font-weight="bold" fill="#111827">'
        "Evidence recall (any) on LoCoMo, first five conversations, messages only</text>",
        f'<text x="16" y="46" font-size="12" fill="#374151">{facts["questions"]} questions '
        "with evidence; the share whose evidence the bundle covers, at each budget "
        "(characters).</text>",
        f'<text x="16" y="62" font-size="12" fill="#374151">One run, commit '
        f"{escape(facts['commit'])}, {escape(facts['date'])}. Recall's settings were chosen "
        "on these conversations; see docs/quality.md.</text>",
    ]
    for tick in range(0, 101, 25):
        y = top + plot_h * (1 - tick / 100)
        out.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" '
            f'stroke="{"#9ca3af" if tick == 0 else "#e5e7eb"}" stroke-width="1"/>'
        )
        out.append(
            f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="11" text-anchor="end" '
            f'fill="#4b5563">{tick}%</text>'
        )
    for g, budget in enumerate(budgets):
        x0 = left + g * group_w + group_w * 0.1
        for i, (method, label, colour) in enumerate(METHODS):
            value = figures[budget][method]
            x = x0 + i * bar_w
            h = plot_h * value / 100
            y = top + plot_h - h
            out.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w - 3:.1f}" height="{h:.1f}" '
                f'fill="{colour}"><title>{escape(label)}: {value:.1f}%</title></rect>'
            )
            out.append(
                f'<text x="{x + (bar_w - 3) / 2:.1f}" y="{y - 4:.1f}" font-size="10" '
                f'text-anchor="middle" fill="#111827">{value:.1f}</text>'
            )
        out.append(
            f'<text x="{left + g * group_w + group_w / 2:.1f}" y="{top + plot_h + 18:.1f}" '
            f'font-size="12" text-anchor="middle" fill="#111827">{budget:,} characters</text>'
        )
    legend_y = height - 40
    x = float(left)
    for _, label, colour in METHODS:
        out.append(f'<rect x="{x:.1f}" y="{legend_y}" width="12" height="12" fill="{colour}"/>')
        out.append(
            f'<text x="{x + 16:.1f}" y="{legend_y + 10}" font-size="11" '
            f'fill="#111827">{escape(label)}</text>'
        )
        x += 28 + 6.2 * len(label)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the chart is stale")
    args = parser.parse_args(argv)
    figures, facts = read_figures(PAGE.read_text(encoding="utf-8"))
    drawn = svg(figures, facts)
    if args.check:
        current = CHART.read_text(encoding="utf-8") if CHART.exists() else ""
        if current != drawn:
            print(f"{CHART.relative_to(ROOT)} is stale: run python -m bench.quality_chart")
            return 1
        return 0
    CHART.write_text(drawn, encoding="utf-8")
    print(f"wrote {CHART.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
