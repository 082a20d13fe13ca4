"""A project's storing order of messages, on both stores, and recall step 4's neighbour
signal built on it (domain/passage_ranking.py, `add_neighbours`): a passage gains from
the message stored just before its own, but only from candidates the recall may see."""

from __future__ import annotations

from typing import Any

import pytest

from taisce.domain import passage_ranking
from taisce.domain.controls import Limits
from taisce.service.memory import Memory
from tests.contract.factories import in_threads, message, unique, with_passages
from tests.contract.passage_recall import recalled_passages, store_embedded


def positions(store: Any, project: str) -> dict[str, int | None]:
    """Each pending passage mark's position, by message id."""
    marks = store.pending_vectors(project, 1000)
    return {m.id.rpartition("#")[0]: m.position for m in marks if m.kind == "passage"}


def put(store: Any, project: str, *ids: str) -> None:
    store.put_messages(project, *with_passages(*(message(f"Message {i}.", id=i) for i in ids)))


def test_storing_order_is_kept_across_batches(store: Any) -> None:
    project, other = unique("order"), unique("order")
    put(store, project, "a", "b")
    put(store, other, "x")  # another project's order is its own
    put(store, project, "c")
    put(store, project, "d", "e")
    assert positions(store, project) == {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}
    assert positions(store, other) == {"x": 1}


def test_a_retry_keeps_positions_and_leaves_no_gap(store: Any) -> None:
    project = unique("order")
    put(store, project, "a", "b")
    store.clear_pending_vectors(project, store.pending_vectors(project, 1000))
    put(store, project, "a", "b")  # the same request again: nothing new, nothing marked
    assert positions(store, project) == {}
    put(store, project, "c")
    assert positions(store, project) == {"c": 3}
    # A batch mixing a stored message and new ones: the stored one keeps its position
    # (it is not marked again), the new ones come after every earlier position, in order.
    put(store, project, "b", "d", "e")
    found = positions(store, project)
    assert set(found) == {"c", "d", "e"}
    assert 3 < found["d"] < found["e"]  # type: ignore[operator]


def test_passages_read_back_carry_their_message_position(store: Any) -> None:
    project = unique("order")
    put(store, project, "a", "b")
    assert [p.position for p in store.passages_of(project, "b")] == [2]


# The question asks about the vet's visit (p1); the answer is in the reply stored right
# after it (p2), which shares none of the question's words. d* are other small talk.
VISIT = "Took Biscuit to the vet this morning for his sore paw."
MESSAGES = [
    ("p1", "tool", VISIT),
    ("p2", "user", "She said it is healing well and he needs two weeks of rest."),
    ("d1", "user", "The kettle in the office is broken again."),
    ("d2", "user", "I watched a documentary about whales last night."),
    ("d3", "user", "My sister is visiting from Cork at the weekend."),
    ("d4", "user", "The vet clinic on Main Street has a new car park."),
    ("d5", "user", "Traffic was terrible on the way home."),
]
QUESTION = "What did the vet say about Biscuit's paw?"


def stored(memory: Memory, visit: str = VISIT, occurred: str = "2024-06-01T10:00:00Z") -> str:
    project = unique("neighbours")
    wire = [
        {
            "id": i,
            "role": role,
            "content": visit if i == "p1" else content,
            "occurred_at": occurred if i == "p1" else "2024-06-01T10:00:00Z",
        }
        for i, role, content in MESSAGES
    ]
    store_embedded(memory, project, wire)
    return project


# The visit is the tool's (a note an agent's tool wrote): seen only where asked for.
BOTH = {"source_roles": ["user", "tool"]}


def ids(memory: Memory, project: str, **controls: Any) -> list[str]:
    return [p["id"] for p in recalled_passages(memory, project, QUESTION, **BOTH, **controls)]


def test_a_neighbour_lifts_a_passage(
    semantic_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = stored(semantic_memory)
    monkeypatch.setattr(passage_ranking, "NEIGHBOUR", 0.0)
    alone = ids(semantic_memory, project)
    # A strong weight, so the test shows the mechanism whatever the model's scores.
    monkeypatch.setattr(passage_ranking, "NEIGHBOUR", 1.0)
    lifted = ids(semantic_memory, project)
    # The reply (p2) gains from the visit stored before it (p1), the best match, and
    # comes next at this weight; the visit, which every ranking puts first, keeps its
    # place and gains nothing from the reply after it.
    assert alone[0] == "p1#0"
    assert lifted[:2] == ["p1#0", "p2#0"] and alone.index("p2#0") > 1
    why = {
        p["id"]: p["why"]
        for p in recalled_passages(semantic_memory, project, QUESTION, explain=True, **BOTH)
    }
    assert 0 < why["p2#0"]["neighbour_share"] < 1
    # The order never depends on the budget: a smaller one returns a prefix.
    small = ids(semantic_memory, project, max_rows=3)
    assert small == lifted[:3]


def _unrecorded(passages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in p.items() if k != "recorded_at"} for p in passages]


def test_a_neighbour_hidden_by_roles_or_filters_lifts_nothing(
    semantic_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(passage_ranking, "NEIGHBOUR", 1.0)
    # The same memory but for what the hidden message says: what a recall may not see
    # must not shape its answer, so both answer alike.
    project = stored(semantic_memory)
    other = stored(semantic_memory, visit="Bought a new lamp for the hall.")
    for controls in ({"source_roles": ["user"]},):
        answer = recalled_passages(semantic_memory, project, QUESTION, explain=True, **controls)
        control = recalled_passages(semantic_memory, other, QUESTION, explain=True, **controls)
        assert "p1#0" not in [p["id"] for p in answer]
        # Alike but for when each memory was stored (recorded_at, the server's clock).
        assert _unrecorded(answer) == _unrecorded(control)
        assert [p["id"] for p in answer].index("p2#0") > 1
    # A message filter (as_of before the visit occurred) hides it the same way. (The
    # hidden passage still takes its place in the index's rankings, as it did before
    # neighbours: the two answers' ranks differ, so only the order is compared.)
    later = stored(semantic_memory, occurred="2024-07-01T10:00:00Z")
    answer = ids(semantic_memory, later, as_of="2024-06-15T00:00:00Z")
    assert "p1#0" not in answer
    assert answer.index("p2#0") > 1


def test_concurrent_batches_never_share_a_position(store: Any) -> None:
    project = unique("order")

    def writer(n: int) -> None:
        for b in range(5):
            put(store, project, *(f"w{n}-b{b}-{i}" for i in range(3)))

    assert in_threads(writer, 4) == []
    found = positions(store, project)
    assert len(found) == 60
    assert len(set(found.values())) == 60  # none given twice
    # Each batch's three messages are consecutive, in the batch's order.
    for n in range(4):
        for b in range(5):
            first = found[f"w{n}-b{b}-0"]
            assert [found[f"w{n}-b{b}-{i}"] for i in range(3)] == [first, first + 1, first + 2]


def test_a_message_masked_by_an_erasure_keeps_its_position(store: Any) -> None:
    # An erasure rewrites the passages of a message that names the erased entity: they
    # keep their message's place in the order.
    project = unique("order")
    put(store, project, "a")
    named = message("Atlas called. Maya likes tea.", id="b")
    store.put_messages(project, *with_passages(named, limit=20))
    put(store, project, "c")
    held = store.passages_of(project, "b")
    assert len(held) == 2 and {p.position for p in held} == {2}
    done = Memory(store, Limits()).request_erasure(project, "Atlas", defer=False)
    assert done.status == "done"
    masked = store.passages_of(project, "b")
    assert "Atlas" not in repr(masked) and masked != held
    assert [p.position for p in masked] == [2] * len(masked)
    assert [p.position for p in store.passages_of(project, "c")] == [3]


# Notes stored in a row in a new memory, in Spanish: every ranking puts the visit to the
# dentist first, and each later note gains from the note before it. "mi", "con" and
# "el" are words of the question and of the later notes too, so the rankings are short
# and close.
NOTES = [
    "Mañana tengo una cita con la dentista a las nueve.",
    "Compré zapatillas nuevas para correr el maratón.",
    "Mi hermana vive en Sevilla con sus dos gatos.",
]


def test_the_passage_every_ranking_puts_first_leads_a_new_memory(
    semantic_memory: Memory,
) -> None:
    project = unique("first")
    store_embedded(
        semantic_memory,
        project,
        [{"id": f"n{i}", "role": "user", "content": c} for i, c in enumerate(NOTES)],
    )
    found = recalled_passages(
        semantic_memory, project, "¿Cuándo es mi cita con el dentista?", explain=True
    )
    why = found[0]["why"]
    assert found[0]["id"] == "n0#0", [(p["id"], p["why"]["reason"]) for p in found]
    assert why["vector_rank"] == why["word_rank"] == 1
    # The later notes still gain from the note before them, behind it.
    assert [p["id"] for p in found] == ["n0#0", "n1#0", "n2#0"]
    assert why["neighbour_share"] is None
    assert all(p["why"]["neighbour_share"] > 0 for p in found[1:])
