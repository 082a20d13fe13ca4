"""Extraction on any OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, llama.cpp
server, LiteLLM): `POST {base_url}/chat/completions` with `response_format` of type
`json_schema` (strict), so the answer is JSON that follows the schema.

Plain `urllib.request` rather than the `openai` SDK: one POST needs no SDK, and the
SDK would ship in the Lambda layer with its own dependencies (httpx, anyio, jiter,
distro, tqdm) and import time on every cold start. Errors name the endpoint's host and
the HTTP status, never the message, the API key or the endpoint's own error text.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from ...domain.model import ExtractionPrompt
from ...domain.ports.extractor import ExtractionError

DEFAULT_TIMEOUT = 60.0
MAX_TOKENS = 8_192
# An answer larger than this is not read (a runaway or hostile endpoint).
MAX_RESPONSE_BYTES = 8 * 1024 * 1024


class OpenAICompatible:
    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self._api_key = api_key
        self._timeout = timeout
        self._max_tokens = max_tokens
        self._where = f"{model} at {urlsplit(self.url).netloc}"

    def request(self, prompt: ExtractionPrompt) -> dict[str, Any]:
        """The JSON body sent for this prompt."""
        return {
            "model": self.model,
            "messages": [
                {"role": "system", "content": prompt.system},
                {"role": "user", "content": prompt.user},
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": prompt.tool_name,
                    "description": prompt.tool_description,
                    "schema": prompt.schema,
                    "strict": True,
                },
            },
            "temperature": 0,
            "max_tokens": self._max_tokens,
        }

    def extract(self, prompt: ExtractionPrompt) -> str:
        body = json.dumps(self.request(prompt)).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            # The URL is the operator's TAISCE_EXTRACTOR_BASE_URL, checked to be http(s).
            with urllib.request.urlopen(request, timeout=self._timeout) as response:  # nosec B310
                raw = response.read(MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as exc:
            exc.close()
            retry = exc.headers.get("Retry-After") if exc.headers else None
            after = f", retry after {retry}" if retry else ""
            raise ExtractionError(f"{self._where} answered HTTP {exc.code}{after}") from None
        except TimeoutError:
            raise ExtractionError(
                f"{self._where} did not answer within {self._timeout:g} s"
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                raise ExtractionError(
                    f"{self._where} did not answer within {self._timeout:g} s"
                ) from None
            raise ExtractionError(
                f"{self._where} could not be reached: {type(reason).__name__}"
            ) from None
        if len(raw) > MAX_RESPONSE_BYTES:
            raise ExtractionError(f"{self._where} answered more than {MAX_RESPONSE_BYTES} bytes")
        return self._content(raw)

    def _content(self, raw: bytes) -> str:
        try:
            payload = json.loads(raw)
            choice = payload["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ExtractionError(f"{self._where} answered without a chat completion") from None
        finish = choice.get("finish_reason") if isinstance(choice, Mapping) else None
        if finish == "length":
            raise ExtractionError(f"{self._where} stopped at max_tokens: partial output")
        if not isinstance(message, Mapping):
            raise ExtractionError(f"{self._where} answered without a message")
        if message.get("refusal"):
            raise ExtractionError(f"{self._where} refused to answer")
        content = message.get("content")
        if not isinstance(content, str):
            raise ExtractionError(f"{self._where} answered without text content")
        return content
