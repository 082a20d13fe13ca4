"""Report summaries through the Bedrock Converse adapter, on recorded Converse exchanges
(tests/recordings/bedrock/converse-summary*.json) replayed by botocore's Stubber: the
adapter must send the forced `write_summary` tool with the summary schema, and the
tool's input is the summary. A throttled model leaves the statement summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from taisce.adapters.extractors.bedrock_converse import BedrockConverse
from taisce.domain.ingest import FactsRequest, make_fact
from taisce.domain.model import Fact
from taisce.domain.reports import build_reports
from taisce.domain.summaries import SummaryWriter

RECORDINGS = Path(__file__).parent.parent / "recordings" / "bedrock"
MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
# The recordings asked for 8,192 tokens, which Claude 3.5 Haiku allows (the default,
# 4,096, fits the template's default model; tests/unit/test_extractor_limits.py).
RECORDED_MAX_TOKENS = 8_192


def handbook_facts() -> list[Fact]:
    given = FactsRequest.model_validate(
        {
            "facts": [
                {
                    "subject": "Sam Ortiz",
                    "predicate": "reports to",
                    "object": "Lee Park",
                    "statement": "Sam Ortiz reports to Lee Park.",
                    "source_role": "tool",
                    "message_id": "doc-1",
                },
                {
                    "subject": "Lee Park",
                    "predicate": "leads",
                    "object": "Data Platform",
                    "statement": "Lee Park leads the Data Platform team.",
                    "source_role": "tool",
                    "message_id": "doc-2",
                },
            ]
        }
    )
    return [make_fact(f, "2026-01-02T03:04:05Z") for f in given.facts]


@pytest.fixture
def client() -> Any:
    return boto3.session.Session(
        aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1"
    ).client("bedrock-runtime")


def rebuild(client: Any, name: str) -> tuple[list[Any], SummaryWriter]:
    (recorded,) = json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))["exchanges"]
    # The prompt's text is checked through the OpenAI-compatible adapter's tests.
    expected = {
        **recorded["request"],
        "system": [{"text": ANY}],
        "messages": [{"role": "user", "content": [{"text": ANY}]}],
    }
    writer = SummaryWriter(BedrockConverse(client, MODEL, max_tokens=RECORDED_MAX_TOKENS))
    with Stubber(client) as stub:
        if "error" in recorded:
            error = recorded["error"]
            stub.add_client_error(
                "converse",
                service_error_code=error["code"],
                service_message=error["message"],
                http_status_code=error["status"],
                response_meta={"RequestId": error["request_id"]},
                expected_params=expected,
            )
        else:
            stub.add_response("converse", recorded["response"], expected)
        reports = build_reports(handbook_facts(), rewrite=writer)
        stub.assert_no_pending_responses()
    return reports, writer


def test_the_forced_tool_input_is_the_summary(client: Any) -> None:
    (report,), writer = rebuild(client, "converse-summary")
    assert report.summary == (
        "The handbook says Sam Ortiz reports to Lee Park, who leads the Data Platform team."
    )
    # Lee Park, named by both facts, comes first in summary order: so does his message.
    assert report.role == "tool" and report.source_messages == ("doc-2", "doc-1")
    assert writer.counts == {"llm": 1}


def test_a_throttled_model_leaves_the_statement_summary(client: Any) -> None:
    (report,), writer = rebuild(client, "converse-summary-throttled")
    (statements,) = build_reports(handbook_facts())
    assert report == statements
    assert "Sam Ortiz reports to Lee Park." in report.summary
    assert writer.counts == {"fallback": 1}
