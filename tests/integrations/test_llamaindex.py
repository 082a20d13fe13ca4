"""The LlamaIndex memory block with llama-index-core itself, against a real
`taisce serve`: recall in the Memory's system message, in a chat engine run by
MockLLM, and messages flushed from the short-term queue stored in Taisce."""

from __future__ import annotations

import pytest
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import MockLLM
from llama_index.core.memory import Memory as ChatMemory
from taisce_client.integrations.llamaindex import TaisceMemoryBlock

from tests.integrations.conftest import Memory, settle


@pytest.mark.anyio
async def test_recall_goes_into_the_system_message(memory: Memory) -> None:
    with memory.client() as client:
        block = TaisceMemoryBlock(client=client, controls={"hops": 2})
        chat = ChatMemory.from_defaults(session_id="li-1", memory_blocks=[block])
        await chat.aput(ChatMessage(role=MessageRole.USER, content="Where does Atlas work?"))
        messages = await chat.aget()
    assert messages[0].role == MessageRole.SYSTEM
    system = messages[0].content or ""
    assert "<taisce>" in system
    assert "- Atlas works at Acme Corp (said by user)" in system
    assert "Acme Corp is based in Dublin" in system
    assert messages[-1].content == "Where does Atlas work?"


@pytest.mark.anyio
async def test_a_chat_engine_with_mock_llm_sees_the_recalled_facts(memory: Memory) -> None:
    async with memory.async_client() as aclient:
        with memory.client() as client:
            block = TaisceMemoryBlock(client=client, async_client=aclient, controls={"hops": 2})
            chat = ChatMemory.from_defaults(session_id="li-2", memory_blocks=[block])
            # MockLLM answers with the prompt it was given: the answer shows what the
            # model saw.
            engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=chat)
            answer = await engine.achat("Where does Atlas work?")
    assert "Atlas works at Acme Corp" in answer.response
    assert "Acme Corp is based in Dublin" in answer.response


@pytest.mark.anyio
async def test_messages_flushed_from_the_short_term_queue_are_stored(memory: Memory) -> None:
    with memory.client() as client:
        block = TaisceMemoryBlock(client=client)
        chat = ChatMemory.from_defaults(
            session_id="li-flush",
            token_limit=60,
            chat_history_token_ratio=0.5,
            token_flush_size=20,
            memory_blocks=[block],
        )
        turns = [
            (MessageRole.USER, "My neighbour Declan restores old motorbikes in his shed."),
            (MessageRole.ASSISTANT, "That sounds like a lovely hobby for Declan to have."),
            (MessageRole.USER, "He is rebuilding a 1972 Honda this winter, slowly."),
            (MessageRole.ASSISTANT, "A 1972 Honda is a classic choice for a restoration."),
        ]
        for role, text in turns:
            await chat.aput(ChatMessage(role=role, content=text))
        stored = client.messages(source="li-flush")["messages"]
        settle(client)
        found = client.recall("What does Declan restore?", surfaces=["passages"])
    flushed = [(m["role"], m["content"]) for m in reversed(stored)]
    assert flushed, "nothing was flushed to Taisce"
    # The oldest turns went to Taisce, in order, with their roles; the newest stayed.
    assert (
        flushed
        == [("user" if r == MessageRole.USER else "assistant", t) for r, t in turns][: len(flushed)]
    )
    assert len(flushed) < len(turns)
    assert any("motorbikes" in p.quote for p in found.passages)


@pytest.mark.anyio
async def test_the_block_recalls_and_stores_for_its_user(memory: Memory) -> None:
    with memory.client() as client:
        fact = {"subject": "Zara", "predicate": "likes", "object": "tea", "source_role": "user"}
        client.store_facts([fact], user="li-ana")
        question = [ChatMessage(role=MessageRole.USER, content="What does Zara like?")]
        mine = TaisceMemoryBlock(client=client, user="li-ana", source="li-users")
        assert "Zara likes tea" in await mine._aget(question)
        assert "Zara" not in await TaisceMemoryBlock(client=client)._aget(question)
        await mine._aput(question)
        assert [m.content for m in client.messages(source="li-users", user="li-ana").messages] == [
            "What does Zara like?"
        ]
        assert client.messages(source="li-users").messages == []
