"""Choosing an embedder by name (TAISCE_EMBEDDINGS)."""

from __future__ import annotations

import pytest

from taisce.adapters.embedders import make_embedder
from taisce.adapters.embedders.bedrock_titan import BedrockTitan
from taisce.adapters.embedders.local_minilm import LocalMiniLM


def test_none_is_no_embedder() -> None:
    assert make_embedder("none") is None


def test_local_is_the_minilm_model_not_yet_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_loading(self: LocalMiniLM) -> None:
        raise AssertionError("the model loaded before its first use")

    monkeypatch.setattr(LocalMiniLM, "_new_session", no_loading)
    embedder = make_embedder("local")
    assert isinstance(embedder, LocalMiniLM)
    assert (embedder.name, embedder.dimensions) == ("local-minilm", 384)


def test_bedrock_is_titan_v2_on_a_bedrock_runtime_client(monkeypatch: pytest.MonkeyPatch) -> None:
    # A region is all boto3 needs to build the client; nothing is called.
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    embedder = make_embedder("bedrock")
    assert isinstance(embedder, BedrockTitan)
    assert (embedder.name, embedder.dimensions) == ("bedrock-titan", 1024)
    assert embedder._client.meta.service_model.service_name == "bedrock-runtime"
    assert embedder._client.meta.region_name == "eu-west-1"


@pytest.mark.parametrize("name", ["", "openai", "Local", "bedrock-titan"])
def test_unknown_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="unknown embedder"):
        make_embedder(name)
