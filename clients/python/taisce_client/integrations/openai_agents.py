"""OpenAI Agents SDK: a session kept as Taisce messages, and a recall function tool
(`pip install taisce-client[openai-agents]`).

    from agents import Agent, Runner
    from taisce_client import AsyncClient
    from taisce_client.integrations.openai_agents import TaisceSession, recall_tool

    taisce = AsyncClient()  # TAISCE_URL, TAISCE_API_KEY
    agent = Agent(name="Assistant", tools=[recall_tool(taisce, hops=2)])
    result = await Runner.run(agent, "Where does Atlas work?",
                              session=TaisceSession("chat-42", taisce))
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from agents import FunctionTool, function_tool
from agents.items import TResponseInputItem
from agents.memory import SessionABC, SessionSettings
from agents.memory.session_settings import resolve_session_limit

from ..async_client import AsyncClient
from ..client import Client
from ..models import Recall, Role
from . import transcript
from .bundle import bundle_text
from .transcript import NotErasable, Turn

# The prefix of the message ids a session makes (see transcript).
ID_PREFIX = "oa"

_TEXT_ROLES: frozenset[str] = frozenset({"user", "assistant", "system"})


def _output_text(item: dict[str, Any]) -> str | None:
    """The text of an assistant output message made only of text parts, else None."""
    parts = item.get("content")
    if not isinstance(parts, list) or not parts:
        return None
    if any(p.get("type") != "output_text" or p.get("annotations") for p in parts):
        return None
    return "".join(p.get("text", "") for p in parts)


def turn_of_item(item: TResponseInputItem) -> Turn:
    """An input item as a turn. A user, assistant or system message whose content is
    text is stored as that text (an assistant's output message of text parts too), so
    it is memory like any message; any other item (tool calls and their outputs,
    reasoning, non-text content) as the item's JSON, read back exactly."""
    data: dict[str, Any] = dict(item)  # type: ignore[arg-type]
    role = data.get("role")
    kind = data.get("type", "message")
    if role in _TEXT_ROLES and kind == "message":
        content = data.get("content")
        text = content if isinstance(content, str) else None
        if role == "assistant" and text is None:
            text = _output_text(data)
        plain_keys = {"role", "content", "type"} | (
            {"id", "status"} if role == "assistant" and text is not None else set()
        )
        if text and set(data) <= plain_keys:
            return Turn(role, text)  # type: ignore[arg-type]
    stored_role: Role = "tool" if kind.endswith("_output") else "assistant"
    if role in ("user", "system", "developer"):
        stored_role = "system" if role == "developer" else role
    return Turn.of_record(stored_role, data)


def item_of_turn(turn: Turn) -> TResponseInputItem:
    if turn.structured:
        return turn.record()  # type: ignore[no-any-return]
    role = turn.role if turn.role in _TEXT_ROLES else "user"
    return {"role": role, "content": turn.content}  # type: ignore[return-value, typeddict-item]


class TaisceSession(SessionABC):
    """The SDK's session kept in Taisce: each item a message with `session_id` as its
    source, read back oldest first (`limit`: the newest N). Works with the async
    client natively, and with the sync one in a thread.

    `pop_item` and `clear_session` raise `NotErasable`: the API cannot delete a
    message (a new session id starts an empty session). `user`: the end user the
    session belongs to (None: the client's own user, if any)."""

    def __init__(
        self,
        session_id: str,
        client: AsyncClient | Client,
        session_settings: SessionSettings | None = None,
        *,
        user: str | None = None,
    ) -> None:
        self.session_id = session_id
        self.client = client
        self.user = user
        self.session_settings = session_settings or SessionSettings()

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        limit = resolve_session_limit(limit, self.session_settings)
        if isinstance(self.client, AsyncClient):
            turns = await transcript.aread_turns(
                self.client, self.session_id, limit, (ID_PREFIX,), self.user
            )
        else:
            turns = await asyncio.to_thread(
                transcript.read_turns, self.client, self.session_id, limit, (ID_PREFIX,), self.user
            )
        return [item_of_turn(t) for t in turns]

    async def add_items(self, items: Sequence[TResponseInputItem]) -> None:
        turns = [turn_of_item(item) for item in items]
        if not turns:
            return
        if isinstance(self.client, AsyncClient):
            await transcript.awrite_turns(
                self.client, ID_PREFIX, self.session_id, turns, user=self.user
            )
        else:
            await asyncio.to_thread(
                transcript.write_turns,
                self.client,
                ID_PREFIX,
                self.session_id,
                turns,
                None,
                self.user,
            )

    async def pop_item(self) -> TResponseInputItem | None:
        raise NotErasable("TaisceSession.pop_item")

    async def clear_session(self) -> None:
        raise NotErasable("TaisceSession.clear_session")


def recall_tool(
    client: AsyncClient | Client,
    *,
    name: str = "recall_memory",
    user: str | None = None,
    **controls: Any,
) -> FunctionTool:
    """A function tool the model calls with a question; it answers with the recalled
    bundle as text (facts with who said them, reports, passages), or "Nothing found."
    `controls` are the recall controls (`hops`, `max_characters`, ...); `user` the end
    user it recalls for (the model never chooses it)."""

    async def recall_memory(question: str) -> str:
        """Recall what is remembered about a question: facts, summaries and quotes from
        earlier conversations.

        Args:
            question: A full question naming who or what it is about.
        """
        bundle: Recall
        if isinstance(client, AsyncClient):
            bundle = await client.recall(question, user=user, **controls)
        else:
            bundle = await asyncio.to_thread(client.recall, question, user=user, **controls)
        return bundle_text(bundle) or "Nothing found."

    return function_tool(recall_memory, name_override=name)
