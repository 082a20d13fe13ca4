"""Helpers of the step-4 contract tests: messages stored and embedded through a Memory,
and the passages a recall returns for a question."""

from __future__ import annotations

from typing import Any

from taisce.api import bodies
from taisce.domain.controls import RecallRequest
from taisce.domain.ingest import MessagesRequest
from taisce.service.memory import Memory


def store_embedded(memory: Memory, project: str, messages: list[dict[str, Any]]) -> None:
    """Store these messages (wire form) and embed their passages, as the worker would."""
    memory.store_messages(project, MessagesRequest.model_validate({"messages": messages}))
    memory.index_pending(project)


def recalled_passages(
    memory: Memory, project: str, question: str, **controls: Any
) -> list[dict[str, Any]]:
    """The passages of a passages-only recall, which must not be degraded."""
    body = {"question": question, "surfaces": ["passages"], **controls}
    answer = bodies.recall(memory.recall(project, RecallRequest.model_validate(body)))
    assert answer["degraded"] == []
    passages: list[dict[str, Any]] = answer["passages"]  # type: ignore[assignment]
    return passages
