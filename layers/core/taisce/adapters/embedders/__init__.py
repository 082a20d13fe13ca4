"""Embedding models, one file per provider, chosen by name (TAISCE_EMBEDDINGS).

Providers are imported inside `make_embedder`, so choosing "none" imports neither numpy
nor botocore, and choosing one provider never imports the other's SDK.
"""

from __future__ import annotations

from ...domain.ports.vectors import Embedder

EMBEDDER_NAMES = ("none", "local", "multilingual", "bedrock")


def make_embedder(name: str) -> Embedder | None:
    """The embedder called `name`; None for "none". No model is loaded until first used."""
    if name == "none":
        return None
    if name == "local":
        from .local_minilm import LocalMiniLM

        return LocalMiniLM()
    if name == "multilingual":
        from .multilingual_e5 import MultilingualE5

        return MultilingualE5()
    if name == "bedrock":
        import boto3
        from botocore.config import Config

        from .bedrock_titan import BedrockTitan

        # Short timeouts and one retry (standard mode backs off with jitter): botocore's
        # 60 s x 4 attempts would outlive a recall's whole function; a failed embedding
        # degrades a recall and stays pending for the worker's next pass.
        config = Config(
            connect_timeout=2,
            read_timeout=10,
            retries={"mode": "standard", "max_attempts": 2},
        )
        return BedrockTitan(boto3.client("bedrock-runtime", config=config))
    raise ValueError(f"unknown embedder {name!r}; expected one of {', '.join(EMBEDDER_NAMES)}")
