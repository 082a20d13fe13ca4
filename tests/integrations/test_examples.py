"""Each example in examples/ runs as a user would run it (TAISCE_URL and
TAISCE_API_KEY in its environment) against a real `taisce serve` holding the demo
memory, and prints what it recalled and stored."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from taisce_client import Client

from taisce.demo import FACTS, MESSAGES
from tests.integrations.conftest import settle
from tests.server import ROOT, LocalServer

EXAMPLES = {
    "from_mem0.py": [
        # Alice's two facts, although the local model puts both under the floor for
        # this question: an entity of few facts has them all.
        "[user] Alice is allergic to peanuts",
        "[user] Alice lives in Lisbon",
        "Alice lives in Porto  (valid until now)",
        "message  user      I moved to Lisbon last spring.",
        "delete_all: done, 2 facts and 3 messages erased",
        ": 0 facts",
    ],
    "langchain_retriever.py": [
        "fact     user      Atlas works at Acme Corp",
        "human Where does Atlas work?",
        "ai    Atlas works at Acme Corp, in Dublin.",
    ],
    "langgraph_memory.py": [
        "- Atlas works at Acme Corp (said by user)",
        "user      Where does Atlas work?",
        "assistant Atlas works at Acme Corp, in Dublin.",
    ],
    "llamaindex_memory.py": ["- Atlas works at Acme Corp (said by user)"],
    "openai_agents_session.py": [
        "Final answer: Atlas works at Acme Corp, in Dublin.",
        "function_call_output",
        "Atlas works at Acme Corp (said by user)",
    ],
}


@pytest.fixture(scope="module")
def demo(integrations_server: LocalServer) -> dict[str, str]:
    secret = integrations_server.new_credential("integrations-examples")
    with Client(integrations_server.url, secret) as client:
        client.store_messages(MESSAGES)
        client.store_facts(FACTS)
        settle(client)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TAISCE_")}
    # Offline, as the in-process tests are: any HTTP(S) request beyond this machine goes
    # to a proxy that is not there and fails (a download, a hosted model, tracing).
    nowhere = "http://127.0.0.1:9"
    offline = {"HTTP_PROXY": nowhere, "HTTPS_PROXY": nowhere, "NO_PROXY": "127.0.0.1,localhost"}
    offline |= {k.lower(): v for k, v in offline.items()}
    return {
        **environ,
        **offline,
        "TAISCE_URL": integrations_server.url,
        "TAISCE_API_KEY": secret,
    }


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_the_example_runs_and_prints_what_it_recalled(example: str, demo: dict[str, str]) -> None:
    ran = subprocess.run(
        [sys.executable, str(ROOT / "examples" / example)],
        env=demo,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    for line in EXAMPLES[example]:
        assert line in ran.stdout, f"{line!r} not in:\n{ran.stdout}"
