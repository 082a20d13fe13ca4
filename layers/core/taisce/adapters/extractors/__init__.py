"""Extraction models, one file per provider, chosen by name (TAISCE_EXTRACTOR).

Providers are imported inside `make_extractor`, so "none" imports no SDK.
"""

from __future__ import annotations

from ...domain.ports.extractor import Extractor

EXTRACTOR_NAMES = ("none", "bedrock", "openai")
# Calls botocore makes for one Converse request (the first and its retries): a read
# timeout is retried too, so one attempt of the domain can wait this many timeouts.
BEDROCK_CALL_ATTEMPTS = 2


def make_extractor(
    name: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = 60.0,
    max_tokens: int = 4_096,
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
        # attempts; the read timeout allows a long answer. The worker's time budget per
        # message counts these calls (service/work.py, `extraction_seconds`).
        config = Config(
            retries={"mode": "standard", "max_attempts": BEDROCK_CALL_ATTEMPTS},
            read_timeout=max(timeout, 1.0),
            connect_timeout=5,
        )
        return BedrockConverse(
            boto3.client("bedrock-runtime", config=config), model, max_tokens=max_tokens
        )
    if name == "openai":
        from .openai_compatible import OpenAICompatible

        if not base_url:
            raise ValueError("extractor 'openai' needs a base URL")
        return OpenAICompatible(
            base_url, model, api_key=api_key, timeout=timeout, max_tokens=max_tokens
        )
    raise ValueError(f"unknown extractor {name!r}; expected one of {', '.join(EXTRACTOR_NAMES)}")
