"""Coming from Mem0: the calls you know (add, search, get_all, history, delete,
delete_all), each done with Taisce's Python client, for one end user of your app.

Start a local server (it prints a credential), then run this:

    .venv/bin/taisce serve --demo --data data
    TAISCE_URL=http://127.0.0.1:8080 TAISCE_API_KEY=<credential> \
        .venv/bin/python examples/from_mem0.py

docs/coming-from.md maps the rest of Mem0's, Zep's and LangMem's ideas.
"""

from __future__ import annotations

import uuid

from taisce_client import Client, NewFact
from taisce_client.render import render_recall

# Mem0's user_id: one end user's memory, kept apart from every other user's.
alice = f"alice-{uuid.uuid4().hex[:8]}"

with Client(user=alice) as memory:  # TAISCE_URL, TAISCE_API_KEY; every call acts for alice
    # m.add(messages, user_id=...): the conversation is stored as it was said, each
    # message with the role of who said it. No model runs here: what is known comes
    # as facts, stored by your code (or extracted in the background: docs/extraction.md).
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    memory.store_messages(
        [
            {"role": "user", "content": "I'm vegetarian and allergic to peanuts.", "source": chat},
            {"role": "assistant", "content": "Noted: no meat, no peanuts.", "source": chat},
            {"role": "user", "content": "I moved to Lisbon last spring.", "source": chat},
        ]
    )
    memory.store_facts(
        [
            NewFact("Alice", "lives in", "Lisbon", source_role="user"),
            NewFact("Alice", "is allergic to", "peanuts", source_role="user"),
        ]
    )

    # m.search(query, user_id=..., limit=3): a bundle within a character budget
    # instead of a number of hits: facts first, then passages of the messages.
    bundle = memory.recall("What should I cook for Alice?", max_characters=600)
    print("recall:")
    print(render_recall(bundle))

    # m.history(memory_id): a fact that contradicts one closes it instead of erasing it.
    memory.store_facts([NewFact("Alice", "lives in", "Porto", source_role="user")])
    print("\nhistory of where Alice lives:")
    for fact in memory.facts_about("Alice"):
        if fact.predicate == "lives in":
            until = fact.valid_to or "now"
            print(f"  {fact.statement}  (valid until {until})")

    # m.get_all(user_id=...): what is stored, by entity and by message.
    print("\nget_all:")
    for fact in memory.facts_about("Alice"):
        print(f"  fact     {fact.statement}")
    for message in memory.messages(source=chat).messages:
        print(f"  message  {message.role:<9} {message.content}")

    # m.delete(memory_id): one fact.
    allergy = next(f for f in memory.facts_about("Alice") if f.object == "peanuts")
    memory.delete_fact(allergy.id)

    # m.delete_all(user_id=...): everything held for this user, erased (not hidden).
    erased = memory.erase()
    print(f"\ndelete_all: {erased.status}, {erased.erased.facts} facts and "
          f"{erased.erased.messages} messages erased")  # fmt: skip
    print(f"left for {alice}: {len(memory.recall('Alice').facts)} facts")
