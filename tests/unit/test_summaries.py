"""Report summaries written by a model (domain/summaries.py): the answer's checks, and
rebuilds on the real SQLite store through the OpenAI-compatible adapter talking to a
local endpoint that replays recorded answers (tests/recordings/openai/summary-*.json and
the extraction recordings' failures)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from taisce.adapters.extractors.openai_compatible import OpenAICompatible
from taisce.adapters.sqlite.store import SqliteStore
from taisce.domain.controls import Limits
from taisce.domain.ingest import FactsRequest, make_fact
from taisce.domain.model import Fact
from taisce.domain.ports.extractor import ExtractionError
from taisce.domain.reports import build_reports
from taisce.domain.summaries import (
    PROMPT_STATEMENTS,
    SummaryWriter,
    fit_sentences,
    parse_summary,
    summary_facts,
)
from taisce.service.memory import Memory
from tests.openai_replay import ChatReplay

MODEL = "qwen2.5:7b-instruct"
SAM = [
    ("Sam Ortiz", "works at", "Acme Corp", "Sam Ortiz works at Acme Corp.", "m-1"),
    ("Sam Ortiz", "works as", "data engineer", "Sam Ortiz is a data engineer.", "m-1"),
    ("Sam Ortiz", "lives in", "Dublin", "Sam Ortiz moved to Dublin in 2021.", "m-2"),
]
LLM_SUMMARY = (
    "The user said that Sam Ortiz works at Acme Corp as a data engineer. "
    "He moved to Dublin in 2021."
)


def facts_request(rows: list[tuple[str, str, str, str, str]]) -> FactsRequest:
    return FactsRequest.model_validate(
        {
            "facts": [
                {
                    "subject": s,
                    "predicate": p,
                    "object": o,
                    "object_kind": "value" if p == "works as" else "entity",
                    "statement": statement,
                    "source_role": "user",
                    "message_id": message,
                }
                for s, p, o, statement, message in rows
            ]
        }
    )


def facts(rows: list[tuple[str, str, str, str, str]]) -> list[Fact]:
    return [make_fact(f, "2026-01-01T00:00:00Z") for f in facts_request(rows).facts]


@pytest.fixture
def replay() -> Iterator[ChatReplay]:
    with ChatReplay() as running:
        yield running


def model(replay: ChatReplay, timeout: float = 5.0) -> OpenAICompatible:
    return OpenAICompatible(replay.base_url, MODEL, timeout=timeout)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(tmp_path / "t.sqlite3")
    yield opened
    opened.close()


def rebuilt(store: SqliteStore, replay: ChatReplay, **kwargs: float) -> Memory:
    memory = Memory(
        store,
        Limits(),
        clock=lambda: datetime(2026, 1, 2, tzinfo=UTC),
        summary_model=model(replay, **kwargs),
    )
    memory.store_facts("p", facts_request(SAM))
    memory.rebuild_reports("p")
    return memory


# -- the answer's checks -----------------------------------------------------------------


def test_a_valid_answer_is_taken_with_white_space_collapsed() -> None:
    given = facts(SAM)
    assert parse_summary('{"summary": " Sam Ortiz\\n works at  Acme Corp. "}', given, 600) == (
        "Sam Ortiz works at Acme Corp."
    )
    # Bedrock's tool input comes parsed.
    assert parse_summary({"summary": "He moved in 2021."}, given, 600) == "He moved in 2021."


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ("not json", "not valid JSON"),
        ('["a list"]', "JSON list, not an object"),
        ('{"text": "Sam works."}', "no summary string"),
        ('{"summary": 3}', "no summary string"),
        ('{"summary": " \\n "}', "blank"),
        ('{"summary": "Sam Ortiz has lived in Dublin since 2019."}', "1 numbers no fact states"),
        ('{"summary": "Sam Ortiz moved to Dublin 20 years ago."}', "1 numbers no fact states"),
    ],
)
def test_invalid_answers_are_refused_without_quoting_them(answer: str, error: str) -> None:
    with pytest.raises(ExtractionError, match=error) as caught:
        parse_summary(answer, facts(SAM), 600)
    assert "Sam" not in str(caught.value)


def test_a_long_summary_keeps_its_leading_whole_sentences() -> None:
    text = "Sam Ortiz works at Acme Corp. He is a data engineer. He moved to Dublin in 2021."
    assert fit_sentences(text, len(text)) == text
    assert fit_sentences(text, 60) == "Sam Ortiz works at Acme Corp. He is a data engineer."
    assert fit_sentences(text, 29) == "Sam Ortiz works at Acme Corp."
    with pytest.raises(ExtractionError, match="first sentence is longer than 28 characters"):
        fit_sentences(text, 28)
    # No sentence end at all: never cut mid-word, refused.
    with pytest.raises(ExtractionError):
        fit_sentences("word " * 50, 100)


def test_the_model_is_given_each_statement_once_within_the_bounds() -> None:
    many = [(f"E{n}", "knows", f"F{n}", f"E{n} knows F{n}.", f"m-{n}") for n in range(80)]
    given = summary_facts(facts([*many, many[0]]))
    assert len({f.statement for f in given}) == PROMPT_STATEMENTS
    # A repeated statement's fact comes along: its message is a source too.
    assert given[-1].statement == "E0 knows F0." and len(given) == PROMPT_STATEMENTS + 1


# -- rebuilds through the adapter --------------------------------------------------------


def test_the_model_writes_the_summary_of_the_report(store: SqliteStore, replay: ChatReplay) -> None:
    replay.add("summary-valid")
    memory = rebuilt(store, replay)
    (report,) = store.reports_of_entity("p", "sam ortiz", ["user"])
    assert report.summary == LLM_SUMMARY
    assert sorted(report.source_messages) == ["m-1", "m-2"]
    assert memory.summary_counts == {"llm": 1}
    assert not store.dirty_projects()
    (request,) = replay.requests
    body = request["body"]
    assert body["response_format"]["json_schema"]["name"] == "write_summary"
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["summary"]
    system, user = (m["content"] for m in body["messages"])
    assert "claim of the user" in system and "At most 600 characters" in system
    lines = user.splitlines()
    assert lines[1:3] == ["Role: user", "<facts>"] and lines[-1] == "</facts>"
    # Ordered as the statement summary (same storing time: by fact id).
    assert sorted(lines[3:-1]) == [
        "- [user] Sam Ortiz is a data engineer.",
        "- [user] Sam Ortiz moved to Dublin in 2021.",
        "- [user] Sam Ortiz works at Acme Corp.",
    ]


@pytest.mark.parametrize(
    "recording", ["server-error", "not-a-completion", "summary-made-up-number", "slow"]
)
def test_a_failing_model_leaves_the_statement_summary(
    store: SqliteStore, replay: ChatReplay, recording: str
) -> None:
    replay.add(recording)
    memory = rebuilt(store, replay, timeout=0.5)
    (report,) = store.reports_of_entity("p", "sam ortiz", ["user"])
    # The worker builds from the facts in storing order.
    stored = sorted(store.facts_with_subject("p", "sam ortiz"), key=lambda f: (f.recorded_at, f.id))
    (expected,) = build_reports(stored)
    assert report.summary == expected.summary
    assert sorted(report.summary.replace(". ", ".|").split("|")) == sorted(s[3] for s in SAM)
    assert report.source_messages == expected.source_messages
    assert memory.summary_counts == {"fallback": 1}
    assert not store.dirty_projects()


def test_a_pass_stops_calling_past_its_budget(replay: ChatReplay) -> None:
    components = [(f"E{n}", "knows", f"F{n}", f"E{n} knows F{n}.", f"m-{n}") for n in range(4)]
    replay.add("summary-refused")  # two refused answers, then nothing is recorded
    writer = SummaryWriter(model(replay), failures=2)
    reports = build_reports(facts(components), rewrite=writer)
    assert writer.counts == {"fallback": 2, "not_asked": 2}
    assert len(replay.requests) == 2
    assert [r.summary for r in reports] == [f"E{n} knows F{n}." for n in range(4)]

    replay.add("summary-valid")
    writer = SummaryWriter(model(replay), calls=1)
    build_reports(facts([*components, *SAM]), rewrite=writer)
    # Acme Corp's component comes first (by its smallest key), and is the one asked.
    assert writer.counts == {"llm": 1, "not_asked": 4}

    now = iter([0.0, 31.0])  # the pass began at 0; 30 s later nothing is asked
    writer = SummaryWriter(model(replay), clock=lambda: next(now))
    (report,) = build_reports(facts(SAM), rewrite=writer)
    assert writer.counts == {"not_asked": 1} and not report.summary.startswith("The user")


def test_a_summary_too_long_is_trimmed_to_whole_sentences(replay: ChatReplay) -> None:
    replay.add("summary-too-long")
    writer = SummaryWriter(model(replay), limit=60)
    (report,) = build_reports(facts(SAM), summary_characters=60, rewrite=writer)
    assert report.summary == "Sam Ortiz works at Acme Corp. He is a data engineer."
    # The model was given every statement, so every fact's message is a source.
    assert sorted(report.source_messages) == ["m-1", "m-2"]
    assert writer.counts == {"llm": 1}
