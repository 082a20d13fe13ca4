"""LangChain: recall as Documents, and a conversation kept as Taisce messages.

Start a local server with the demo memory (it prints a credential), then run this:

    .venv/bin/taisce serve --demo --data data
    TAISCE_URL=http://127.0.0.1:8080 TAISCE_API_KEY=<credential> \
        .venv/bin/python examples/langchain_retriever.py

The chat model is LangChain's fake one, so nothing leaves the machine.
"""

from __future__ import annotations

import uuid

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import HumanMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from taisce_client import Client
from taisce_client.integrations.langchain import TaisceChatMessageHistory, TaisceRetriever

with Client() as taisce:  # TAISCE_URL, TAISCE_API_KEY
    retriever = TaisceRetriever(client=taisce, controls={"hops": 2})

    print("Documents recalled for 'Where does Atlas work?':")
    for doc in retriever.invoke("Where does Atlas work?"):
        meta = doc.metadata
        where = meta.get("role", "")
        print(f"  {meta['kind']:<8} {where:<9} {doc.page_content}")

    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "You remember:\n{memory}"),
            MessagesPlaceholder("history"),
            ("human", "{question}"),
        ]
    )
    model = GenericFakeChatModel(messages=iter(["Atlas works at Acme Corp, in Dublin."]))
    chain = prompt | model

    session = f"example-{uuid.uuid4().hex[:8]}"
    history = TaisceChatMessageHistory(taisce, session_id=session)
    question = "Where does Atlas work?"
    memory = "\n".join(d.page_content for d in retriever.invoke(question))
    reply = chain.invoke({"memory": memory, "history": history.messages, "question": question})
    history.add_messages([HumanMessage(question), reply])

    print(f"\nThe conversation as Taisce keeps it (source {session}):")
    for message in TaisceChatMessageHistory(taisce, session_id=session).messages:
        print(f"  {message.type:<5} {message.content}")
