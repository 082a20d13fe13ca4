"""Embedding models, one file per provider, chosen by name (TAISCE_EMBEDDINGS).

Providers are imported inside `make_embedder`, so choosing "none" imports neither numpy
nor botocore, and choosing one provider never imports the other's SDK.
"""

from __future__ import annotations

from ...domain.ports.vectors import Embedder

EMBEDDER_NAMES = ("none", "local", "bedrock")


def make_embedder(name: str) -> Embedder | None:
    """The embedder called `name`; None for "none". No model is loaded until first used."""
    if name == "none":
        return None
    if name == "local":
        from .local_minilm import LocalMiniLM

        return LocalMiniLM()
    if name == "bedrock":
        import boto3
        from botocore.config import Config

        from .bedrock_titan import BedrockTitan

        # Standard retries back off with jitter on throttling before we give up.
        config = Config(retries={"mode": "standard", "max_attempts": 4})
        return BedrockTitan(boto3.client("bedrock-runtime", config=config))
    raise ValueError(f"unknown embedder {name!r}; expected one of {', '.join(EMBEDDER_NAMES)}")
