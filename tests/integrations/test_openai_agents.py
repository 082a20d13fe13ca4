"""The OpenAI Agents SDK integration with the SDK itself (its Runner, and its own
ScriptedModel as the fake model), against a real `taisce serve`: the recall tool's
output reaching the model, and the run's items kept in a Taisce session and read back."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent, RunConfig, Runner
from agents.memory import SessionSettings
from agents.testing import ScriptedModel, assistant_message, function_call
from taisce_client.integrations.openai_agents import NotErasable, TaisceSession, recall_tool

from tests.integrations.conftest import Memory

pytestmark = pytest.mark.anyio
OFFLINE = RunConfig(tracing_disabled=True)


def _text(item: Any) -> str:
    return str(item.get("output") or item.get("content"))


async def test_the_recall_tool_and_the_session_in_a_run(memory: Memory) -> None:
    async with memory.async_client() as taisce:
        model = ScriptedModel(
            [
                [
                    function_call(
                        "recall_memory", {"question": "Where does Atlas work?"}, call_id="c1"
                    )
                ],
                [assistant_message("Atlas works at Acme Corp, which is in Dublin.")],
            ]
        )
        agent = Agent(name="Assistant", model=model, tools=[recall_tool(taisce, hops=2)])
        session = TaisceSession("oa-run-1", taisce)
        result = await Runner.run(
            agent, "Where does Atlas work?", session=session, run_config=OFFLINE
        )

        assert result.final_output == "Atlas works at Acme Corp, which is in Dublin."
        # The tool's output, as the model received it on its second call.
        sent = model.calls[1].input
        output = next(i for i in sent if i.get("type") == "function_call_output")
        assert output["call_id"] == "c1"
        assert "- Atlas works at Acme Corp (said by user)" in output["output"]
        assert "Acme Corp is based in Dublin" in output["output"]

        # The run's items, read back from Taisce by a new session object, in order.
        items = await TaisceSession("oa-run-1", taisce).get_items()
        assert [(i.get("type", "message"), i.get("role")) for i in items] == [
            ("message", "user"),
            ("function_call", None),
            ("function_call_output", None),
            ("message", "assistant"),
        ]
        assert items[0] == {"role": "user", "content": "Where does Atlas work?"}
        assert items[1]["name"] == "recall_memory" and items[1]["call_id"] == "c1"
        assert "Atlas works at Acme Corp" in items[2]["output"]
        assert items[3] == {
            "role": "assistant",
            "content": "Atlas works at Acme Corp, which is in Dublin.",
        }
        # Text turns are stored as text, so recall finds them like any message.
        stored = (await taisce.messages(source="oa-run-1"))["messages"]
        assert [m["role"] for m in reversed(stored)] == ["user", "assistant", "tool", "assistant"]
        assert stored[0]["content"] == "Atlas works at Acme Corp, which is in Dublin."

        # A second run on the same session: the model is sent the earlier turns.
        again = ScriptedModel([[assistant_message("You're welcome.")]])
        agent = Agent(name="Assistant", model=again)
        await Runner.run(agent, "Thanks!", session=session, run_config=OFFLINE)
        history = [_text(i) for i in again.calls[0].input]
        assert history[0] == "Where does Atlas work?"
        assert history[-1] == "Thanks!"
        assert len(await session.get_items()) == 6


async def test_a_limit_reads_the_newest_items(memory: Memory) -> None:
    with memory.client() as taisce:  # the sync client works too, in a thread
        session = TaisceSession("oa-limit", taisce)
        await session.add_items([{"role": "user", "content": f"note {i}"} for i in range(5)])
        assert [i["content"] for i in await session.get_items(limit=2)] == ["note 3", "note 4"]
        limited = TaisceSession("oa-limit", taisce, SessionSettings(limit=3))
        assert [i["content"] for i in await limited.get_items()] == ["note 2", "note 3", "note 4"]
        assert await TaisceSession("oa-empty", taisce).get_items() == []


async def test_pop_and_clear_say_why_they_cannot_delete(memory: Memory) -> None:
    async with memory.async_client() as taisce:
        session = TaisceSession("oa-limit", taisce)
        with pytest.raises(NotErasable, match="new session id"):
            await session.pop_item()
        with pytest.raises(NotErasable):
            await session.clear_session()
        assert len(await session.get_items()) == 5


async def test_the_tool_says_when_nothing_was_found(memory: Memory) -> None:
    async with memory.async_client() as taisce:
        model = ScriptedModel(
            [
                [function_call("recall_memory", {"question": "Who is Zebedee?"}, call_id="z")],
                [assistant_message("I don't know.")],
            ]
        )
        tool = recall_tool(taisce, surfaces=["facts"])
        agent = Agent(name="Assistant", model=model, tools=[tool])
        await Runner.run(agent, "Who is Zebedee?", run_config=OFFLINE)
    output = next(i for i in model.calls[1].input if i.get("type") == "function_call_output")
    assert output["output"] == "Nothing found."


async def test_the_session_and_tool_act_for_a_user(memory: Memory) -> None:
    async with memory.async_client() as taisce:
        fact = {"subject": "Zia", "predicate": "likes", "object": "tea", "source_role": "user"}
        await taisce.store_facts([fact], user="oa-ana")
        tool = recall_tool(taisce, user="oa-ana")
        session = TaisceSession("oa-users", taisce, user="oa-ana")
        model = ScriptedModel(
            [
                [function_call("recall_memory", {"question": "What does Zia like?"}, call_id="c9")],
                [assistant_message("Tea.")],
            ]
        )
        agent = Agent(name="Assistant", model=model, tools=[tool])
        await Runner.run(agent, "What does Zia like?", session=session, run_config=OFFLINE)
        sent = model.calls[1].input
        output = next(i for i in sent if i.get("type") == "function_call_output")
        assert "Zia likes tea" in output["output"]
        assert len(await TaisceSession("oa-users", taisce, user="oa-ana").get_items()) == 4
        assert await TaisceSession("oa-users", taisce).get_items() == []
