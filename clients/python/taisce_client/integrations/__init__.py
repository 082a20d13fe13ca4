"""Taisce in the frameworks agents are built with, each a thin module over the client.

Each module imports its framework, installed as an extra of this package:

- `taisce_client.integrations.langchain` (`[langchain]`): a retriever and a chat
  message history.
- `taisce_client.integrations.langgraph` (`[langgraph]`): recall and remember nodes,
  and the recall tool for a `ToolNode`.
- `taisce_client.integrations.llamaindex` (`[llamaindex]`): a memory block.
- `taisce_client.integrations.openai_agents` (`[openai-agents]`): a session and a
  recall function tool.

`bundle` and `transcript` hold what they share and need no framework.
"""
