"""LangGraph: recall before the model and remember after it, as graph nodes.

Start a local server with the demo memory (it prints a credential), then run this:

    .venv/bin/taisce serve --demo --data data
    TAISCE_URL=http://127.0.0.1:8080 TAISCE_API_KEY=<credential> \
        .venv/bin/python examples/langgraph_memory.py

The chat model is LangChain's fake one, so nothing leaves the machine.
"""

from __future__ import annotations

import uuid

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from taisce_client import Client
from taisce_client.integrations.langgraph import MemoryState, recall_node, remember_node

with Client() as taisce:  # TAISCE_URL, TAISCE_API_KEY
    model = GenericFakeChatModel(messages=iter(["Atlas works at Acme Corp, in Dublin."]))

    def call_model(state: MemoryState) -> dict:
        prompt = [SystemMessage(f"You remember:\n{state['memory']}"), *state["messages"]]
        return {"messages": [model.invoke(prompt)]}

    graph = StateGraph(MemoryState)
    graph.add_node("recall", recall_node(taisce, hops=2))
    graph.add_node("model", call_model)
    graph.add_node("remember", remember_node(taisce))  # source: the thread_id
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "model")
    graph.add_edge("model", "remember")
    graph.add_edge("remember", END)
    app = graph.compile(checkpointer=InMemorySaver())

    thread = f"example-{uuid.uuid4().hex[:8]}"
    state = app.invoke(
        {"messages": [HumanMessage("Where does Atlas work?")]},
        {"configurable": {"thread_id": thread}},
    )
    print("What the recall node put in state['memory']:")
    print(state["memory"])
    print(f"\nThe turn as Taisce keeps it (source {thread}):")
    for stored in reversed(taisce.messages(source=thread)["messages"]):
        print(f"  {stored['role']:<9} {stored['content']}")
