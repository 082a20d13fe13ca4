"""The extractor asks for no more output than the configured model allows: Bedrock
refuses a Converse request whose maxTokens passes the model's limit, so with the
template's defaults every extraction would fail."""

from __future__ import annotations

from typing import Any

import pytest

from taisce.api.wiring import open_extractor
from taisce.domain.extraction import extraction_prompt
from taisce.domain.model import Message
from taisce.local.routes import load_template
from taisce.settings import SettingsError, load_settings
from tests.moto_server import TEMPLATE

# Output-token limits of models the template may default to (Bedrock model cards).
OUTPUT_LIMITS = {
    "anthropic.claude-3-haiku-20240307-v1:0": 4_096,
    "anthropic.claude-3-5-haiku-20241022-v1:0": 8_192,
}
MESSAGE = Message(
    id="m-1",
    role="user",
    content="I work at Acme Corp.",
    source=None,
    occurred_at="2026-01-02T03:04:05Z",
    recorded_at="2026-01-02T03:04:05Z",
)


def _parameters() -> dict[str, Any]:
    return load_template(TEMPLATE)["Parameters"]


def _bedrock_request(monkeypatch: pytest.MonkeyPatch, **env: str) -> dict[str, Any]:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    settings = load_settings({"TAISCE_EXTRACTOR": "bedrock", **env})
    extractor = open_extractor(settings)
    assert extractor is not None
    return extractor.request(extraction_prompt(MESSAGE))  # type: ignore[attr-defined]


def test_the_templates_default_model_gets_a_request_it_accepts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parameters = _parameters()
    model = parameters["ExtractorModelId"]["Default"]
    max_tokens = str(parameters["ExtractorMaxTokens"]["Default"])
    request = _bedrock_request(
        monkeypatch, TAISCE_EXTRACTOR_MODEL=model, TAISCE_EXTRACTOR_MAX_TOKENS=max_tokens
    )
    assert request["modelId"] == model
    assert request["inferenceConfig"]["maxTokens"] <= OUTPUT_LIMITS[model]


def test_unset_the_setting_fits_the_default_model_too(monkeypatch: pytest.MonkeyPatch) -> None:
    model = _parameters()["ExtractorModelId"]["Default"]
    request = _bedrock_request(monkeypatch, TAISCE_EXTRACTOR_MODEL=model)
    assert request["inferenceConfig"]["maxTokens"] <= OUTPUT_LIMITS[model]


def test_a_model_with_a_larger_limit_may_be_given_more(monkeypatch: pytest.MonkeyPatch) -> None:
    request = _bedrock_request(
        monkeypatch,
        TAISCE_EXTRACTOR_MODEL="anthropic.claude-3-5-haiku-20241022-v1:0",
        TAISCE_EXTRACTOR_MAX_TOKENS="8192",
    )
    assert request["inferenceConfig"]["maxTokens"] == 8_192


def test_a_limit_too_small_for_any_answer_is_refused_at_start() -> None:
    with pytest.raises(SettingsError, match="TAISCE_EXTRACTOR_MAX_TOKENS"):
        load_settings({"TAISCE_EXTRACTOR_MAX_TOKENS": "100"})
