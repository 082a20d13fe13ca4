"""docs/quality-chart.svg says what docs/quality.md's tables say (bench/quality_chart.py)."""

from __future__ import annotations

import pytest

from bench.quality_chart import PAGE, ChartError, main, read_figures, svg


def test_the_committed_chart_is_drawn_from_the_pages_tables() -> None:
    assert main(["--check"]) == 0, "run: python -m bench.quality_chart"


def test_the_chart_reads_each_method_at_each_budget() -> None:
    figures, facts = read_figures(PAGE.read_text(encoding="utf-8"))
    assert sorted(figures) == [1_000, 4_000, 16_000]
    assert figures[4_000]["taisce"] == 93.3 and figures[4_000]["hybrid"] == 76.8
    assert figures[4_000]["hybrid-passages"] == 81.7
    assert facts == {"questions": "996", "commit": "afc5ac3", "date": "2026-12-07"}
    drawn = svg(figures, facts)
    assert drawn.count("<rect x=") == 3 * 6 + 6  # the bars, then the legend's keys
    assert "93.3" in drawn and "Recall's settings were chosen" in drawn


def test_a_page_without_the_tables_is_refused() -> None:
    with pytest.raises(ChartError):
        read_figures("# Retrieval quality\n\nno tables here\n")
