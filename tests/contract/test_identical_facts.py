"""The Store contract for identical facts (domain/fact_identity.py): a fact identical
to a live fact of the project is not stored again, also under concurrent writers, and
put_facts maps its id to the stored one. Runs on every adapter."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.contract.factories import fact, in_threads, unique

ALL_ROLES = ("user", "assistant", "system", "tool")


@pytest.fixture
def project() -> str:
    return unique("once")


def ids_about(store: Any, project: str, key: str) -> list[str]:
    return [f.id for f in store.facts_about(project, [key], ALL_ROLES, 1000)]


def test_an_identical_fact_is_answered_with_the_stored_id(store: Any, project: str) -> None:
    assert store.put_facts(project, [fact("Atlas", "works at", "Acme Corp", id="a")]) == {}
    same = store.put_facts(project, [fact("Atlas", "works at", "Acme Corp", id="b")])
    assert same == {"b": "a"}
    assert ids_about(store, project, "atlas") == ["a"]


def test_copies_in_one_batch_are_stored_once(store: Any, project: str) -> None:
    batch = [fact("Atlas", "knows", "Bea", id=i) for i in ("a", "b", "c")]
    assert store.put_facts(project, batch) == {"b": "a", "c": "a"}
    assert ids_about(store, project, "atlas") == ["a"]


@pytest.mark.parametrize(
    "change",
    [
        {"object": "Acme"},
        {"statement": "Atlas is at Acme Corp"},
        {"quote": "I work at Acme Corp"},
        {"context": "from the intake form"},
        {"source_role": "tool"},
        {"valid_from": "2024-01-01T00:00:00Z"},
        {"object_kind": "value", "object_key": None},
    ],
)
def test_any_other_content_is_another_fact(store: Any, project: str, change: dict) -> None:
    store.put_facts(project, [fact("Atlas", "knows", "Acme Corp", id="a")])
    assert store.put_facts(project, [fact("Atlas", "knows", "Acme Corp", id="b", **change)]) == {}
    assert sorted(ids_about(store, project, "atlas")) == ["a", "b"]


def test_a_deleted_fact_can_be_stored_again(store: Any, project: str) -> None:
    store.put_facts(project, [fact("Atlas", "knows", "Bea", id="a")])
    assert store.delete_fact(project, "a")
    assert store.put_facts(project, [fact("Atlas", "knows", "Bea", id="b")]) == {}
    assert ids_about(store, project, "atlas") == ["b"]


def test_a_closed_fact_said_again_is_stored(store: Any, project: str) -> None:
    # Acme, then Beta, then Acme again: back at Acme is news, not a copy.
    store.put_facts(
        project, [fact("Atlas", "works at", "Acme", id="a", recorded_at="2024-01-01T00:00:00Z")]
    )
    store.put_facts(
        project, [fact("Atlas", "works at", "Beta", id="b", recorded_at="2024-02-01T00:00:00Z")]
    )
    again = fact("Atlas", "works at", "Acme", id="c", recorded_at="2024-03-01T00:00:00Z")
    assert store.put_facts(project, [again]) == {}
    assert ids_about(store, project, "atlas") == ["a", "b", "c"]


def test_projects_do_not_share_facts(store: Any, project: str) -> None:
    store.put_facts(project, [fact("Atlas", "knows", "Bea", id="a")])
    other = unique("once")
    assert store.put_facts(other, [fact("Atlas", "knows", "Bea", id="b")]) == {}


@pytest.mark.parametrize("predicate", ["knows", "works at"])
def test_concurrent_writers_store_one_fact(store: Any, project: str, predicate: str) -> None:
    # "works at" is single-valued: its batches go through the closing path.
    answers: dict[int, str] = {}
    lock = threading.Lock()
    start = threading.Barrier(6)

    def post(n: int) -> None:
        given = fact("Atlas", predicate, "Acme", id=f"f{n}")
        start.wait()
        same = store.put_facts(project, [given])
        with lock:
            answers[n] = same.get(given.id, given.id)

    assert in_threads(post, 6) == []
    stored = ids_about(store, project, "atlas")
    assert len(stored) == 1
    assert set(answers.values()) == set(stored)
