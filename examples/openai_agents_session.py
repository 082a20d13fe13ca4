"""OpenAI Agents SDK: the recall function tool, and the run kept in a Taisce session.

Start a local server with the demo memory (it prints a credential), then run this:

    .venv/bin/taisce serve --demo --data data
    TAISCE_URL=http://127.0.0.1:8080 TAISCE_API_KEY=<credential> \
        .venv/bin/python examples/openai_agents_session.py

The model is the SDK's ScriptedModel (it calls the tool, then answers), and tracing is
off, so nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import uuid

from agents import Agent, RunConfig, Runner
from agents.testing import ScriptedModel, assistant_message, function_call
from taisce_client import AsyncClient
from taisce_client.integrations.openai_agents import TaisceSession, recall_tool


async def main() -> None:
    async with AsyncClient() as taisce:  # TAISCE_URL, TAISCE_API_KEY
        question = {"question": "Where does Atlas work?"}
        model = ScriptedModel(
            [
                [function_call("recall_memory", question, call_id="call-1")],
                [assistant_message("Atlas works at Acme Corp, in Dublin.")],
            ]
        )
        agent = Agent(name="Assistant", model=model, tools=[recall_tool(taisce, hops=2)])
        session = TaisceSession(f"example-{uuid.uuid4().hex[:8]}", taisce)
        result = await Runner.run(
            agent,
            "Where does Atlas work?",
            session=session,
            run_config=RunConfig(tracing_disabled=True),
        )
        print("Final answer:", result.final_output)
        print(f"\nThe session as Taisce keeps it ({session.session_id}):")
        for item in await session.get_items():
            kind = item.get("type", "message")
            body = item.get("content") or item.get("output") or item.get("arguments")
            print(f"  {kind:<22} {str(body)[:70]!r}")


asyncio.run(main())
