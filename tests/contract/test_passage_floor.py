"""Step 4's passage floor: a passage found by meaning alone comes back only if it is
near enough the question (domain/floors.py), so a memory of a few notes does not
return every note for any question; a passage the words find, a question naming a
month or day, and one that does not read as English keep every candidate. Both stores,
the local model."""

from __future__ import annotations

from taisce.service.memory import Memory
from tests.contract.factories import unique
from tests.contract.passage_recall import recalled_passages, store_embedded

# Cosines with "What is my cat's name?" (all-MiniLM-L6-v2): 0.54, 0.14, 0.08, 0.01, 0.01;
# with "Which programming language do I prefer?" 0.02, -0.04, -0.04, 0.02, -0.07.
NOTES = {
    "cat": "My cat is called Miso and she sleeps all day.",
    "brakes": "I replaced the brake pads on the van last week.",
    "boots": "I bought a new pair of hiking boots.",
    "tax": "The quarterly tax filing is due in April.",
    "standup": "Our team standup moved to 9:30.",
}


def _store(memory: Memory) -> str:
    project = unique("floor")
    sent = [
        {"id": i, "role": "user", "content": c, "occurred_at": f"2024-03-0{n}T10:00:00Z"}
        for n, (i, c) in enumerate(NOTES.items(), start=1)
    ]
    store_embedded(memory, project, sent)
    return project


def _messages(memory: Memory, project: str, question: str) -> list[str]:
    return [p["message_id"] for p in recalled_passages(memory, project, question)]


def test_notes_far_from_the_question_do_not_come_back(semantic_memory: Memory) -> None:
    project = _store(semantic_memory)
    found = _messages(semantic_memory, project, "What is my cat's name?")
    assert found[0] == "cat"
    assert "tax" not in found and "standup" not in found
    # Nothing near, nothing shared: nothing comes back, however large the budget.
    assert _messages(semantic_memory, project, "Which programming language do I prefer?") == []


def test_words_a_named_day_and_another_language_keep_every_candidate(
    semantic_memory: Memory,
) -> None:
    project = _store(semantic_memory)
    # "tax" shares a word with the question: the words' ranking keeps it.
    assert "tax" in _messages(semantic_memory, project, "What is my cat's name and my tax?")
    # A named month orders every candidate by its time: all five notes are of March.
    assert set(_messages(semantic_memory, project, "What did I note in March?")) == set(NOTES)
    # A question that does not read as English: the floor was chosen on English ones.
    assert set(_messages(semantic_memory, project, "Wie heißt meine Katze?")) == set(NOTES)
