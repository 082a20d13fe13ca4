"""`explain` shows the factors of a passage's fused score in step 4, on both stores: the
share left by its own message's passages ahead of it, the share its neighbouring
messages gave it, the asked time's factor, the share kept when a fact in the bundle
cites its message, and the places the diverse head moved it, each only where it applied
(null elsewhere)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from taisce.api import bodies
from taisce.domain import diversity, passage_ranking
from taisce.domain.controls import RecallRequest
from taisce.domain.ingest import FactsRequest
from taisce.domain.passage_ranking import DAY_BOOST, MONTH_BOOST, SIBLING, WHEN_BOOST
from taisce.domain.passage_step import CITED_SHARE
from taisce.service.memory import Memory
from tests.contract.factories import unique
from tests.contract.passage_recall import recalled_passages, store_embedded

# m1 is long: two passages about the boat, the second without its first sentence's words.
LONG = (
    "We finally bought the sailing boat after months of looking at every harbour on the "
    "coast, and it is blue. "
    "The sailing boat needs new sails and a fresh coat of paint before the summer season "
    "starts properly."
)
MESSAGES = [
    ("m1", LONG, "2024-06-03T10:00:00Z"),
    ("m2", "Took the sailing boat out yesterday for the first time.", "2024-06-12T10:00:00Z"),
    ("m3", "The sailing club meets on Thursdays.", "2024-07-01T10:00:00Z"),
]


@pytest.fixture
def memory(semantic_memory: Memory) -> Iterator[tuple[Memory, str]]:
    project = unique("why")
    messages = [{"id": i, "role": "user", "content": c, "occurred_at": t} for i, c, t in MESSAGES]
    store_embedded(semantic_memory, project, messages)
    yield semantic_memory, project


def passages(memory: Memory, project: str, question: str, **controls: Any) -> list[dict]:
    return recalled_passages(memory, project, question, **controls)


def whys(memory: Memory, project: str, question: str) -> dict[str, dict[str, Any]]:
    return {p["id"]: p["why"] for p in passages(memory, project, question, explain=True)}


def test_a_later_passage_of_a_message_shows_its_share(memory: tuple[Memory, str]) -> None:
    m, project = memory
    why = whys(m, project, "What about the sailing boat?")
    assert {"m1#0", "m1#1", "m2#0"} <= set(why)
    firsts = [w for pid, w in why.items() if pid != "m1#1" and pid != "m1#0"]
    assert all(w["message_share"] is None for w in firsts)
    shares = {why["m1#0"]["message_share"], why["m1#1"]["message_share"]}
    # Whichever of m1's passages ranked first keeps its score; the other keeps SIBLING.
    assert shares == {None, SIBLING}
    # No time asked: no factor.
    assert all(w["time_factor"] is None for w in why.values())


def test_the_asked_time_shows_where_it_applied(memory: tuple[Memory, str]) -> None:
    m, project = memory
    month = whys(m, project, "What happened with the sailing boat in June 2024?")
    assert month["m1#0"]["time_factor"] == month["m2#0"]["time_factor"] == MONTH_BOOST
    assert month["m3#0"]["time_factor"] is None
    day = whys(m, project, "What happened with the sailing boat on June 12, 2024?")
    assert day["m2#0"]["time_factor"] == MONTH_BOOST * DAY_BOOST
    assert day["m1#0"]["time_factor"] == MONTH_BOOST and day["m3#0"]["time_factor"] is None
    # "When": only a passage that states a time ("yesterday") gets the factor.
    when = whys(m, project, "When did they take the sailing boat out?")
    assert when["m2#0"]["time_factor"] == WHEN_BOOST
    assert when["m3#0"]["time_factor"] is None
    # `why` never changes what comes back, nor its order.
    plain = passages(m, project, "When did they take the sailing boat out?")
    assert [p["id"] for p in plain] == list(when)
    assert all("why" not in p for p in plain)


def test_the_neighbours_share_shows_what_they_gave(
    memory: tuple[Memory, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    m, project = memory
    question = "What about the sailing boat?"
    why = whys(m, project, question)
    # m1, m2, m3 were stored in that order, all candidates: m2 sits between the two
    # others, so its neighbours gave it a share; each share is a part of the score.
    assert why["m2#0"]["neighbour_share"] is not None
    assert all(w["neighbour_share"] is None or 0 < w["neighbour_share"] < 1 for w in why.values())
    # Without the signal, no share is shown (and nothing else changes its meaning).
    monkeypatch.setattr(passage_ranking, "NEIGHBOUR", 0.0)
    alone = whys(m, project, question)
    assert all(w["neighbour_share"] is None for w in alone.values())
    assert {pid: w["message_share"] for pid, w in alone.items()} == {
        pid: w["message_share"] for pid, w in why.items()
    }


def test_a_passage_of_a_message_a_fact_above_cites_shows_the_share_it_kept(
    semantic_memory: Memory,
) -> None:
    project = unique("why-cited")
    messages = [{"id": i, "role": "user", "content": c, "occurred_at": t} for i, c, t in MESSAGES]
    store_embedded(semantic_memory, project, messages)
    fact = {
        "subject": "Atlas",
        "predicate": "took out",
        "object": "the sailing boat",
        "object_kind": "value",
        "source_role": "user",
        "message_id": "m2",
    }
    semantic_memory.store_facts(project, FactsRequest.model_validate({"facts": [fact]}))
    semantic_memory.index_pending(project)
    question = "When did Atlas take the sailing boat out?"
    body = {"question": question, "surfaces": ["facts", "passages"], "explain": True}
    answer = bodies.recall(semantic_memory.recall(project, RecallRequest.model_validate(body)))
    assert [f["message_id"] for f in answer["facts"]] == ["m2"]
    why = {p["id"]: p["why"] for p in answer["passages"]}
    assert why["m2#0"]["cited_share"] == CITED_SHARE
    assert "a fact above cites its message (kept 25% of its score)" in why["m2#0"]["reason"]
    assert all(w["cited_share"] is None for pid, w in why.items() if pid != "m2#0")
    # Without the fact in the bundle, no passage yields to it.
    alone = whys(semantic_memory, project, question)
    assert alone["m2#0"]["cited_share"] is None
    assert all("cites its message" not in w["reason"] for w in alone.values())


# Passages that say one thing in other words (too few words alike to be dropped as
# repeats), and two on other things about sailing.
ALIKE = [
    ("a1", "The sailing boat has a blue and white hull."),
    ("a2", "Our yacht is moored in the harbour, painted in blue and white."),
    ("a3", "That little sailboat of ours is coloured blue with white stripes."),
    ("b1", "The sailing club meets on Thursdays by the pier."),
    ("b2", "Sailing lessons for the children cost twenty euros an hour."),
]


def test_a_passage_the_diverse_head_moved_shows_by_how_many_places(
    semantic_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = unique("why-diverse")
    store_embedded(
        semantic_memory, project, [{"id": i, "role": "user", "content": c} for i, c in ALIKE]
    )
    question = "Tell me about the sailing boat."
    diverse = passages(semantic_memory, project, question, explain=True)
    shifts = {p["id"]: p["why"]["diversity_shift"] for p in diverse}
    assert any(s is not None for s in shifts.values()), shifts  # the data moves some
    # With the score alone deciding, nothing moves, and each moved passage was exactly
    # that many places away from where the diverse head put it.
    monkeypatch.setattr(diversity, "DIVERSE_WEIGHT", 1.0)
    plain = [p["id"] for p in passages(semantic_memory, project, question, explain=True)]
    placed = [p["id"] for p in diverse]
    assert sorted(plain) == sorted(placed) and plain != placed
    for pid, shift in shifts.items():
        assert placed.index(pid) - plain.index(pid) == (shift or 0), (pid, plain, placed)
    moved = next(p for p in diverse if p["why"]["diversity_shift"])
    shift = moved["why"]["diversity_shift"]
    places = f"{abs(shift)} place{'s' if abs(shift) > 1 else ''}"
    where = f"moved {places} {'later' if shift > 0 else 'earlier'}"
    assert f"{where} so that the first passages say different things" in moved["why"]["reason"]
    unmoved = passages(semantic_memory, project, question, explain=True)
    assert all(p["why"]["diversity_shift"] is None for p in unmoved)
