"""Recall step 3's order (domain/report_ranking.py): scores by meaning and words, the
floor when nothing matched, parents before children with themes, ties stable."""

from __future__ import annotations

import random

from taisce.api.bodies import report_why
from taisce.domain.model import Report
from taisce.domain.report_ranking import (
    REPORTS,
    hierarchy_of,
    nearest_reports,
    score_reports,
    themed_reports,
)


def report(
    id: str, title: str, summary: str, parent: str | None = None, keys: tuple[str, ...] = ()
) -> Report:
    return Report(
        id=id,
        role="user",
        level=0 if parent is not None or id.startswith("c") else 1,
        parent_id=parent,
        title=title,
        summary=summary,
        path=(title,),
        source_messages=(),
        entity_keys=keys,
        component="x",
    )


MUSIC = report("c-music", "Maya and Orchestra", "Maya plays the violin in the orchestra.")
GARDEN = report("c-garden", "Tobias and Allotment", "Tobias grows tomatoes.")
WORK = report("c-work", "Orla and Ledger", "Orla works as an accountant.")


def test_words_alone_rank_reports_without_vectors() -> None:
    ranked = score_reports("who plays the violin?", [GARDEN, WORK, MUSIC], None)
    assert [s.report.id for s in ranked] == ["c-music", "c-garden", "c-work"]
    assert ranked[0].similarity is None and ranked[0].words > 0
    assert ranked[1].score == ranked[2].score == 0  # ties keep the given order


def test_meaning_and_words_are_weighed_together() -> None:
    sims = {"c-music": 0.2, "c-garden": 0.9, "c-work": 0.1}
    ranked = score_reports("who plays the violin?", [MUSIC, GARDEN, WORK], sims)
    # Garden: 0.5 x 0.9; music: 0.5 x 0.2 + 0.5 x words (near 1: every asked word).
    assert [s.report.id for s in ranked] == ["c-music", "c-garden", "c-work"]
    why = report_why(ranked[0].why())
    assert set(why) == {"step", "reason", "matched", "words", "similarity", "score"}
    assert why["step"] == "report" and why["matched"] is None and why["similarity"] == 0.2
    assert 0.9 < why["words"] <= 1.0
    assert abs(why["score"] - (0.5 * 0.2 + 0.5 * why["words"])) < 1e-3


def test_matched_names_are_not_asked_words() -> None:
    # "Maya" is in one title only; as the matched name it does not favour that report.
    sims = {"c-music": 0.1, "c-garden": 0.3}
    ranked = score_reports("What about Maya?", [MUSIC, GARDEN], sims, names=["Maya"])
    assert [s.report.id for s in ranked] == ["c-garden", "c-music"]
    assert all(s.words == 0 for s in ranked)


def test_nothing_matched_keeps_the_best_that_reach_the_floor_in_any_input_order() -> None:
    # Equal words (a one-letter word is not one), so meaning alone orders them.
    many = [report(f"c{n:02d}", f"Report {chr(97 + n)}", "violin") for n in range(12)]
    sims = {r.id: (n - 3) / 10 for n, r in enumerate(many)}  # the first three below 0
    expected = [r.id for r in sorted(many, key=lambda r: -sims[r.id])][:REPORTS]
    for seed in range(5):
        shuffled = list(many)
        random.Random(seed).shuffle(shuffled)
        got = [s.report.id for s in nearest_reports("violin", shuffled + shuffled[:3], sims)]
        assert got == expected
    below = nearest_reports("violin", many[:3], sims)
    assert below == []  # a negative cosine is far from the question
    # Without vectors (the model failed), a report needs some of the question's words.
    assert [s.report.id for s in nearest_reports("tomatoes", [MUSIC, GARDEN], None)] == ["c-garden"]


def test_themes_give_parents_before_children_at_their_best_childs_place() -> None:
    top = report("p-1", "Everything", "A summary of nothing asked.")
    kids = [
        report("c-a", "Maya", "Maya grows tomatoes.", parent="p-1"),
        report("c-b", "Maya", "Maya plays the violin.", parent="p-1"),
    ]
    other = report("c-z", "Orla", "Orla plays the violin too.")
    hierarchy = [top, *kids, other]
    matched = {"p-1": "maya", "c-a": "maya", "c-b": "maya", "c-z": "orla"}
    sims = {"p-1": 0.0, "c-a": 0.1, "c-b": 0.8, "c-z": 0.5}
    got = themed_reports("who plays the violin?", hierarchy, matched, sims, ["Maya", "Orla"])
    assert [s.report.id for s in got] == ["p-1", "c-b", "c-z", "c-a"]
    assert [s.matched for s in got] == ["maya", "maya", "orla", "maya"]


def test_the_hierarchy_reads_each_ancestor_once_top_down() -> None:
    top = report("p-1", "Everything", "")
    a = report("c-a", "A", "", parent="p-1")
    b = report("c-b", "B", "", parent="p-1")
    lookups: list[list[str]] = []

    def by_ids(ids: list[str]) -> list[Report]:
        lookups.append(list(ids))
        return [top] if ids == ["p-1"] else []

    reports, reached = hierarchy_of(
        ["maya", "orla"], {"maya": [a], "orla": [b]}.__getitem__, by_ids
    )
    assert [r.id for r in reports] == ["p-1", "c-a", "c-b"]
    assert reached == {"p-1": "maya", "c-a": "maya", "c-b": "orla"}
    assert lookups == [["p-1"]]
