"""Report summaries end to end: `taisce serve` with TAISCE_EXTRACTOR=openai pointed at a
local endpoint replaying recorded answers (tests/openai_replay.py), facts stored over
HTTP, the server's worker rebuilding reports and having the model write their summaries,
and a recall with themes showing them; a failing model leaves statement summaries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from taisce.api.wiring import summary_model
from taisce.settings import SettingsError, load_settings
from tests.openai_replay import ChatReplay
from tests.server import start_server, wait_for_worker

MODEL = "qwen2.5:7b-instruct"
SETTLE_SECONDS = 60
LLM_SUMMARY = (
    "The user said that Sam Ortiz works at Acme Corp as a data engineer. "
    "He moved to Dublin in 2021."
)


def fact(subject: str, predicate: str, obj: str, statement: str, message: str) -> dict[str, str]:
    return {
        "subject": subject,
        "predicate": predicate,
        "object": obj,
        "object_kind": "value" if predicate == "works as" else "entity",
        "statement": statement,
        "source_role": "user",
        "message_id": message,
    }


SAM = [
    fact("Sam Ortiz", "works at", "Acme Corp", "Sam Ortiz works at Acme Corp.", "m-1"),
    fact("Sam Ortiz", "works as", "data engineer", "Sam Ortiz is a data engineer.", "m-1"),
    fact("Sam Ortiz", "lives in", "Dublin", "Sam Ortiz moved to Dublin in 2021.", "m-2"),
]
LEE = [
    fact("Lee Park", "leads", "Data Platform", "Lee Park leads the Data Platform team.", "m-3"),
    fact("Lee Park", "lives in", "Cork", "Lee Park lives in Cork.", "m-4"),
]


@pytest.fixture
def replay() -> Iterator[ChatReplay]:
    with ChatReplay() as running:
        yield running


def settle(http: httpx.Client) -> None:
    wait_for_worker(http, SETTLE_SECONDS, poll=0.05)


def themed_reports(http: httpx.Client, name: str) -> list[dict[str, Any]]:
    r = http.post("/v1/recalls", json={"question": name, "themes": True, "surfaces": ["reports"]})
    assert r.status_code == 200
    assert r.json()["degraded"] == []
    return r.json()["reports"]


def test_the_worker_has_the_model_write_summaries_and_falls_back_to_statements(
    tmp_path: Path, replay: ChatReplay
) -> None:
    replay.add("summary-valid")  # answers the Sam Ortiz report (matched by a statement)
    replay.add("server-error")  # answers the next request: the Lee Park report
    env = {
        "TAISCE_EXTRACTOR": "openai",
        "TAISCE_EXTRACTOR_MODEL": MODEL,
        "TAISCE_EXTRACTOR_BASE_URL": replay.base_url,
        "TAISCE_EXTRACTOR_TIMEOUT": "5",
        "TAISCE_EMBEDDINGS": "local",
    }
    server = start_server(tmp_path / "data", env)
    try:
        http = server.client(server.new_credential("summaries"))
        assert http.post("/v1/facts", json={"facts": SAM}).status_code == 201
        settle(http)
        (sam,) = themed_reports(http, "Sam Ortiz")
        assert sam["summary"] == LLM_SUMMARY
        assert sorted(sam["source_messages"]) == ["m-1", "m-2"]
        (request,) = replay.requests
        assert (
            "- [user] Sam Ortiz moved to Dublin in 2021."
            in request["body"]["messages"][1]["content"]
        )

        assert http.post("/v1/facts", json={"facts": LEE}).status_code == 201
        settle(http)
        (lee,) = themed_reports(http, "Lee Park")
        # The model answered HTTP 500: the report is stored with its statement summary.
        assert {lee["summary"]} & {
            "Lee Park leads the Data Platform team. Lee Park lives in Cork.",
            "Lee Park lives in Cork. Lee Park leads the Data Platform team.",
        }
        assert sorted(lee["source_messages"]) == ["m-3", "m-4"]
        assert len(replay.requests) == 2
        # The first report was not touched by the second write: no new model call.
        assert themed_reports(http, "Sam Ortiz")[0]["summary"] == LLM_SUMMARY
    finally:
        server.stop()


def test_statements_mode_and_invalid_settings(tmp_path: Path) -> None:
    extractor = {"TAISCE_EXTRACTOR": "openai", "TAISCE_EXTRACTOR_MODEL": MODEL}
    sentinel: Any = object()  # stands for the configured extraction model
    assert summary_model(load_settings(extractor), sentinel) is sentinel
    statements = {**extractor, "TAISCE_REPORT_SUMMARIES": "statements"}
    assert summary_model(load_settings(statements), sentinel) is None
    assert summary_model(load_settings({}), None) is None
    with pytest.raises(SettingsError, match="TAISCE_REPORT_SUMMARIES"):
        load_settings({"TAISCE_REPORT_SUMMARIES": "gpt"})
    with pytest.raises(SettingsError, match="TAISCE_REPORT_SUMMARIES=llm needs TAISCE_EXTRACTOR"):
        summary_model(load_settings({"TAISCE_REPORT_SUMMARIES": "llm"}), None)
    # The server does not start with either.
    for env in ({"TAISCE_REPORT_SUMMARIES": "gpt"}, {"TAISCE_REPORT_SUMMARIES": "llm"}):
        with pytest.raises(RuntimeError, match="TAISCE_REPORT_SUMMARIES"):
            start_server(tmp_path / "data", env).stop()
