"""The question without the names it writes (domain/question_topic.py)."""

from __future__ import annotations

import pytest

from taisce.domain.question_topic import nameless_question, written_names


@pytest.mark.parametrize(
    ("question", "nameless"),
    [
        ("When did Melanie run a charity race?", "When did someone run a charity race?"),
        ("What is Caroline's identity?", "What is someone identity?"),
        (
            "Where did Jon and Gina go in June 2023?",
            "Where did someone and someone go in June 2023?",
        ),
        ("What did Jean-Luc Picard command?", "What did someone someone command?"),
        # The first word of a sentence, "I" and the months are not names.
        ("Melanie said what?", "Melanie said what?"),
        ("I met Ana. Where is Bo now?", "I met someone. Where is someone now?"),
        ("What did I do in May?", "What did I do in May?"),
        # No case, no names: the question itself.
        ("田中さんはどこに住んでいますか", "田中さんはどこに住んでいますか"),
        ("what does atlas prefer?", "what does atlas prefer?"),
        ("", ""),
    ],
)
def test_written_names_are_replaced(question: str, nameless: str) -> None:
    assert nameless_question(question) == nameless


def test_spans_are_the_names_as_written() -> None:
    question = "Did Ana meet Bo Ó Sé?"
    assert [question[a:b] for a, b in written_names(question)] == ["Ana", "Bo", "Ó", "Sé"]
