"""LlamaIndex: a memory block that puts Taisce's recall in the chat context
(`pip install taisce-client[llamaindex]`).

    from llama_index.core.memory import Memory
    from taisce_client.integrations.llamaindex import TaisceMemoryBlock

    memory = Memory.from_defaults(
        session_id="chat-42", memory_blocks=[TaisceMemoryBlock(client=taisce)]
    )

Imports only `llama_index.core.memory` and the message types, which need no NLTK data
and no tokenizer download (the Memory's default tokenizer is tiktoken's, whose file
llama-index-core ships).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.bridge.pydantic import Field
from llama_index.core.memory import BaseMemoryBlock

from ..async_client import AsyncClient
from ..client import Client
from ..models import Role
from . import transcript
from .bundle import bundle_text
from .transcript import Turn

# The prefix of the message ids the block makes (see transcript).
ID_PREFIX = "li"

_ROLES: dict[MessageRole, Role] = {
    MessageRole.USER: "user",
    MessageRole.ASSISTANT: "assistant",
    MessageRole.CHATBOT: "assistant",
    MessageRole.MODEL: "assistant",
    MessageRole.SYSTEM: "system",
    MessageRole.DEVELOPER: "system",
    MessageRole.TOOL: "tool",
    MessageRole.FUNCTION: "tool",
}


def _question(messages: list[ChatMessage] | None) -> str | None:
    for message in reversed(messages or []):
        if message.role == MessageRole.USER and message.content:
            return message.content
    return None


class TaisceMemoryBlock(BaseMemoryBlock[str]):
    """Long-term memory from Taisce: on each `Memory.get`, the bundle recalled for the
    last user message (facts with who said them, reports, passages) goes into the
    memory blocks' part of the system message. Messages the Memory flushes from its
    short-term queue are stored in Taisce under `source` (by default the Memory's
    session id), where recall finds them. `controls` are the recall controls; `user`
    the end user recalled for and stored as (None: the client's own user, if any)."""

    name: str = Field(default="taisce", description="The name of the memory block.")
    client: Client
    async_client: AsyncClient | None = None
    controls: dict[str, Any] = Field(default_factory=dict)
    source: str | None = None
    user: str | None = None

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        question = _question(messages)
        if question is None:
            return ""
        if self.async_client is not None:
            bundle = await self.async_client.recall(question, user=self.user, **self.controls)
        else:
            recall = functools.partial(self.client.recall, user=self.user, **self.controls)
            bundle = await asyncio.to_thread(recall, question)
        return bundle_text(bundle)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        turns, source = [], self.source
        for message in messages:
            text = message.content
            if not text:
                continue
            turns.append(Turn(_ROLES.get(message.role, "user"), text))
            source = source or message.additional_kwargs.get("session_id")
        if not turns:
            return
        if self.async_client is not None:
            await transcript.awrite_turns(
                self.async_client, ID_PREFIX, source, turns, user=self.user
            )
        else:
            write = functools.partial(transcript.write_turns, user=self.user)
            await asyncio.to_thread(write, self.client, ID_PREFIX, source, turns)
