"""The OpenAI-compatible extractor against a local endpoint replaying recorded answers
(tests/openai_replay.py over real HTTP): the request it builds, and every kind of bad
answer a self-hosted model or a hosted endpoint gives."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from taisce.adapters.extractors.openai_compatible import OpenAICompatible
from taisce.domain.extraction import OUTPUT_SCHEMA, extraction_prompt, parse_output
from taisce.domain.model import Message
from taisce.domain.ports.extractor import ExtractionError
from tests.openai_replay import ChatReplay

MESSAGE = Message(
    id="m-1",
    role="user",
    content="Hi, I'm Sam Ortiz. I work at Acme Corp as a data engineer.",
    source="chat:42",
    occurred_at="2026-01-02T03:04:05Z",
    recorded_at="2026-01-02T03:04:05Z",
)
SECRET = "sk-test-not-a-real-key"


@pytest.fixture
def replay() -> Iterator[ChatReplay]:
    with ChatReplay() as running:
        yield running


def extractor(replay: ChatReplay, timeout: float = 5.0) -> OpenAICompatible:
    return OpenAICompatible(replay.base_url, "qwen2.5:7b-instruct", api_key=SECRET, timeout=timeout)


def test_the_request_asks_for_json_schema_output(replay: ChatReplay) -> None:
    replay.add("valid")
    answer = extractor(replay).extract(extraction_prompt(MESSAGE))
    (sent,) = replay.requests
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["Authorization"] == f"Bearer {SECRET}"
    body = sent["body"]
    assert body["model"] == "qwen2.5:7b-instruct"
    assert body["temperature"] == 0
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"] == OUTPUT_SCHEMA
    system, user = body["messages"]
    assert system["role"] == "system" and "author of the message is the user" in system["content"]
    assert user["role"] == "user" and MESSAGE.content in user["content"]
    # The content is returned as text; the domain parses and validates it.
    (fact,) = parse_output(answer).facts
    assert (fact.subject, fact.predicate, fact.object) == ("Sam Ortiz", "works at", "Acme Corp")


def test_no_api_key_sends_no_authorization(replay: ChatReplay) -> None:
    replay.add("valid")
    OpenAICompatible(replay.base_url, "m").extract(extraction_prompt(MESSAGE))
    assert "Authorization" not in replay.requests[0]["headers"]


def test_malformed_json_is_returned_for_the_domain_to_refuse(replay: ChatReplay) -> None:
    replay.add("malformed-json")
    answer = extractor(replay).extract(extraction_prompt(MESSAGE))
    with pytest.raises(ExtractionError, match="not valid JSON"):
        parse_output(answer)


def test_schema_violations_are_refused(replay: ChatReplay) -> None:
    replay.add("schema-violation")
    answer = extractor(replay).extract(extraction_prompt(MESSAGE))
    with pytest.raises(ExtractionError, match="breaks the schema") as caught:
        parse_output(answer)
    assert "facts.0.predicate" in str(caught.value)
    assert "Acme" not in str(caught.value)  # never quotes the output


@pytest.mark.parametrize(
    ("recording", "expected"),
    [
        ("partial", "stopped at max_tokens: partial output"),
        ("not-a-completion", "without a chat completion"),
        ("rate-limited", "answered HTTP 429, retry after 7"),
        ("server-error", "answered HTTP 500"),
    ],
)
def test_failures_raise_extraction_errors(
    replay: ChatReplay, recording: str, expected: str
) -> None:
    replay.add(recording)
    with pytest.raises(ExtractionError) as caught:
        extractor(replay).extract(extraction_prompt(MESSAGE))
    text = str(caught.value)
    assert expected in text
    assert "qwen2.5:7b-instruct at 127.0.0.1" in text
    # Neither the key, the message, nor the endpoint's own error text.
    assert SECRET not in text and "Sam" not in text and "CUDA" not in text


def test_a_slow_answer_times_out(replay: ChatReplay) -> None:
    replay.add("slow")
    with pytest.raises(ExtractionError, match=r"did not answer within 0.5 s"):
        extractor(replay, timeout=0.5).extract(extraction_prompt(MESSAGE))


def test_an_unreachable_endpoint_is_an_extraction_error(replay: ChatReplay) -> None:
    url = replay.base_url
    replay.stop()
    with pytest.raises(ExtractionError, match="could not be reached"):
        OpenAICompatible(url, "m", timeout=2).extract(extraction_prompt(MESSAGE))
