"""Recall step 4 on both stores, for a question that names a month or day: each passage's
hit carries its message's time (the index keeps it with the vector, written from the
store's vector marks), so the order is known before any passage is read, and the answer
is the one the lazy path (passages read with their times until no unread one can pass
them) gives. Index entries written before times were kept still answer the same, by the
lazy path."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from taisce.domain import recall
from taisce.domain.model import VectorItem
from taisce.service.memory import Memory
from tests.contract.factories import unique
from tests.contract.passage_recall import recalled_passages, store_embedded

# (id, occurred_at, content): the same painting told in three months, and other talk,
# so that the asked month and day reorder what words and meaning found.
MESSAGES = [
    ("oct13", "2023-10-13T18:00:00Z", "Mel painted a lake sunrise for the gallery."),
    ("oct20", "2023-10-20T18:00:00Z", "Mel painted a lake sunrise at the gallery."),
    ("nov02", "2023-11-02T18:00:00Z", "Mel painted the lake sunrise for a gallery show."),
    ("sep05", "2023-09-05T09:00:00Z", "Mel bought new brushes and a canvas for painting."),
    ("oct21", "2023-10-21T09:00:00Z", "The kids went swimming in the lake on Saturday."),
    ("dec01", "2023-12-01T09:00:00Z", "Mel hung the sunrise painting in the hall."),
]
QUESTIONS = [
    "What did Mel paint in October 2023?",
    "What did Mel paint on October 20, 2023?",
    "What did Mel hang in December?",
]


@pytest.fixture
def memory(semantic_memory: Memory) -> Iterator[tuple[Memory, str, dict[str, str]]]:
    project = unique("hit-times")
    wire = [
        {"id": unique(i), "role": "user", "content": text, "occurred_at": when}
        for i, when, text in MESSAGES
    ]
    store_embedded(semantic_memory, project, wire)
    yield semantic_memory, project, {m["id"]: m["occurred_at"] for m in wire}


def _reads(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Records, for each passages_by_ids call the recall makes, whether it read times."""
    calls: list[bool] = []
    read = memory.store.passages_by_ids

    def counted(project: str, ids: Any, messages: Any = None, times: bool = False) -> Any:
        calls.append(times)
        return read(project, ids, messages, times=times)

    monkeypatch.setattr(memory.store, "passages_by_ids", counted)
    return calls


def _answer(memory: Memory, project: str, question: str) -> list[dict[str, Any]]:
    return recalled_passages(memory, project, question, explain=True)


def test_hits_carry_their_messages_time(memory: tuple[Memory, str, dict[str, str]]) -> None:
    m, project, times = memory
    assert m.semantic is not None
    vector = m.semantic.embedder.embed(["Mel painted a lake sunrise"])[0]
    index = m.semantic.index
    for hits in (
        index.search(project, "passage", vector, 20),
        index.search_text(project, "passage", "Mel painted a lake sunrise", 20),
    ):
        assert hits
        assert {h.occurred_at for h in hits} <= set(times.values())
        assert all(h.occurred_at == times[h.id.rpartition("#")[0]] for h in hits)


@pytest.mark.parametrize("question", QUESTIONS)
def test_a_dated_recall_orders_by_the_hits_times_as_the_lazy_path_does(
    memory: tuple[Memory, str, dict[str, str]], question: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    m, project, _ = memory
    reads = _reads(m, monkeypatch)
    fast = _answer(m, project, question)
    # The order came from the hits: no read asked for the messages' times.
    assert fast and reads and not any(reads)
    # The asked time lifted a passage (the test would not tell the paths apart otherwise).
    assert any(p["why"]["time_factor"] for p in fast)
    reads.clear()
    monkeypatch.setattr(recall, "_hit_times", lambda *_: None)  # as if no hit had a time
    lazy = _answer(m, project, question)
    assert reads and all(reads)
    assert fast == lazy  # the same passages, order and `why` (time_factor included)


def test_entries_indexed_without_times_answer_the_same_by_the_lazy_path(
    memory: tuple[Memory, str, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    m, project, _ = memory
    assert m.semantic is not None
    before = {q: _answer(m, project, q) for q in QUESTIONS}
    # One passage's entry written again as an index made before times were kept
    # holds it: the vector without its message's time.
    text = MESSAGES[0][2]
    hits = m.semantic.index.search_text(project, "passage", text, 1)
    assert hits and hits[0].occurred_at is not None
    old = hits[0]
    vector = m.semantic.embedder.embed([text])[0]
    m.semantic.index.upsert(
        project, "passage", [VectorItem(old.id, vector, "user", text, old.position)]
    )
    assert m.semantic.index.search_text(project, "passage", text, 1)[0].occurred_at is None
    reads = _reads(m, monkeypatch)
    for question, answer in before.items():
        reads.clear()
        assert _answer(m, project, question) == answer
        # A candidate without its time: the passages were read with theirs.
        assert reads and all(reads)
