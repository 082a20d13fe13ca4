"""The LangGraph integration in real graphs (langgraph itself), against a real
`taisce serve`: recall reaching the model's prompt from a node, the turn stored by a
node (once, however often it runs), and the recall tool run by a prebuilt ToolNode."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from taisce_client import Client
from taisce_client.integrations.langgraph import (
    MemoryState,
    recall_node,
    recall_tool,
    remember_node,
)

from tests.integrations.conftest import Memory


@pytest.fixture(scope="module")
def taisce(memory: Memory) -> Iterator[Client]:
    with memory.client() as client:
        yield client


class Prompts(BaseCallbackHandler):
    """What the chat model was sent, through LangChain's own callbacks."""

    def __init__(self) -> None:
        self.sent: list[list[BaseMessage]] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.sent.extend(messages)


def memory_graph(taisce: Client, answers: list[str], prompts: Prompts) -> Any:
    model = GenericFakeChatModel(messages=iter(answers))

    def call_model(state: MemoryState) -> dict[str, Any]:
        context = [SystemMessage(f"What you remember:\n{state['memory']}")]
        reply = model.invoke(context + state["messages"], config={"callbacks": [prompts]})
        return {"messages": [reply]}

    graph = StateGraph(MemoryState)
    graph.add_node("recall", recall_node(taisce, hops=2))
    graph.add_node("model", call_model)
    graph.add_node("remember", remember_node(taisce))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "model")
    graph.add_edge("model", "remember")
    graph.add_edge("remember", END)
    return graph.compile(checkpointer=InMemorySaver())


def test_recall_reaches_the_model_and_the_turn_is_remembered(taisce: Client) -> None:
    prompts = Prompts()
    app = memory_graph(taisce, ["Atlas works at Acme Corp in Dublin.", "You're welcome."], prompts)
    config = {"configurable": {"thread_id": "lg-thread-1"}}

    state = app.invoke({"messages": [HumanMessage("Where does Atlas work?")]}, config)
    assert "- Atlas works at Acme Corp (said by user)" in state["memory"]
    system = prompts.sent[0][0]
    assert isinstance(system, SystemMessage)
    assert "Atlas works at Acme Corp" in system.text
    assert "Acme Corp is based in Dublin" in system.text  # hop 2
    assert state["messages"][-1].content == "Atlas works at Acme Corp in Dublin."

    app.invoke({"messages": [HumanMessage("Thanks!")]}, config)
    stored = taisce.messages(source="lg-thread-1")["messages"]
    assert [(m["role"], m["content"]) for m in reversed(stored)] == [
        ("user", "Where does Atlas work?"),
        ("assistant", "Atlas works at Acme Corp in Dublin."),
        ("user", "Thanks!"),
        ("assistant", "You're welcome."),
    ]


def test_the_remember_node_stores_a_turn_once_however_often_it_runs(taisce: Client) -> None:
    node = remember_node(taisce, source="lg-replayed")
    state = {
        "messages": [
            HumanMessage("Earlier question", id="h0"),
            AIMessage("Earlier answer", id="a0"),
            HumanMessage("Ciara's birthday is on 3 May.", id="h1"),
            AIMessage("I'll remember Ciara's birthday.", id="a1"),
        ]
    }
    for _ in range(3):
        assert node.invoke(state, {}) == {}
    stored = taisce.messages(source="lg-replayed")["messages"]
    assert [m["content"] for m in reversed(stored)] == [
        "Ciara's birthday is on 3 May.",
        "I'll remember Ciara's birthday.",
    ]
    with pytest.raises(ValueError, match="thread_id"):
        remember_node(taisce).invoke(state, {})


@pytest.mark.anyio
async def test_the_nodes_run_in_an_async_graph(memory: Memory) -> None:
    async with memory.async_client() as aclient:
        with memory.client() as client:
            graph = StateGraph(MemoryState)
            graph.add_node("recall", recall_node(client, async_client=aclient))
            graph.add_node("remember", remember_node(client, async_client=aclient))
            graph.add_edge(START, "recall")
            graph.add_edge("recall", "remember")
            graph.add_edge("remember", END)
            app = graph.compile()
            state = await app.ainvoke(
                {"messages": [HumanMessage("Where does Atlas work?")]},
                {"configurable": {"thread_id": "lg-async"}},
            )
            stored = await aclient.messages(source="lg-async")
    assert "Atlas works at Acme Corp" in state["memory"]
    assert [m["content"] for m in stored["messages"]] == ["Where does Atlas work?"]


def test_a_tool_node_runs_the_recall_tool_for_the_model(taisce: Client) -> None:
    call = {"name": "recall_memory", "args": {"question": "Where does Atlas work?"}, "id": "c1"}
    model = GenericFakeChatModel(
        messages=iter([AIMessage("", tool_calls=[call]), AIMessage("Acme Corp, in Dublin.")])
    )

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([recall_tool(taisce, hops=2)]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    state = graph.compile().invoke({"messages": [HumanMessage("Where does Atlas work?")]})

    kinds = [m.type for m in state["messages"]]
    assert kinds == ["human", "ai", "tool", "ai"]
    result = state["messages"][2]
    assert result.tool_call_id == "c1"
    assert "- Atlas works at Acme Corp (said by user)" in result.content
    assert "Acme Corp is based in Dublin" in result.content
    assert state["messages"][-1].content == "Acme Corp, in Dublin."


def test_the_nodes_act_for_the_configured_user(taisce: Client) -> None:
    taisce.store_facts(
        [{"subject": "Zed", "predicate": "likes", "object": "tea", "source_role": "user"}],
        user="lg-ana",
    )
    graph = StateGraph(MemoryState)
    graph.add_node("recall", recall_node(taisce))
    graph.add_node("remember", remember_node(taisce, source="lg-users"))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "remember")
    graph.add_edge("remember", END)
    app = graph.compile()
    question = {"messages": [HumanMessage("What does Zed like?", id="lg-u1")]}
    ana = app.invoke(question, config={"configurable": {"user": "lg-ana"}})
    assert "Zed likes tea" in ana["memory"]
    assert "Zed" not in app.invoke(question)["memory"]
    # Each run stored its turn in its own scope (the same id in each): the shared
    # listing holds the shared run's, ana's listing that one and hers.
    assert len(taisce.messages(source="lg-users").messages) == 1
    assert len(taisce.messages(source="lg-users", user="lg-ana").messages) == 2
    # The node given the user acts as her (the turn just stored may now be recalled too).
    assert "Zed likes tea" in recall_node(taisce, user="lg-ana").invoke(question)["memory"]
