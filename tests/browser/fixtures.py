"""Memories for the explorer's browser tests, made here (nothing copied from a benchmark):

- `conversation_sized`: about the size of one long real conversation between two
  people: 600 messages in 25 sessions days apart (turns a minute apart), and 1,800 facts
  (some said twice) about 150 entities observed from them, each citing its message;
- `hostile`: names that try to break a page: markup, a right-to-left override, right-to-
  left and CJK scripts, zero-width and combining characters, quotes and ampersands, URL
  and path syntax, an emoji, a 400-character name.

Each gives the request bodies for `POST /v1/messages` and for `POST /v1/facts`, in
batches the API takes (100 items)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

BATCH = 100
SPEAKERS = ("Nora Quill", "Tomas Varga")
TOPICS = (
    ("started a pottery class at", "Clayworks Studio"),
    ("adopted a dog from", "Harbour Rescue"),
    ("is training for a race in", "Lisbon"),
    ("reads novels by", "Irena Holt"),
    ("volunteers at", "Eastside Library"),
    ("plays chess with", "Oskar Lind"),
    ("is saving for a trip to", "Kyoto"),
    ("cooks recipes from", "The Salt Table"),
)


Bodies = tuple[list[dict[str, Any]], list[dict[str, Any]]]


def _bodies(messages: list[dict[str, Any]], facts: list[dict[str, Any]]) -> Bodies:
    return (
        [{"messages": messages[i : i + BATCH]} for i in range(0, len(messages), BATCH)],
        [{"facts": facts[i : i + BATCH]} for i in range(0, len(facts), BATCH)],
    )


def conversation_sized(seed: int = 7) -> Bodies:
    """(message bodies, fact bodies): 600 messages, 1,800 facts, 150 entities."""
    rng = random.Random(seed)
    start = datetime(2025, 3, 1, 18, 0, tzinfo=UTC)
    places = [f"Place {i:03}" for i in range(100)]
    people = [f"Friend {i:02}" for i in range(40)]
    messages: list[dict[str, Any]] = []
    facts: list[dict[str, Any]] = []
    for session in range(25):
        began = start + timedelta(days=session * 9 + rng.randint(0, 3), hours=rng.randint(0, 5))
        for turn in range(24):
            speaker = SPEAKERS[turn % 2]
            verb, thing = TOPICS[(session + turn) % len(TOPICS)]
            place, friend = rng.choice(places), rng.choice(people)
            mid = f"conv-s{session:02}-t{turn:02}"
            messages.append(
                {
                    "id": mid,
                    "role": "user" if turn % 2 == 0 else "assistant",
                    "source": speaker,
                    "occurred_at": (began + timedelta(minutes=turn)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "content": f"{speaker}: Last week I met {friend} near {place}. "
                    f"You know, {speaker.split()[0]} {verb} {thing} now, "
                    f"and {friend} wants to join in session {session + 1}.",
                }
            )
            for subject, predicate, obj in (
                (speaker, verb, thing),
                (speaker, "went to", place),
                (friend, "was met near", place),
            ):
                facts.append(
                    {
                        "subject": subject,
                        "predicate": predicate,
                        "object": obj,
                        "source_role": "user" if turn % 2 == 0 else "assistant",
                        "message_id": mid,
                    }
                )
    return _bodies(messages, facts)


HOSTILE_NAMES = (
    "<script>alert('x')</script> Zoë",
    '<img src=x onerror="window.pwned=1"> Kit',
    "Ahmed \u202egnp.exe",  # a right-to-left override
    "محمد الأحمد",
    "山田 太郎",
    'O\'Brien & "Sons" <Ltd>',
    "Ann\u200bMarie",  # a zero-width space
    "Cafe\u0301 Noir",  # a combining accent
    "#/entity?name=Atlas&hops=2",
    "../../etc/passwd %2F",
    "🦊 Fox Den",
    "Bartholomew " * 33 + "the Long",
)


def hostile() -> Bodies:
    """(message bodies, fact bodies): each hostile name in a message and in facts that
    link it to the next one, so every name has a page, a graph and links."""
    messages = [
        {
            "id": f"hostile-m{i}",
            "role": ("user", "assistant", "system", "tool")[i % 4],
            "source": name[:40],
            "content": f"Today {name} said hello to {HOSTILE_NAMES[(i + 1) % len(HOSTILE_NAMES)]}.",
        }
        for i, name in enumerate(HOSTILE_NAMES)
    ]
    facts = [
        {
            "subject": name,
            "predicate": "greeted",
            "object": HOSTILE_NAMES[(i + 1) % len(HOSTILE_NAMES)],
            "source_role": "user",
            "quote": f"{name} said hello",
            "message_id": f"hostile-m{i}",
        }
        for i, name in enumerate(HOSTILE_NAMES)
    ]
    return _bodies(messages, facts)
