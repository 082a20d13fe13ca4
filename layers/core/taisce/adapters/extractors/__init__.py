"""Extraction models, one file per provider, chosen by name (TAISCE_EXTRACTOR).

Providers are imported inside `make_extractor`, so "none" imports no SDK.
"""

from __future__ import annotations

from ...ports import Extractor

EXTRACTOR_NAMES = ("none", "bedrock", "openai")


def make_extractor(
    name: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = 60.0,
) -> Extractor | None:
    """The extractor called `name`; None for "none". Nothing is called until used."""
    if name == "none":
        return None
    if not model:
        raise ValueError(f"extractor {name!r} needs a model")
    if name == "bedrock":
        import boto3
        from botocore.config import Config

        from .bedrock_converse import BedrockConverse

        # Standard retries back off with jitter on throttling before the domain's own
        # attempts; the read timeout allows a long answer.
        config = Config(
            retries={"mode": "standard", "max_attempts": 4},
            read_timeout=max(timeout, 1.0),
            connect_timeout=5,
        )
        return BedrockConverse(boto3.client("bedrock-runtime", config=config), model)
    if name == "openai":
        from .openai_compatible import OpenAICompatible

        if not base_url:
            raise ValueError("extractor 'openai' needs a base URL")
        return OpenAICompatible(base_url, model, api_key=api_key, timeout=timeout)
    raise ValueError(f"unknown extractor {name!r}; expected one of {', '.join(EXTRACTOR_NAMES)}")
