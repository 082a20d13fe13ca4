"""Names found in a question cost the store a bounded number of look-ups (issue 15).

A question that repeats a known name 10,000 times, or names nothing in 10,000
characters, asks the store about at most MAX_CANDIDATES distinct names, on both
stores, and still finds the name it repeats.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import pytest

from taisce.api import bodies
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.ingest import FactsRequest
from taisce.domain.names import MAX_CANDIDATES
from taisce.service.memory import Memory
from tests.contract.factories import unique


class _Counting:
    """The store, with the names each resolve_names call asked about recorded."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.asked: list[int] = []

    def resolve_names(
        self, project: str, keys: Collection[str], roles: Collection[str] | None = None
    ) -> dict[str, str]:
        self.asked.append(len(keys))
        assert len(set(keys)) == len(keys), "a key asked about twice"
        return self._store.resolve_names(project, keys, roles)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def _store_fact(memory: Memory, project: str, subject: str, obj: str) -> None:
    fact = {"subject": subject, "predicate": "likes", "object": obj, "source_role": "user"}
    memory.store_facts(project, FactsRequest.model_validate({"facts": [fact]}))


def _recall(memory: Memory, project: str, question: str) -> dict[str, Any]:
    return bodies.recall(
        memory.recall(project, RecallRequest.model_validate({"question": question}))
    )


@pytest.mark.parametrize(
    "question",
    [
        "x😀" * 5_000,
        "x😀 " * 3_333,
        # "likes": a word the fact holds, so that step 1's ranking keeps it.
        ("Atlas likes " + " ".join(f"w{n}" for n in range(3_000)))[:10_000],
        "a" + " x😀 b" * 1_999,
    ],
    ids=["emoji-run", "emoji-words", "distinct-words", "mixed"],
)
def test_a_long_question_asks_about_a_bounded_number_of_names(store: Any, question: str) -> None:
    counting = _Counting(store)
    memory = Memory(counting, Limits(bundle_characters=4_000, max_rows=20))  # type: ignore[arg-type]
    project = unique("names")
    _store_fact(memory, project, "x😀", "Atlas")
    body = _recall(memory, project, question)
    assert counting.asked and max(counting.asked) <= MAX_CANDIDATES
    # The name it repeats is still found, or the first word (Atlas, the fact's object):
    # past 1,000 distinct words only single words are looked up.
    assert [f["subject"] for f in body["facts"]] == ["x😀"]


def test_an_ordinary_question_asks_about_every_run(store: Any) -> None:
    counting = _Counting(store)
    memory = Memory(counting, Limits(bundle_characters=4_000, max_rows=20))  # type: ignore[arg-type]
    project = unique("names")
    _store_fact(memory, project, "Acme Corp", "Dublin")
    body = _recall(memory, project, "What does Acme Corp like?")
    # what, does, acme, corp, like, ? -> 6 + 5 + 4 + 3 + 2 + 1 distinct runs
    assert counting.asked[0] == 21
    assert [f["subject"] for f in body["facts"]] == ["Acme Corp"]
