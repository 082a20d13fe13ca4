"""LangGraph: recall and remember as graph nodes, and recall as a tool for a `ToolNode`
(`pip install taisce-client[langgraph]`).

Long-term memory here is nodes and a tool, not a `BaseStore`: a store is keyed
documents (put by key overwrites, get and delete by key, list namespaces), while Taisce
keeps each message once, deletes none, and answers a question with a budgeted bundle.
docs/integrations.md says more.

    graph = StateGraph(MemoryState)
    graph.add_node("recall", recall_node(taisce, hops=2))
    graph.add_node("model", call_model)        # reads state["memory"]
    graph.add_node("remember", remember_node(taisce))
    graph.add_edge(START, "recall"); graph.add_edge("recall", "model")
    graph.add_edge("model", "remember"); graph.add_edge("remember", END)
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.graph import MessagesState

from ..async_client import AsyncClient
from ..client import Client
from . import transcript
from .bundle import bundle_text
from .langchain import recall_tool, turn_of_message

__all__ = ["MemoryState", "recall_node", "recall_tool", "remember_node"]

# The prefix of the message ids the remember node makes (see transcript).
ID_PREFIX = "lg"


class MemoryState(MessagesState):
    """The conversation, and what `recall_node` recalled for its last question."""

    memory: str


def _question(messages: Sequence[BaseMessage]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and message.text:
            return message.text
    return None


def _user(user: str | None, config: RunnableConfig) -> str | None:
    """The end user a run acts for: the graph config's `configurable.user` (one
    compiled graph serving many users), else the node's own `user`."""
    return (config.get("configurable") or {}).get("user") or user


def recall_node(
    client: Client,
    *,
    async_client: AsyncClient | None = None,
    user: str | None = None,
    **controls: Any,
) -> RunnableLambda[dict[str, Any], dict[str, str]]:
    """A node that recalls for the last human message and writes the bundle, as text
    for a prompt, to the state's `memory` (empty when nothing was found, or there is
    no human message yet). `controls` are the recall controls; the end user recalled
    for is the config's `configurable.user`, else `user`."""

    def recall(state: dict[str, Any], config: RunnableConfig) -> dict[str, str]:
        question = _question(state["messages"])
        if question is None:
            return {"memory": ""}
        found = client.recall(question, user=_user(user, config), **controls)
        return {"memory": bundle_text(found)}

    async def arecall(state: dict[str, Any], config: RunnableConfig) -> dict[str, str]:
        if async_client is None:
            return await asyncio.to_thread(recall, state, config)
        question = _question(state["messages"])
        if question is None:
            return {"memory": ""}
        found = await async_client.recall(question, user=_user(user, config), **controls)
        return {"memory": bundle_text(found)}

    return RunnableLambda(recall, afunc=arecall, name="recall")


def _turn(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The last turn: from the last human message to the end."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return list(messages[index:])
    return list(messages)


def _key(message: BaseMessage) -> str:
    """A key made from the graph's own message id, so storing a turn again (a retried
    or replayed node) stores nothing twice."""
    return hashlib.sha256(str(message.id).encode()).hexdigest()[:32]


def _source(source: str | None, config: RunnableConfig) -> str:
    found = source or (config.get("configurable") or {}).get("thread_id")
    if not found:
        raise ValueError("remember_node needs a source, or a thread_id in the graph's config")
    return str(found)


def remember_node(
    client: Client,
    *,
    source: str | None = None,
    async_client: AsyncClient | None = None,
    user: str | None = None,
) -> RunnableLambda[dict[str, Any], dict[str, Any]]:
    """A node that stores the last turn (the last human message and everything after
    it) as Taisce messages, with `source` (by default the thread_id) as their source,
    where recall finds them later, from any thread. It changes no state. They are
    stored as the config's `configurable.user`, else `user` (None: shared memory)."""

    def pieces(state: dict[str, Any], config: RunnableConfig) -> tuple[str, list[Any], list[str]]:
        turn = [m for m in _turn(state["messages"]) if m.id is not None]
        return _source(source, config), [turn_of_message(m) for m in turn], [_key(m) for m in turn]

    def remember(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        where, turns, keys = pieces(state, config)
        if turns:
            transcript.write_turns(client, ID_PREFIX, where, turns, keys, _user(user, config))
        return {}

    async def aremember(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        if async_client is None:
            return await asyncio.to_thread(remember, state, config)
        where, turns, keys = pieces(state, config)
        if turns:
            who = _user(user, config)
            await transcript.awrite_turns(async_client, ID_PREFIX, where, turns, keys, who)
        return {}

    return RunnableLambda(remember, afunc=aremember, name="remember")
