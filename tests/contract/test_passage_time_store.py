"""Recall step 4 on both stores (issue 11, item 2): the time a question asks about orders
the passages by the same domain code (domain/passage_ranking.py) over each store's
passages and message times, with the real local model: a passage of the day the
question names first, a passage that states a time first when it asks "when"; roles and
filters hide a passage from the factors as from the answer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from taisce.service.memory import Memory
from tests.contract.factories import unique
from tests.contract.passage_recall import recalled_passages, store_embedded

# (id, role, occurred_at, content): the same painting told on three days, and by a tool
# on the day the questions name; a camping trip told with and without its time.
MESSAGES = [
    ("oct13", "user", "2023-10-13T18:00:00Z", "Mel painted a lake sunrise for the gallery."),
    ("oct20", "user", "2023-10-20T18:00:00Z", "Mel painted a lake sunrise at the gallery."),
    ("nov02", "user", "2023-11-02T18:00:00Z", "Mel painted the lake sunrise for a gallery."),
    ("tool20", "tool", "2023-10-20T19:00:00Z", "Mel painted a lake sunrise in the gallery."),
    ("plain", "user", "2023-06-01T10:00:00Z", "Camping by the lake with the kids is the best."),
    ("timed", "user", "2023-06-02T10:00:00Z", "We camped by a lake with the kids last weekend."),
]


@pytest.fixture
def memory(semantic_memory: Memory) -> Iterator[tuple[Memory, str]]:
    memory = semantic_memory
    project = unique("passages")
    messages = [
        {"id": unique(i), "role": role, "content": text, "source": "chat", "occurred_at": when}
        for i, role, when, text in MESSAGES
    ]
    store_embedded(memory, project, messages)
    yield memory, project


def quotes(memory: Memory, project: str, question: str, **controls: object) -> list[str]:
    return [p["quote"] for p in recalled_passages(memory, project, question, **controls)]


def test_the_day_the_question_names_comes_first(memory: tuple[Memory, str]) -> None:
    m, project = memory
    asked = "What did Mel paint on October 20, 2023?"
    found = quotes(m, project, asked, source_roles=["user"])
    assert found[0] == "Mel painted a lake sunrise at the gallery."
    # The same memory and request give the same answer; a smaller budget a prefix.
    assert quotes(m, project, asked, source_roles=["user"]) == found
    first_two = sum(len(q) + len("user") + len("chat") for q in found[:2])
    assert quotes(m, project, asked, source_roles=["user"], max_characters=first_two) == found[:2]
    # The tool's passage of that day neither appears nor comes first for the user...
    assert "Mel painted a lake sunrise in the gallery." not in found
    # ... and does with the tool's role asked for (it is the only passage of the day).
    tool = quotes(m, project, asked, source_roles=["tool"])
    assert tool == ["Mel painted a lake sunrise in the gallery."]


def test_a_filter_hides_the_days_passage_from_the_factor(memory: tuple[Memory, str]) -> None:
    m, project = memory
    # as_of before the day asked: that day's message has not occurred yet, so it is not
    # returned, and the month's factor lifts the other October passage over November's.
    found = quotes(
        m, project, "What did Mel paint on October 20, 2023?", as_of="2023-10-15T00:00:00Z"
    )
    assert "Mel painted a lake sunrise at the gallery." not in found
    assert found[0] == "Mel painted a lake sunrise for the gallery."


def test_when_puts_the_passage_that_states_a_time_first(memory: tuple[Memory, str]) -> None:
    m, project = memory
    found = quotes(m, project, "When did they go camping by the lake with the kids?")
    assert found.index("We camped by a lake with the kids last weekend.") < found.index(
        "Camping by the lake with the kids is the best."
    )
