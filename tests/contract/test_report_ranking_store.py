"""Recall step 3 on both stores (issue 11, item 4): the reports nearest the question come
first, when nothing matched and with `themes`, by the same domain code
(domain/report_ranking.py) over each store's reports, with the real local model."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from taisce.api import bodies
from taisce.domain.controls import RecallRequest
from taisce.domain.floors import MINILM_FLOORS
from taisce.domain.ingest import FactsRequest
from taisce.service.memory import Memory
from tests.contract.factories import unique

# Three components of the user's graph, each one report: music, gardening, work.
FACTS = [
    ("Maya Okafor", "plays the violin in", "Galway Symphony Orchestra"),
    ("Galway Symphony Orchestra", "performs concerts at", "Galway Concert Hall"),
    ("Tobias Wren", "grows tomatoes in", "Kilkenny Allotment"),
    ("Kilkenny Allotment", "is watered from", "River Nore"),
    ("Orla Byrne", "works as an accountant at", "Ledger Partners"),
    ("Ledger Partners", "has its office in", "Cork"),
]
# A tool's report about music: never returned to a user-only recall, nor shaping it.
TOOL_FACTS = [
    ("Heron Quartet", "plays chamber music at", "Opera House"),
    ("Opera House", "hosts orchestra concerts in", "Belfast"),
]


def as_facts(*groups: tuple[list[tuple[str, str, str]], str]) -> FactsRequest:
    """One request of (subject, predicate, object) triples, each group with its role."""
    facts = [
        {"subject": s, "predicate": p, "object": o, "source_role": role}
        for triples, role in groups
        for s, p, o in triples
    ]
    return FactsRequest.model_validate({"facts": facts})


@pytest.fixture
def memory(semantic_memory: Memory) -> Iterator[tuple[Memory, str]]:
    memory = semantic_memory
    project = unique("reports")
    memory.store_facts(project, as_facts((FACTS, "user"), (TOOL_FACTS, "tool")))
    memory.rebuild_reports(project)
    memory.index_pending(project)
    yield memory, project


def ask(memory: Memory, project: str, question: str, **controls: object) -> dict[str, Any]:
    body = {"question": question, "surfaces": ["reports"], **controls}
    answer = bodies.recall(memory.recall(project, RecallRequest.model_validate(body)))
    assert answer["degraded"] == []
    return answer


def titles(answer: dict[str, Any]) -> list[str]:
    return [r["title"] for r in answer["reports"]]


def test_the_report_nearest_the_question_comes_first(memory: tuple[Memory, str]) -> None:
    m, project = memory
    music = ask(m, project, "who plays music in an orchestra?")
    assert titles(music)[0].startswith("Galway Symphony Orchestra")
    garden = ask(m, project, "where are the tomatoes grown?")
    assert titles(garden)[0].startswith("Kilkenny Allotment")
    # The same memory and request give the same answer.
    assert ask(m, project, "who plays music in an orchestra?") == music
    # Each report once; only the user's (the default roles); only those that bear on
    # the question: the gardening and work reports stay under the floor.
    assert len(set(titles(music))) == len(music["reports"])
    assert not any("Heron" in t or "Opera" in t for t in titles(music))
    assert not any(t.startswith(("Kilkenny Allotment", "Ledger Partners")) for t in titles(music))


def test_a_report_comes_back_only_if_it_reaches_the_floor(memory: tuple[Memory, str]) -> None:
    """A question that no report bears on gets none (step 3's floor), and every report
    that comes back reaches it: the budget stays for passages that might."""
    m, project = memory
    assert ask(m, project, "Where should we eat tonight?", explain=True)["reports"] == []
    for question in ("who plays music in an orchestra?", "where are the tomatoes grown?"):
        whys = [r["why"] for r in ask(m, project, question, explain=True)["reports"]]
        assert whys, question
        assert all(w["similarity"] >= MINILM_FLOORS.report for w in whys), whys


def test_a_question_in_a_script_the_model_cannot_read_gets_reports_by_their_words(
    memory: tuple[Memory, str],
) -> None:
    """MiniLM reads English: a question mostly in a script it does not know is near any
    report in such a script by its cosine, so such a question that names nothing gets
    the reports that share one of its words, ranked by words, and no other."""
    m, project = memory
    korean = [("김민수", "근무", "삼성전자"), ("삼성전자", "본사", "수원")]
    m.store_facts(project, as_facts((korean, "user")))
    m.rebuild_reports(project)
    m.index_pending(project)
    for question in (
        "박지훈은 어디에 살아요?",  # "Where does 박지훈 live?": a name nothing is known about
        "오늘 저녁에 어디서 먹을까요?",  # "Where should we eat tonight?"
    ):
        assert ask(m, project, question)["reports"] == [], question
    answer = ask(m, project, "본사 어디 있어요?", explain=True)  # "Where's the head office?"
    assert titles(answer) == ["삼성전자, 김민수 and 수원"]
    assert all(r["why"]["similarity"] is None and r["why"]["words"] > 0 for r in answer["reports"])
    # A terse English question is still read by the model.
    terse = ask(m, project, "orchestra concerts", explain=True)["reports"]
    assert terse and all(r["why"]["similarity"] is not None for r in terse)


def test_a_smaller_budget_returns_a_prefix(memory: tuple[Memory, str]) -> None:
    m, project = memory
    full = ask(m, project, "who plays music in an orchestra?")
    ids = [r["id"] for r in full["reports"]]
    for budget in range(1, full["characters"] + 1, 5):
        small = ask(m, project, "who plays music in an orchestra?", max_characters=budget)
        got = [r["id"] for r in small["reports"]]
        assert got == ids[: len(got)], budget
    for rows in (1, 2, 3):
        small = ask(m, project, "who plays music in an orchestra?", max_rows=rows)
        assert [r["id"] for r in small["reports"]] == ids[:rows]


def test_roles_choose_the_candidates_and_hidden_ones_do_not_shape_the_order(
    memory: tuple[Memory, str],
) -> None:
    m, project = memory
    question = "who plays music in an orchestra?"
    user = ask(m, project, question, explain=True)
    both = ask(m, project, question, source_roles=["user", "tool"])
    assert any("Opera House" in t for t in titles(both)), titles(both)
    # With the tool's reports gone, the user's answer (scores included) is the same:
    # what the recall did not ask for never shaped it.
    for name in ("Heron Quartet", "Opera House", "Belfast"):
        m.erase_now(project, name)
    m.rebuild_reports(project)
    m.flush_erased_vectors(project)
    assert not any(
        "Opera House" in t for t in titles(ask(m, project, question, source_roles=["user", "tool"]))
    )
    assert ask(m, project, question, explain=True) == user


def test_themes_put_the_matched_report_nearest_the_question_first(
    memory: tuple[Memory, str],
) -> None:
    m, project = memory
    # Tobias is named first, but the question asks about the orchestra.
    question = "Which orchestra do Tobias Wren or Maya Okafor play in?"
    themed = ask(m, project, question, themes=True, explain=True)
    assert titles(themed)[0].startswith("Galway Symphony Orchestra"), titles(themed)
    assert any(t.startswith("Kilkenny Allotment") for t in titles(themed))
    assert not any(t.startswith("Ledger Partners") for t in titles(themed))  # not matched
    first = themed["reports"][0]["why"]
    assert first["step"] == "report" and first["matched"] == "maya okafor"
    assert (
        first["similarity"] is not None and first["score"] >= themed["reports"][1]["why"]["score"]
    )
    assert set(first) == {"step", "reason", "matched", "words", "similarity", "score"}
    # Asked the other way round, the other report comes first.
    garden = ask(m, project, "What do Maya Okafor or Tobias Wren grow?", themes=True)
    assert titles(garden)[0].startswith("Kilkenny Allotment"), titles(garden)


def test_explain_names_the_signals_of_unmatched_reports(memory: tuple[Memory, str]) -> None:
    m, project = memory
    plain = ask(m, project, "who plays music in an orchestra?")
    explained = ask(m, project, "who plays music in an orchestra?", explain=True)
    assert [r["id"] for r in explained["reports"]] == [r["id"] for r in plain["reports"]]
    assert explained["characters"] == plain["characters"]  # why is not counted
    whys = [r["why"] for r in explained["reports"]]
    assert all(w["step"] == "report" and w["matched"] is None for w in whys)
    assert all(w["similarity"] is not None for w in whys)
    scores = [w["score"] for w in whys]
    assert scores == sorted(scores, reverse=True)
    assert whys[0]["words"] > 0  # "orchestra" is in its title


def test_an_erased_entity_takes_its_report_with_it(memory: tuple[Memory, str]) -> None:
    m, project = memory
    m.erase_now(project, "Galway Symphony Orchestra")
    m.rebuild_reports(project)
    m.index_pending(project)
    m.flush_erased_vectors(project)
    after = ask(m, project, "who plays music in an orchestra?")
    assert not any(
        "Orchestra" in r["title"] or "Orchestra" in r["summary"] for r in after["reports"]
    )
