"""The extraction part of the Store contract, run against every adapter (see
conftest.py): quote offsets on facts, pending marks written with messages, failure
records and replay. The DynamoDB store shares one table between tests, so listings
across projects are checked for what a test wrote, not for equality."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from taisce.api import bodies
from taisce.domain.model import ExtractionFailure
from taisce.domain.names import normalize_name
from tests.contract.factories import fact, message, unique, with_passages


@pytest.fixture
def project() -> str:
    return unique("xproj")


@pytest.fixture
def marking(store: Any, project: str) -> Iterator[Any]:
    store.mark_extractions = True  # as the wiring sets it with an extractor configured
    yield store
    # The DynamoDB table is shared by the session: leave no pending work for the
    # servers of later tests to find.
    for message_id in store.pending_extractions(project, 1_000):
        store.finish_extraction(project, message_id)


def failure(project: str, message_id: str, error: str = "the output is not valid JSON") -> Any:
    return ExtractionFailure(project, message_id, error, 3, "2026-01-02T03:04:05Z")


def test_quote_offsets_come_back_with_the_fact(store: Any, project: str) -> None:
    with_offsets = fact(
        "Sam Ortiz",
        "works at",
        "Acme",
        quote="I work at Acme",
        quote_start=19,
        quote_end=33,
        message_id="m-1",
        role="tool",
    )
    without = fact("Sam Ortiz", "lives in", "Dublin")
    store.put_facts(project, [with_offsets, without])
    assert store.facts_with_subject(project, normalize_name("Sam Ortiz")) == [with_offsets, without]
    found = list(store.facts_about(project, ["acme"], ["tool"], 10))
    assert found == [with_offsets]
    assert bodies.fact(found[0])["quote_start"] == 19 and bodies.fact(without)["quote_end"] is None


def test_new_messages_are_marked_and_read_back_whole(marking: Any, project: str) -> None:
    first = message("I work at Acme Corp.", source="chat:1")
    second = message("Lee Park leads Data Platform.", role="tool")
    marking.put_messages(project, *with_passages(first, second))
    assert sorted(marking.pending_extractions(project, 10)) == sorted([first.id, second.id])
    assert project in marking.extraction_projects()
    assert marking.extraction_pending(project, first.id)
    assert marking.message(project, first.id) == first
    assert marking.message(project, second.id) == second
    assert marking.message(project, "no-such-message") is None
    assert marking.message(unique("other"), first.id) is None
    assert len(marking.pending_extractions(project, 1)) == 1


def test_a_message_stored_again_is_not_marked_again(marking: Any, project: str) -> None:
    m = message("I work at Acme Corp.")
    marking.put_messages(project, *with_passages(m))
    marking.finish_extraction(project, m.id)
    assert not marking.extraction_pending(project, m.id)
    assert marking.put_messages(project, *with_passages(m)) == set()
    assert marking.pending_extractions(project, 10) == []
    assert project not in marking.extraction_projects()


def test_without_marking_nothing_is_pending(store: Any, project: str) -> None:
    store.mark_extractions = False
    m = message("I work at Acme Corp.")
    store.put_messages(project, *with_passages(m))
    assert store.pending_extractions(project, 10) == []
    assert not store.extraction_pending(project, m.id)


def test_a_long_message_is_marked_with_it(marking: Any, project: str) -> None:
    # Hundreds of passages: more than one DynamoDB transaction holds.
    long = message(" ".join(f"Sentence number {n} of a long document." for n in range(1_500)))
    messages, passages = with_passages(long)
    assert len(passages) > 100
    marking.put_messages(project, messages, passages)
    assert marking.pending_extractions(project, 10) == [long.id]
    assert marking.message(project, long.id) == long


def test_a_failure_replaces_the_mark_until_replayed(marking: Any, project: str) -> None:
    ms = [message(f"Fact number {n}.") for n in range(3)]
    marking.put_messages(project, *with_passages(*ms))
    marking.finish_extraction(project, ms[0].id, failure(project, ms[0].id))
    marking.finish_extraction(project, ms[1].id, failure(project, ms[1].id, "HTTP 500"))
    marking.finish_extraction(project, ms[2].id)
    assert marking.pending_extractions(project, 10) == []
    failed = marking.failed_extractions(project)
    assert failed == sorted(
        [failure(project, ms[0].id), failure(project, ms[1].id, "HTTP 500")],
        key=lambda f: f.message_id,
    )
    assert set(failed) <= set(marking.failed_extractions())
    assert marking.failed_extractions(unique("other")) == []
    # Replay one message, then the rest of the project.
    assert marking.replay_extractions(project, [ms[1].id]) == [
        failure(project, ms[1].id, "HTTP 500")
    ]
    assert marking.pending_extractions(project, 10) == [ms[1].id]
    assert marking.failed_extractions(project) == [failure(project, ms[0].id)]
    assert marking.replay_extractions(project) == [failure(project, ms[0].id)]
    assert sorted(marking.pending_extractions(project, 10)) == sorted([ms[0].id, ms[1].id])
    assert marking.failed_extractions(project) == []
    assert marking.replay_extractions(project) == []


def test_replay_stays_in_its_project(marking: Any, project: str) -> None:
    other = unique("xother")
    m = message("I work at Acme Corp.")
    for p in (project, other):
        marking.put_messages(p, *with_passages(m))
        marking.finish_extraction(p, m.id, failure(p, m.id))
    assert marking.replay_extractions(project) == [failure(project, m.id)]
    assert marking.failed_extractions(other) == [failure(other, m.id)]
    assert marking.pending_extractions(other, 10) == []
