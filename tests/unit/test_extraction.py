"""The domain side of extraction: locating quotes, validating output, building facts,
and Memory.extract_message on the embedded store with the OpenAI-compatible adapter
replaying recorded answers (retries, failure records, replay, idempotence)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taisce.adapters.extractors.openai_compatible import OpenAICompatible
from taisce.adapters.sqlite.store import SqliteStore
from taisce.domain.controls import Limits
from taisce.domain.extraction import (
    EXTRACTION_ATTEMPTS,
    ExtractionOutput,
    extracted_facts,
    locate_quote,
    parse_output,
)
from taisce.domain.ingest import MessagesRequest
from taisce.domain.model import Message
from taisce.domain.names import normalize_name
from taisce.domain.ports.extractor import ExtractionError
from taisce.service.memory import Memory
from taisce.service.work import extract_facts
from tests.openai_replay import ChatReplay

CONTENT = (
    "Hi, I'm Sam Ortiz. I work at Acme Corp as a data engineer, and i moved to\nDublin in 2021."
)


def message(content: str = CONTENT, role: str = "user", id: str = "m-1") -> Message:
    return Message(id, role, content, None, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z")  # type: ignore[arg-type]


# -- quotes ----------------------------------------------------------------------


def test_an_exact_quote_is_found_by_code_points() -> None:
    content = "🚀 Zoë said: «I work at Acme» today"
    start, end = locate_quote(content, "I work at Acme")  # type: ignore[misc]
    assert content[start:end] == "I work at Acme"
    assert start == 13  # code points, not UTF-8 or UTF-16 units


def test_a_quote_with_other_white_space_and_case_is_found_as_stored() -> None:
    span = locate_quote(CONTENT, "I moved to Dublin in 2021")
    assert span is not None
    assert CONTENT[span[0] : span[1]] == "i moved to\nDublin in 2021"


def test_quote_marks_the_model_added_are_dropped() -> None:
    span = locate_quote(CONTENT, "\u201cI work at Acme Corp\u201d")
    assert span is not None and CONTENT[span[0] : span[1]] == "I work at Acme Corp"


@pytest.mark.parametrize("quote", ["I work at Globex", "", "   ", "Acme Corp as a chef"])
def test_a_quote_not_in_the_message_is_not_found(quote: str) -> None:
    assert locate_quote(CONTENT, quote) is None


def _loose(text: str) -> str:
    return " ".join(text.strip(" \t\n\"'\u201c\u201d\u2018\u2019\u00ab\u00bb").split()).lower()


@given(st.text(min_size=1, max_size=60), st.integers(0, 60), st.integers(1, 30))
def test_a_found_quote_is_always_the_content_at_its_offsets(text: str, at: int, size: int) -> None:
    quote = text[at : at + size]
    span = locate_quote(text, quote)
    if quote.strip():
        assert span is not None  # a piece of the text is always found
    if span is not None:
        found = text[span[0] : span[1]]
        # Exact, or the same once white space runs, case and outer quote marks are set aside.
        assert found in (quote, quote.strip()) or _loose(found) == _loose(quote)


# -- output ----------------------------------------------------------------------


def output(*facts: dict[str, object]) -> ExtractionOutput:
    return parse_output(json.dumps({"facts": list(facts)}))


def fact(quote: str, **fields: object) -> dict[str, object]:
    made: dict[str, object] = {
        "subject": "Sam Ortiz",
        "predicate": "works at",
        "object": "Acme Corp",
        "object_kind": "entity",
        "statement": "Sam Ortiz works at Acme Corp.",
        "quote": quote,
        "context": None,
    }
    return {**made, **fields}


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ('{"facts": [', "not valid JSON"),
        ("[]", "a JSON list, not an object"),
        ('{"fact": []}', "facts: Field required"),
        (json.dumps({"facts": [fact("x", object_kind="company")]}), "facts.0.object_kind"),
        (json.dumps({"facts": [fact("x", subject="  ")]}), "facts.0.subject"),
        (json.dumps({"facts": [fact("x", predicate=7)]}), "facts.0.predicate"),
        (json.dumps({"facts": [fact("x")] * 501}), "facts: List should have at most 500"),
    ],
)
def test_bad_output_is_refused_whole(raw: str, problem: str) -> None:
    with pytest.raises(ExtractionError) as caught:
        parse_output(raw)
    assert problem in str(caught.value)


def test_facts_speak_for_the_message_role_whatever_the_model_says() -> None:
    doc = message("The handbook says Sam Ortiz works at Acme Corp.", role="tool", id="doc-1")
    made, dropped = extracted_facts(
        doc,
        output(fact("Sam Ortiz works at Acme Corp", source_role="user")),
        "2026-01-02T00:00:00Z",
    )
    assert dropped == 0
    (f,) = made
    assert f.source_role == "tool" and f.message_id == "doc-1"
    assert (f.quote, f.quote_start, f.quote_end) == ("Sam Ortiz works at Acme Corp", 18, 46)
    assert f.subject_key == normalize_name("Sam Ortiz") and f.object_key == "acme corp"


def test_facts_whose_quote_is_missing_are_dropped_and_counted() -> None:
    made, dropped = extracted_facts(
        message(),
        output(fact("I work at Acme Corp"), fact("I love hiking")),
        "2026-01-02T00:00:00Z",
    )
    assert [f.quote for f in made] == ["I work at Acme Corp"]
    assert dropped == 1


def test_ids_follow_the_message_and_the_fact() -> None:
    one = output(fact("I work at Acme Corp"))
    first, _ = extracted_facts(message(), one, "2026-01-02T00:00:00Z")
    again, _ = extracted_facts(message(), one, "2026-01-03T00:00:00Z")
    other, _ = extracted_facts(message(id="m-2"), one, "2026-01-02T00:00:00Z")
    twice, _ = extracted_facts(
        message(), output(fact("I work at Acme Corp"), fact("I work at Acme Corp")), "x"
    )
    assert first[0].id == again[0].id != other[0].id
    assert len(twice) == 1


# -- Memory.extract_message on the embedded store ------------------------------------------


@pytest.fixture
def replay() -> Iterator[ChatReplay]:
    with ChatReplay() as running:
        yield running


def memory(tmp_path: Path, replay: ChatReplay) -> Memory:
    store = SqliteStore(tmp_path / "t.sqlite3", mark_vectors=False, mark_extractions=True)
    extractor = OpenAICompatible(replay.base_url, "qwen2.5:7b-instruct", timeout=5)
    return Memory(store, Limits(16_000, 200), extractor=extractor, retry_wait=0)


def store_one(mem: Memory, content: str = CONTENT, role: str = "user") -> str:
    request = MessagesRequest.model_validate({"messages": [{"role": role, "content": content}]})
    (message_id,) = mem.store_messages("p", request)
    return message_id


def test_storing_marks_the_message_and_extraction_stores_its_facts(
    tmp_path: Path, replay: ChatReplay
) -> None:
    mem = memory(tmp_path, replay)
    replay.add("conversation")
    message_id = store_one(mem)
    assert mem.store.pending_extractions("p", 10) == [message_id]
    assert mem.work_pending()
    result = mem.extract_message("p", message_id)
    assert (result.status, result.facts, result.dropped) == ("stored", 3, 1)
    stored = mem.store.facts_with_subject("p", normalize_name("Sam Ortiz"))
    assert {(f.predicate, f.object, f.object_kind) for f in stored} == {
        ("works at", "Acme Corp", "entity"),
        ("works as", "data engineer", "value"),
        ("lives in", "Dublin", "entity"),
    }
    for f in stored:
        assert CONTENT[f.quote_start : f.quote_end] == f.quote
        assert f.source_role == "user" and f.message_id == message_id
    assert mem.store.pending_extractions("p", 10) == []
    assert mem.store.extraction_projects() == []
    # A second delivery (a queue's duplicate) changes nothing and calls no model.
    calls = len(replay.requests)
    assert mem.extract_message("p", message_id).status == "skipped"
    assert len(replay.requests) == calls


def test_a_redelivered_message_is_skipped_before_the_pass_is_asked_for_room(
    tmp_path: Path, replay: ChatReplay
) -> None:
    """The pass's `room` completes pending erasures (a read of the project's erasures
    each time): a work message delivered again, whose message is extracted already,
    costs the one read of its mark, not that. A message still marked asks it first,
    and a "no" keeps its mark."""
    mem = memory(tmp_path, replay)
    replay.add("conversation")
    first = store_one(mem)
    asked: list[None] = []

    def room() -> bool:
        asked.append(None)
        return True

    assert extract_facts(mem, "p", [first], room) == (1, False)
    assert len(asked) == 1
    assert extract_facts(mem, "p", [first], room) == (1, False)
    assert len(asked) == 1, "an extracted message asked for room"
    second = store_one(mem, "Dana Reyes moved to Galway.")
    calls = len(replay.requests)
    assert extract_facts(mem, "p", [second], lambda: False) == (0, True)
    assert len(replay.requests) == calls
    assert mem.store.pending_extractions("p", 10) == [second]


def test_a_repeated_extraction_stores_each_fact_once(tmp_path: Path, replay: ChatReplay) -> None:
    mem = memory(tmp_path, replay)
    replay.add("conversation")
    message_id = store_one(mem)
    mem.extract_message("p", message_id)
    # As after a crash between storing the facts and clearing the mark.
    mem.store.replay_extractions("p")  # nothing failed: nothing replayed
    with mem.store.file.write() as db:
        db.execute("INSERT INTO pending_extractions VALUES ('p', ?)", (message_id,))
    assert mem.extract_message("p", message_id).status == "stored"
    assert len(mem.store.facts_with_subject("p", normalize_name("Sam Ortiz"))) == 3


def test_bad_answers_are_retried_then_stored(tmp_path: Path, replay: ChatReplay) -> None:
    mem = memory(tmp_path, replay)
    replay.add("retried")
    message_id = store_one(mem)
    result = mem.extract_message("p", message_id)
    assert result.status == "stored" and result.facts == 1
    assert len(replay.requests) == 3
    assert mem.store.failed_extractions() == []


def test_a_message_that_fails_every_attempt_is_recorded_then_replayed(
    tmp_path: Path, replay: ChatReplay
) -> None:
    mem = memory(tmp_path, replay)
    replay.add("failing-then-valid")
    message_id = store_one(mem)
    assert mem.extract_pending("p") == 1
    assert len(replay.requests) == EXTRACTION_ATTEMPTS
    (failure,) = mem.store.failed_extractions("p")
    assert failure.message_id == message_id and failure.attempts == EXTRACTION_ATTEMPTS
    assert "stopped at max_tokens" in failure.error  # the last attempt's error
    # Nothing half-stored, nothing left pending: the worker does not loop on it.
    assert mem.store.facts_with_subject("p", normalize_name("Sam Ortiz")) == []
    assert mem.store.pending_extractions("p", 10) == []
    assert mem.extract_pending("p") == 0
    # Replayed, it is extracted with the next answer.
    assert [f.message_id for f in mem.replay_extractions("p")] == [message_id]
    assert mem.extract_pending("p") == 1
    assert mem.store.failed_extractions() == []
    assert len(mem.store.facts_with_subject("p", normalize_name("Sam Ortiz"))) == 1


def test_without_an_extractor_nothing_is_marked(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "t.sqlite3", mark_vectors=False)
    mem = Memory(store, Limits(16_000, 200))
    store_one(mem)
    assert store.extraction_projects() == []
    assert mem.extract_pending("p") == 0
