"""Amazon Titan Text Embeddings v2 on Amazon Bedrock (InvokeModel).

The adapter takes an existing `bedrock-runtime` client, so the caller owns region, retries
and credentials, and tests can stub the client. Error messages name the model, the error
code, the HTTP status and the request id, and never the text being embedded (nor the
service's own message, which may quote it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from ...domain.ports.vectors import EmbeddingError
from .texts import checked_texts

DEFAULT_MODEL_ID = "amazon.titan-embed-text-v2:0"
ALLOWED_DIMENSIONS = (256, 512, 1024)
# InvokeModel takes at most 8,192 tokens or 50,000 characters for Titan v2. Longer text is
# cut to the character limit here; text dense enough to pass 8,192 tokens within 50,000
# characters still fails, as a ValidationException (an EmbeddingError).
MAX_CHARACTERS = 50_000
# Titan v2 embeds one text per call, so a batch is a set of concurrent calls. Eight stays
# under botocore's default connection pool (max_pool_connections=10) and keeps a burst small
# against the account's requests-per-minute quota.
DEFAULT_WORKERS = 8


class BedrockTitan:
    """Titan Text Embeddings v2: unit vectors of 256, 512 or 1024 dimensions."""

    name = "bedrock-titan"

    def __init__(
        self,
        client: Any,
        model_id: str = DEFAULT_MODEL_ID,
        dimensions: int = 1024,
        *,
        max_workers: int = DEFAULT_WORKERS,
    ) -> None:
        if dimensions not in ALLOWED_DIMENSIONS:
            raise ValueError(f"Titan v2 dimensions must be one of {ALLOWED_DIMENSIONS}")
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self._client = client
        self._model_id = model_id
        self.dimensions = dimensions
        self._max_workers = max_workers

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        texts = checked_texts(texts)
        workers = min(self._max_workers, len(texts))
        if workers <= 1:
            return [self._embed_one(text) for text in texts]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="titan-embed") as pool:
            futures = [pool.submit(self._embed_one, text) for text in texts]
            try:
                # Results are taken in submission order, so vectors match their texts
                # whatever order the calls finish in.
                return [future.result() for future in futures]
            except BaseException:
                for future in futures:
                    future.cancel()  # the first failure fails the batch; skip calls not begun
                raise

    def _embed_one(self, text: str) -> list[float]:
        body = json.dumps(
            {"inputText": text[:MAX_CHARACTERS], "dimensions": self.dimensions, "normalize": True}
        )
        try:
            response = self._client.invoke_model(
                modelId=self._model_id,
                body=body,
                contentType="application/json",
                accept="application/json",
            )
            raw = response["body"].read()
        except ClientError as exc:
            error = exc.response.get("Error", {})
            meta = exc.response.get("ResponseMetadata", {})
            # `from None`: the ClientError's message is the service's and may quote the input.
            raise EmbeddingError(
                f"Bedrock {self._model_id} failed: {error.get('Code', 'unknown error')} "
                f"(HTTP {meta.get('HTTPStatusCode', '?')}, request {meta.get('RequestId', '?')})"
            ) from None
        except BotoCoreError as exc:
            raise EmbeddingError(
                f"Bedrock {self._model_id} could not be called: {type(exc).__name__}"
            ) from None
        return self._parse(raw)

    def _parse(self, raw: bytes) -> list[float]:
        try:
            payload = json.loads(raw)
            vector = payload["embedding"]
        except (ValueError, KeyError, TypeError):
            raise EmbeddingError(
                f"Bedrock {self._model_id} answered without a JSON 'embedding'"
            ) from None
        if not isinstance(vector, list) or len(vector) != self.dimensions:
            got = len(vector) if isinstance(vector, list) else type(vector).__name__
            raise EmbeddingError(
                f"Bedrock {self._model_id} answered a vector of {got}, "
                f"not {self.dimensions} dimensions"
            )
        if not all(
            isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
            for x in vector
        ):
            raise EmbeddingError(f"Bedrock {self._model_id} answered a non-numeric vector")
        # Asked with normalize=true, so this only removes rounding; a zero vector is unusable.
        norm = math.sqrt(math.fsum(x * x for x in vector))
        if norm == 0.0:
            raise EmbeddingError(f"Bedrock {self._model_id} answered a zero vector")
        return [x / norm for x in vector]
