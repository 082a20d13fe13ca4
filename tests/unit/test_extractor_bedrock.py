"""The Bedrock Converse extractor against recorded Converse exchanges, through
botocore's Stubber: it checks the parameters the adapter sends (model, forced tool,
JSON schema, inference settings) against the recording, and answers with the recorded
response, which the adapter must parse. No network."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from taisce.adapters.extractors.bedrock_converse import BedrockConverse
from taisce.domain.extraction import extracted_facts, extraction_prompt, parse_output
from taisce.domain.model import Message
from taisce.domain.ports.extractor import ExtractionError

RECORDINGS = Path(__file__).parent.parent / "recordings" / "bedrock"
MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
# The recordings asked for 8,192 tokens, which Claude 3.5 Haiku allows (the default,
# 4,096, fits the template's default model; tests/unit/test_extractor_limits.py).
RECORDED_MAX_TOKENS = 8_192
DOCUMENT = Message(
    id="doc-1",
    role="tool",
    content="Acme Corp handbook, page 3.\nSam Ortiz reports to Lee Park. Lee Park leads the "
    "Data Platform team.",
    source="docs/handbook.md",
    occurred_at="2026-01-02T03:04:05Z",
    recorded_at="2026-01-02T03:04:05Z",
)


def exchange(name: str) -> dict[str, Any]:
    (only,) = json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))["exchanges"]
    return only


@pytest.fixture
def client() -> Any:
    return boto3.session.Session(
        aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1"
    ).client("bedrock-runtime")


def expected(recorded: dict[str, Any]) -> dict[str, Any]:
    """The recorded request, with the prompt text left to the prompt's own tests."""
    return {
        **recorded,
        "system": [{"text": ANY}],
        "messages": [{"role": "user", "content": [{"text": ANY}]}],
    }


def run(client: Any, name: str) -> Any:
    recorded = exchange(name)
    with Stubber(client) as stub:
        if "error" in recorded:
            error = recorded["error"]
            stub.add_client_error(
                "converse",
                service_error_code=error["code"],
                service_message=error["message"],
                http_status_code=error["status"],
                response_meta={"RequestId": error["request_id"]},
                expected_params=expected(recorded["request"]),
            )
        else:
            stub.add_response("converse", recorded["response"], expected(recorded["request"]))
        answer = BedrockConverse(client, MODEL, max_tokens=RECORDED_MAX_TOKENS).extract(
            extraction_prompt(DOCUMENT)
        )
        stub.assert_no_pending_responses()
    return answer


def test_the_forced_tool_input_becomes_facts_of_the_document(client: Any) -> None:
    answer = run(client, "converse-tool-use")
    facts, dropped = extracted_facts(DOCUMENT, parse_output(answer), "2026-01-02T03:04:06Z")
    assert dropped == 0
    assert [(f.subject, f.predicate, f.object) for f in facts] == [
        ("Sam Ortiz", "reports to", "Lee Park"),
        ("Lee Park", "leads", "Data Platform"),
    ]
    # The recording claims the user said it; the document is the tool's.
    assert {f.source_role for f in facts} == {"tool"}
    for f in facts:
        assert f.message_id == "doc-1"
        assert DOCUMENT.content[f.quote_start : f.quote_end] == f.quote
    # The second quote came back lower-cased: the stored quote is the document's text.
    assert facts[1].quote == "Lee Park leads the Data Platform team"


def test_the_prompt_says_whose_words_they_are(client: Any) -> None:
    prompt = extraction_prompt(DOCUMENT)
    assert "not said by the user" in prompt.system
    assert DOCUMENT.content in prompt.user and "docs/handbook.md" in prompt.user
    assert BedrockConverse(client, MODEL, max_tokens=RECORDED_MAX_TOKENS).request(prompt)[
        "system"
    ] == [{"text": prompt.system}]


@pytest.mark.parametrize(
    ("recording", "expected_error"),
    [
        ("converse-max-tokens", "stopped at max_tokens: partial output"),
        ("converse-no-tool", "did not call record_facts (stopReason 'end_turn')"),
        ("converse-throttled", "ThrottlingException (HTTP 429, request 5b0c7f0e"),
    ],
)
def test_failures_raise_extraction_errors(client: Any, recording: str, expected_error: str) -> None:
    with pytest.raises(ExtractionError) as caught:
        run(client, recording)
    assert expected_error in str(caught.value)
    assert MODEL in str(caught.value)
    assert "Too many requests" not in str(caught.value)  # the service's own text


def test_a_tool_input_that_breaks_the_schema_is_refused(client: Any) -> None:
    answer = run(client, "converse-schema-violation")
    with pytest.raises(ExtractionError, match=r"facts\.0\.predicate: Field required"):
        parse_output(answer)
