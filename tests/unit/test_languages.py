"""Which questions read as English (domain/languages.py), and how facts are ranked for
one that does not (domain/fact_ranking.py)."""

from __future__ import annotations

import pytest

from taisce.domain import fact_ranking
from taisce.domain.fact_ranking import rank_facts
from taisce.domain.languages import reads_as_english
from tests.unit.test_recall_ranking import candidates


@pytest.mark.parametrize(
    "question",
    [
        "Where was Jean-Luc Picard born?",
        "What does Atlas do?",
        "Is Caroline married, and to whom?",
        "Where does 田中 live?",
    ],
)
def test_english_questions(question: str) -> None:
    assert reads_as_english(question)


@pytest.mark.parametrize(
    "question",
    [
        "Que commande Jean-Luc Picard ?",
        "Was kommandiert Jean-Luc Picard?",  # "was" is German too: no sign of English
        "¿Dónde vive Siobhán Ní Bhriain?",
        "Qual è il lavoro di Marco?",
        "Waar woont Pieter?",
        "田中さんはどこに住んでいますか",
        "Где живёт Иван?",
    ],
)
def test_questions_in_other_languages(question: str) -> None:
    assert not reads_as_english(question)


def test_the_matched_names_are_set_aside() -> None:
    # "The Who" names a band: its "the" says nothing of the question's language.
    assert reads_as_english("Wo spielt The Who?") is True
    assert reads_as_english("Wo spielt The Who?", ["The Who"]) is False


def test_an_unread_question_gets_every_hop1_fact_shared_words_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Picard's facts here are few enough that a read question would get them all
    # anyway (fact_ranking.FEW_FACTS): the floor alone shows what reading changes.
    monkeypatch.setattr(fact_ranking, "FEW_FACTS", 0)
    pool = [
        *candidates("Picard was born in La Barre.", "Picard commands the Enterprise."),
        *candidates("Riker plays jazz.", hop=2),
    ]
    # Cosines the English model gives a French question: the wrong fact on top.
    sims = {"f0": 0.61, "f1": 0.55}
    read = rank_facts("Que commande Picard ?", pool, sims, ["picard"])
    assert read == []  # under the floor: nothing would come back
    unread = rank_facts("Que commande Picard ?", pool, sims, ["picard"], readable=False)
    assert [s.candidate.fact.statement for s in unread] == [
        "Picard was born in La Barre.",
        "Picard commands the Enterprise.",
    ]
    shared = rank_facts("Picard commands quoi ?", pool, sims, ["picard"], readable=False)
    assert shared[0].candidate.fact.statement == "Picard commands the Enterprise."
