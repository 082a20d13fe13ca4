"""The LangChain integration with langchain-core itself, against a real `taisce serve`:
recall arriving as Documents, a conversation stored as messages and read back in order,
and both inside a chain run by a fake chat model."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory
from taisce_client import Client
from taisce_client.integrations.langchain import (
    NotErasable,
    TaisceChatMessageHistory,
    TaisceRetriever,
    recall_tool,
)

from tests.integrations.conftest import Memory, settle


@pytest.fixture(scope="module")
def taisce(memory: Memory) -> Iterator[Client]:
    with memory.client() as client:
        yield client


def test_recalled_facts_and_passages_arrive_as_documents(taisce: Client) -> None:
    retriever = TaisceRetriever(client=taisce, controls={"hops": 2, "explain": True})
    docs = retriever.invoke("Where does Atlas work, and where is that?")

    facts = [d for d in docs if d.metadata["kind"] == "fact"]
    assert [d.page_content for d in facts] == [
        "Atlas works at Acme Corp",
        "Acme Corp is based in Dublin",
    ]
    assert facts[0].metadata["role"] == "user"
    assert facts[0].metadata["quote"] == "I work at Acme Corp"
    assert facts[1].metadata["role"] == "user"
    assert facts[1].metadata["path"] == ["Atlas", "Acme Corp"]
    assert all("why" in d.metadata for d in docs)
    assert facts[0].id == facts[0].metadata["id"]


def test_a_passage_carries_its_role_source_and_offsets(taisce: Client) -> None:
    retriever = TaisceRetriever(client=taisce, controls={"surfaces": ["passages"]})
    docs = retriever.invoke("Who keeps bees in Galway?")
    assert docs, "the stored message was not recalled"
    passage = docs[0]
    assert passage.metadata["kind"] == "passage"
    assert "bees" in passage.page_content
    assert passage.metadata["role"] == "user" and passage.metadata["source"] == "chat:1"
    assert passage.metadata["message_id"] == "bees-1"
    content = "Orla keeps bees in Galway since 2019."
    start, end = passage.metadata["start"], passage.metadata["end"]
    assert content[start:end] == passage.page_content
    # No explain control, no `why`.
    assert "why" not in passage.metadata


@pytest.mark.anyio
async def test_the_retriever_recalls_with_the_async_client(memory: Memory) -> None:
    async with memory.async_client() as aclient:
        with memory.client() as client:
            retriever = TaisceRetriever(client=client, async_client=aclient)
            docs = await retriever.ainvoke("Where does Atlas work?")
    assert docs[0].page_content == "Atlas works at Acme Corp"


def test_a_conversation_is_stored_as_messages_and_read_back_in_order(taisce: Client) -> None:
    history = TaisceChatMessageHistory(taisce, session_id="lc-session-1")
    assert history.messages == []
    history.add_messages(
        [
            SystemMessage("You are a helpful assistant."),
            HumanMessage("My sister Niamh lives in Cork."),
            AIMessage("Noted: Niamh lives in Cork."),
        ]
    )
    call = {"name": "recall_memory", "args": {"question": "Where is Niamh?"}, "id": "call_7"}
    history.add_message(AIMessage("", tool_calls=[call]))
    history.add_message(ToolMessage("Niamh lives in Cork.", tool_call_id="call_7"))
    history.add_user_message("Thanks!")

    read = TaisceChatMessageHistory(taisce, session_id="lc-session-1").messages
    assert [(m.type, m.content) for m in read] == [
        ("system", "You are a helpful assistant."),
        ("human", "My sister Niamh lives in Cork."),
        ("ai", "Noted: Niamh lives in Cork."),
        ("ai", ""),
        ("tool", "Niamh lives in Cork."),
        ("human", "Thanks!"),
    ]
    assert isinstance(read[3], AIMessage) and read[3].tool_calls[0]["id"] == "call_7"
    assert isinstance(read[4], ToolMessage) and read[4].tool_call_id == "call_7"

    # Stored as Taisce messages: the roles mapped, the session as their source, text as
    # itself (so it is memory like any message).
    stored = taisce.messages(source="lc-session-1")["messages"]
    assert [m["role"] for m in reversed(stored)] == [
        "system",
        "user",
        "assistant",
        "assistant",
        "tool",
        "user",
    ]
    assert stored[-2]["content"] == "My sister Niamh lives in Cork."
    # Another session's history is its own.
    assert TaisceChatMessageHistory(taisce, session_id="lc-session-2").messages == []


def test_more_than_one_page_of_turns_reads_back_in_order(taisce: Client) -> None:
    history = TaisceChatMessageHistory(taisce, session_id="lc-long")
    history.add_messages([HumanMessage(f"turn {i}") for i in range(130)])
    history.add_messages([AIMessage(f"answer {i}") for i in range(3)])
    contents = [m.content for m in history.messages]
    assert contents == [f"turn {i}" for i in range(130)] + [f"answer {i}" for i in range(3)]


def test_messages_another_writer_put_in_the_source_read_back_as_text(taisce: Client) -> None:
    taisce.store_messages(
        [
            {"role": "user", "content": "Imported note", "source": "lc-mixed", "id": "imp-1.j"},
            {"role": "tool", "content": "Handbook: hives weekly", "source": "lc-mixed"},
        ]
    )
    read = TaisceChatMessageHistory(taisce, session_id="lc-mixed").messages
    assert [(type(m), m.content) for m in read] == [
        (HumanMessage, "Imported note"),
        (ToolMessage, "Handbook: hives weekly"),
    ]


def test_clear_says_why_it_cannot_delete(taisce: Client) -> None:
    history = TaisceChatMessageHistory(taisce, session_id="lc-session-1")
    with pytest.raises(NotErasable, match="new session id"):
        history.clear()
    assert len(history.messages) == 6


# LangChain steers new code to LangGraph's persistence, but this wrapper is still how a
# chain is given a BaseChatMessageHistory.
@pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated")
def test_a_chain_with_history_remembers_turns_and_recall_reaches_the_model(
    taisce: Client,
) -> None:
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "Memory:\n{memory}"),
            MessagesPlaceholder("history"),
            ("human", "{question}"),
        ]
    )
    model = GenericFakeChatModel(messages=iter(["Atlas works at Acme Corp, in Dublin."]))
    seen: list[str] = []

    def remember_prompt(value: object) -> object:
        seen.append(value.to_string())  # type: ignore[attr-defined]
        return value

    retriever = TaisceRetriever(client=taisce, controls={"hops": 2})

    def with_memory(inputs: dict[str, object]) -> dict[str, object]:
        docs = retriever.invoke(str(inputs["question"]))
        return {**inputs, "memory": "\n".join(d.page_content for d in docs)}

    chain = RunnableWithMessageHistory(
        with_memory | prompt | remember_prompt | model,
        lambda session_id: TaisceChatMessageHistory(taisce, session_id=session_id),
        input_messages_key="question",
        history_messages_key="history",
    )
    answer = chain.invoke(
        {"question": "Where does Atlas work?"},
        config={"configurable": {"session_id": "lc-chain"}},
    )
    assert answer.content == "Atlas works at Acme Corp, in Dublin."
    assert "Acme Corp is based in Dublin" in seen[0]
    turns = TaisceChatMessageHistory(taisce, session_id="lc-chain").messages
    assert [(m.type, m.content) for m in turns] == [
        ("human", "Where does Atlas work?"),
        ("ai", "Atlas works at Acme Corp, in Dublin."),
    ]


@pytest.mark.anyio
async def test_the_recall_tool_answers_with_the_recalled_facts(taisce: Client) -> None:
    # What earlier tests of the module stored is indexed first: the same question, asked
    # twice, then meets the same memory (else the second call can find more passages).
    settle(taisce)
    tool = recall_tool(taisce, hops=2)
    text = tool.invoke({"question": "Where does Atlas work?"})
    assert "- Atlas works at Acme Corp (said by user)" in text
    assert "Acme Corp is based in Dublin" in text
    assert await tool.ainvoke({"question": "Where does Atlas work?"}) == text
    facts_only = recall_tool(taisce, surfaces=["facts"])
    assert facts_only.invoke({"question": "Who is Zebedee?"}) == "Nothing found."


def test_the_retriever_history_and_tool_act_for_a_user(taisce: Client) -> None:
    taisce.store_facts(
        [{"subject": "Zoe", "predicate": "likes", "object": "tea", "source_role": "user"}],
        user="lc-ana",
    )
    mine = TaisceRetriever(client=taisce, user="lc-ana").invoke("What does Zoe like?")
    assert any("Zoe likes tea" in d.page_content for d in mine)
    shared = TaisceRetriever(client=taisce).invoke("What does Zoe like?")
    assert not any("Zoe" in d.page_content for d in shared)
    assert "Zoe likes tea" in recall_tool(taisce, user="lc-ana").invoke({"question": "Zoe?"})
    assert "Zoe" not in recall_tool(taisce).invoke({"question": "Zoe?"})
    TaisceChatMessageHistory(taisce, "lc-users", user="lc-ana").add_user_message("Hi, I'm Ana.")
    assert [
        m.content for m in TaisceChatMessageHistory(taisce, "lc-users", user="lc-ana").messages
    ] == ["Hi, I'm Ana."]
    assert TaisceChatMessageHistory(taisce, "lc-users").messages == []
