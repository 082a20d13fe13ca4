"""Extraction: the language model that turns a message into facts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ..model import ExtractionPrompt


class ExtractionError(Exception):
    """The extraction model failed (unreachable, throttled, timed out) or its output
    was malformed, partial or broke the schema. The message never quotes the input."""


class Extractor(Protocol):
    """A language model that returns facts as JSON following `prompt.schema`."""

    name: str

    def extract(self, prompt: ExtractionPrompt) -> str | Mapping[str, Any]:
        """The model's answer: JSON text, or the already parsed tool input. One model
        call; the domain validates the answer and retries.

        Raises ExtractionError when the model fails or its answer was cut off.
        """
        ...
