"""Step 4's ranking by the question without the names it writes
(domain/question_topic.py): a passage about what is asked climbs above passages that
only share the asked person's name, with the real model, on each store."""

from __future__ import annotations

import pytest

from taisce.domain import passage_ranking
from taisce.service.memory import Memory
from tests.contract.factories import unique
from tests.contract.passage_recall import recalled_passages, store_embedded

# Melanie's name opens every message of hers (as a speaker's name does when a chat is
# stored with it); the answer is Caroline's message, which shares no word with the
# question but for "race".
SAID = [
    "Melanie: My kids loved the beach trip last weekend.",
    "Melanie: I painted a lake at sunrise this morning.",
    "Melanie: We adopted a second dog, she is so playful.",
    "Melanie: The pottery class was relaxing after a long week.",
    "Melanie: I am reading a novel about a lighthouse keeper.",
    "Melanie: My husband cooked a curry for the whole family.",
    "Caroline: We finished the 5k fundraiser race for the animal shelter on Sunday.",
]
MESSAGES = [{"id": f"m{n}", "role": "user", "content": text} for n, text in enumerate(SAID)]
ANSWER = f"m{len(SAID) - 1}#0"
QUESTION = "When did Melanie take part in a charity run?"


def _place(memory: Memory, project: str, question: str) -> tuple[int, dict[str, object]]:
    passages = recalled_passages(memory, project, question, explain=True)
    ids = [p["id"] for p in passages]
    return ids.index(ANSWER), passages[ids.index(ANSWER)]["why"]


def test_the_answer_climbs_above_passages_that_only_share_the_name(
    semantic_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = unique("topic")
    store_embedded(semantic_memory, project, MESSAGES)

    place, why = _place(semantic_memory, project, QUESTION)
    # It is first by the question without its name ...
    assert why["topic_rank"] == 1
    assert "names aside (#1)" in why["reason"]
    # ... and only that ranking lifts it: without it the name's passages stay ahead.
    monkeypatch.setattr(passage_ranking, "TOPIC_WEIGHT", 0.0)
    without, _ = _place(semantic_memory, project, QUESTION)
    assert place < without


def test_a_question_that_writes_no_name_has_no_topic_rank(semantic_memory: Memory) -> None:
    project = unique("topic")
    store_embedded(semantic_memory, project, MESSAGES)

    question = "when was the charity run?"
    passages = recalled_passages(semantic_memory, project, question, explain=True)
    assert passages
    assert all(p["why"]["topic_rank"] is None for p in passages)
