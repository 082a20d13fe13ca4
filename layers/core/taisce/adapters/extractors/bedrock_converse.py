"""Extraction on Amazon Bedrock through the Converse API, with structured output from a
forced tool: the JSON schema is the tool's input schema and `toolChoice` names the tool,
so the model answers with the tool's input and nothing else.

The adapter takes an existing `bedrock-runtime` client (the caller owns region, retries
and credentials; tests stub it). Errors name the model, the error code, the HTTP status
and the request id, never the message or the service's own text (which may quote it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from ...domain.model import ExtractionPrompt
from ...domain.ports.extractor import ExtractionError

# The longest answer asked for when the caller does not say (TAISCE_EXTRACTOR_MAX_TOKENS
# does): about 50 facts with their quotes. Bedrock refuses a request above the model's
# own output limit, and older models (Claude 3 Haiku, the template's default) allow 4,096.
MAX_TOKENS = 4_096


class BedrockConverse:
    name = "bedrock"

    def __init__(self, client: Any, model_id: str, *, max_tokens: int = MAX_TOKENS) -> None:
        self._client = client
        self.model_id = model_id
        self._max_tokens = max_tokens

    def request(self, prompt: ExtractionPrompt) -> dict[str, Any]:
        """The Converse parameters for this prompt."""
        return {
            "modelId": self.model_id,
            "system": [{"text": prompt.system}],
            "messages": [{"role": "user", "content": [{"text": prompt.user}]}],
            "toolConfig": {
                "tools": [
                    {
                        "toolSpec": {
                            "name": prompt.tool_name,
                            "description": prompt.tool_description,
                            "inputSchema": {"json": prompt.schema},
                        }
                    }
                ],
                "toolChoice": {"tool": {"name": prompt.tool_name}},
            },
            "inferenceConfig": {"maxTokens": self._max_tokens, "temperature": 0},
        }

    def extract(self, prompt: ExtractionPrompt) -> Mapping[str, Any]:
        try:
            response = self._client.converse(**self.request(prompt))
        except ClientError as exc:
            error = exc.response.get("Error", {})
            meta = exc.response.get("ResponseMetadata", {})
            raise ExtractionError(
                f"Bedrock {self.model_id} failed: {error.get('Code', 'unknown error')} "
                f"(HTTP {meta.get('HTTPStatusCode', '?')}, request {meta.get('RequestId', '?')})"
            ) from None
        except BotoCoreError as exc:
            raise ExtractionError(
                f"Bedrock {self.model_id} could not be called: {type(exc).__name__}"
            ) from None
        return self._tool_input(response, prompt.tool_name)

    def _tool_input(self, response: Mapping[str, Any], tool_name: str) -> Mapping[str, Any]:
        stop = response.get("stopReason")
        if stop == "max_tokens":
            raise ExtractionError(f"Bedrock {self.model_id} stopped at max_tokens: partial output")
        content = (response.get("output") or {}).get("message", {}).get("content") or []
        for block in content:
            use = block.get("toolUse") if isinstance(block, Mapping) else None
            if isinstance(use, Mapping) and use.get("name") == tool_name:
                answer = use.get("input")
                if not isinstance(answer, Mapping):
                    raise ExtractionError(
                        f"Bedrock {self.model_id} called {tool_name} without an object input"
                    )
                return answer
        raise ExtractionError(
            f"Bedrock {self.model_id} did not call {tool_name} (stopReason {stop!r})"
        )
