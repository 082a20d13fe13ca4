"""LlamaIndex: Taisce's recall as a memory block in the chat context.

Start a local server with the demo memory (it prints a credential), then run this:

    .venv/bin/taisce serve --demo --data data
    TAISCE_URL=http://127.0.0.1:8080 TAISCE_API_KEY=<credential> \
        .venv/bin/python examples/llamaindex_memory.py

The LLM is LlamaIndex's MockLLM, which answers with the prompt it was given: its answer
shows what a real model would have seen. Nothing leaves the machine.
"""

from __future__ import annotations

import uuid

from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import MockLLM
from llama_index.core.memory import Memory
from taisce_client import Client
from taisce_client.integrations.llamaindex import TaisceMemoryBlock

with Client() as taisce:  # TAISCE_URL, TAISCE_API_KEY
    memory = Memory.from_defaults(
        session_id=f"example-{uuid.uuid4().hex[:8]}",
        memory_blocks=[TaisceMemoryBlock(client=taisce, controls={"hops": 2})],
    )
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=memory)
    answer = engine.chat("Where does Atlas work?")
    print("The prompt the model was given:")
    print(answer.response)
