"""LangChain: a retriever over recall, a chat message history over messages, and the
recall tool (`pip install taisce-client[langchain]`).

    from taisce_client import Client
    from taisce_client.integrations.langchain import TaisceChatMessageHistory, TaisceRetriever

    taisce = Client()  # TAISCE_URL, TAISCE_API_KEY
    retriever = TaisceRetriever(client=taisce, controls={"hops": 2})
    docs = retriever.invoke("Where does Atlas work?")
    history = TaisceChatMessageHistory(taisce, session_id="chat-42")
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
)
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import StructuredTool
from pydantic import ConfigDict, Field

from ..async_client import AsyncClient
from ..client import Client
from ..models import Recall, Role
from . import transcript
from .bundle import bundle_items, bundle_text
from .transcript import NotErasable, Turn

# What a model reads about the recall tool (LangChain, LangGraph).
TOOL_DESCRIPTION = (
    "Recall what is remembered about a question: facts, summaries and quotes from earlier "
    "conversations. Ask a full question naming who or what it is about."
)
# The prefix of the message ids a history makes (see transcript); a history parses the
# structured turns its own and LangGraph's remember node made.
ID_PREFIX = "lc"
READS = ("lc", "lg")

_ROLE_OF_TYPE: dict[str, Role] = {
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "tool",
}
_PLAIN: dict[Role, type[BaseMessage]] = {
    "user": HumanMessage,
    "assistant": AIMessage,
    "system": SystemMessage,
}


def documents(bundle: Recall) -> list[Document]:
    """A bundle as Documents: facts, reports, passages in the bundle's order, each with
    `kind`, `id`, `rank` and what the API says about it (role, source, offsets, `why`
    with the explain control) in `metadata`."""
    return [
        Document(page_content=item.text, metadata=item.metadata, id=item.id)
        for item in bundle_items(bundle)
    ]


class TaisceRetriever(BaseRetriever):
    """Recall as a retriever: the query is the question, `controls` the recall controls
    (`hops`, `max_characters`, `surfaces`, `explain`, ...), every Document one item of
    the bundle. With `async_client`, `ainvoke` recalls without a thread. `user`: the end
    user to recall for (the shared memory and theirs; None: the client's own user)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: Client
    async_client: AsyncClient | None = None
    controls: dict[str, Any] = Field(default_factory=dict)
    user: str | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return documents(self.client.recall(query, user=self.user, **self.controls))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        if self.async_client is None:
            return await super()._aget_relevant_documents(query, run_manager=run_manager)
        return documents(await self.async_client.recall(query, user=self.user, **self.controls))


def turn_of_message(message: BaseMessage) -> Turn:
    """A LangChain message as a turn: human, ai and system messages holding only text
    are stored as that text; any other (tool calls, tool results, non-text content) as
    LangChain's own dict of it, so it reads back the same."""
    role = _ROLE_OF_TYPE.get(message.type, "user")
    text_only = type(message) is _PLAIN.get(role) and isinstance(message.content, str)
    calls = isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls)
    if text_only and message.content and not calls:
        return Turn(role, str(message.content))
    return Turn.of_record(role, message_to_dict(message))


def message_of_turn(turn: Turn) -> BaseMessage:
    if turn.structured:
        message = messages_from_dict([turn.record()])[0]
        message.id = turn.id
        return message
    plain = _PLAIN.get(turn.role)
    if plain is None:  # a tool message stored as text by another writer
        return ToolMessage(content=turn.content, tool_call_id="", id=turn.id)
    return plain(content=turn.content, id=turn.id)


class TaisceChatMessageHistory(BaseChatMessageHistory):
    """A conversation's messages kept in Taisce with `session_id` as their `source`:
    human → user, ai → assistant, system → system, tool → tool. They read back oldest
    first, and become memory that recall finds like any message.

    `clear()` raises `NotErasable`: the API cannot delete a message (a new session id
    starts an empty history). `user`: the end user the conversation belongs to."""

    def __init__(
        self,
        client: Client,
        session_id: str,
        *,
        async_client: AsyncClient | None = None,
        user: str | None = None,
    ) -> None:
        super().__init__()
        self.client = client
        self.async_client = async_client
        self.session_id = session_id
        self.user = user

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return [
            message_of_turn(t)
            for t in transcript.read_turns(
                self.client, self.session_id, prefixes=READS, user=self.user
            )
        ]

    async def aget_messages(self) -> list[BaseMessage]:
        if self.async_client is None:
            return await super().aget_messages()
        turns = await transcript.aread_turns(
            self.async_client, self.session_id, prefixes=READS, user=self.user
        )
        return [message_of_turn(t) for t in turns]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        turns = [turn_of_message(m) for m in messages]
        if turns:
            transcript.write_turns(self.client, ID_PREFIX, self.session_id, turns, user=self.user)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        if self.async_client is None:
            return await super().aadd_messages(messages)
        turns = [turn_of_message(m) for m in messages]
        if turns:
            await transcript.awrite_turns(
                self.async_client, ID_PREFIX, self.session_id, turns, user=self.user
            )
        return None

    def clear(self) -> None:
        raise NotErasable("TaisceChatMessageHistory.clear")


def recall_tool(
    client: Client,
    *,
    async_client: AsyncClient | None = None,
    name: str = "recall_memory",
    user: str | None = None,
    **controls: Any,
) -> StructuredTool:
    """A tool a model calls with a question; it answers with the recalled bundle as
    text (facts with who said them, reports, passages), or says nothing was found.
    `user`: the end user it recalls for (the model never chooses it)."""

    def recall_memory(question: str) -> str:
        return bundle_text(client.recall(question, user=user, **controls)) or "Nothing found."

    async def arecall_memory(question: str) -> str:
        if async_client is None:
            return await asyncio.to_thread(recall_memory, question)
        found = await async_client.recall(question, user=user, **controls)
        return bundle_text(found) or "Nothing found."

    return StructuredTool.from_function(
        func=recall_memory, coroutine=arecall_memory, name=name, description=TOOL_DESCRIPTION
    )
