"""A small demo memory: people, organisations and places linked by facts, and
messages from several roles, with fixed ids so that loading it twice stores it once."""

from __future__ import annotations

from typing import Any

MESSAGES: list[dict[str, Any]] = [
    {
        "id": "demo-m1",
        "role": "user",
        "source": "chat:1",
        "occurred_at": "2026-11-02T09:15:00Z",
        "content": "Atlas started at Acme Corp last month. His manager there is Maya Okafor.",
    },
    {
        "id": "demo-m2",
        "role": "assistant",
        "source": "chat:1",
        "occurred_at": "2026-11-02T09:15:05Z",
        "content": "Noted. It sounds like Atlas prefers email to calls; I will suggest "
        "writing to him first.",
    },
    {
        "id": "demo-m3",
        "role": "user",
        "source": "chat:2",
        "occurred_at": "2026-11-09T18:40:00Z",
        "content": "Maya moved to Galway in the spring. She commutes to Dublin twice a week.",
    },
    {
        "id": "demo-m4",
        "role": "tool",
        "source": "docs/acme-handbook.md",
        "occurred_at": "2026-10-01T00:00:00Z",
        "content": "Acme Corp was founded in 2009. Its head office is in Dublin. "
        "Acme Corp works with Northwind Labs on logistics software.",
    },
    {
        "id": "demo-m5",
        "role": "user",
        "source": "chat:3",
        "occurred_at": "2026-11-20T12:05:00Z",
        "content": "My friend Liam Walsh joined Northwind Labs in Lisbon.",
    },
]

FACTS: list[dict[str, Any]] = [
    {
        "id": "demo-f1",
        "subject": "Atlas",
        "predicate": "works at",
        "object": "Acme Corp",
        "source_role": "user",
        "message_id": "demo-m1",
        "quote": "Atlas started at Acme Corp last month.",
        "context": "since October 2026",
    },
    {
        "id": "demo-f2",
        "subject": "Maya Okafor",
        "predicate": "manages",
        "object": "Atlas",
        "source_role": "user",
        "message_id": "demo-m1",
        "quote": "His manager there is Maya Okafor.",
    },
    {
        "id": "demo-f3",
        "subject": "Atlas",
        "predicate": "prefers",
        "object": "email to calls",
        "object_kind": "value",
        "source_role": "assistant",
        "message_id": "demo-m2",
        "statement": "Atlas prefers email to calls",
    },
    {
        "id": "demo-f4",
        "subject": "Maya Okafor",
        "predicate": "lives in",
        "object": "Galway",
        "source_role": "user",
        "message_id": "demo-m3",
        "quote": "Maya moved to Galway in the spring.",
    },
    {
        "id": "demo-f5",
        "subject": "Acme Corp",
        "predicate": "is based in",
        "object": "Dublin",
        "source_role": "tool",
        "message_id": "demo-m4",
        "quote": "Its head office is in Dublin.",
    },
    {
        "id": "demo-f6",
        "subject": "Acme Corp",
        "predicate": "was founded in",
        "object": "2009",
        "object_kind": "value",
        "source_role": "tool",
        "message_id": "demo-m4",
        "quote": "Acme Corp was founded in 2009.",
    },
    {
        "id": "demo-f7",
        "subject": "Acme Corp",
        "predicate": "works with",
        "object": "Northwind Labs",
        "source_role": "tool",
        "message_id": "demo-m4",
        "quote": "Acme Corp works with Northwind Labs on logistics software.",
    },
    {
        "id": "demo-f8",
        "subject": "Liam Walsh",
        "predicate": "works at",
        "object": "Northwind Labs",
        "source_role": "user",
        "message_id": "demo-m5",
        "quote": "My friend Liam Walsh joined Northwind Labs in Lisbon.",
    },
    {
        "id": "demo-f9",
        "subject": "Northwind Labs",
        "predicate": "is based in",
        "object": "Lisbon",
        "source_role": "user",
        "message_id": "demo-m5",
    },
    {
        "id": "demo-f10",
        "subject": "Maya Okafor",
        "predicate": "commutes to",
        "object": "Dublin",
        "source_role": "user",
        "message_id": "demo-m3",
        "context": "twice a week",
        "quote": "She commutes to Dublin twice a week.",
    },
]

FIRST_RECALL: dict[str, Any] = {
    "question": "Where does Atlas work, and who manages him?",
    "hops": 2,
    "source_roles": ["user", "tool"],
    "themes": True,
    "max_characters": 4000,
}
