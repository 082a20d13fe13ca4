"""Which parts of a batch of messages a store writes, the rule both stores follow.

The first copy of each message id is the one stored (an id sent twice is stored
once). Its passages are those cut from that copy's text, each passage id once in
the whole batch (a passage id is its key in the project) and one passage per place
in the text (start). Which messages are new to the store is the store's to find
out as it writes (a message already stored keeps its passages).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .model import Message, Passage


class MessageToStore(NamedTuple):
    """A message of the batch as stored, with its passages in the order given."""

    message: Message
    passages: list[Passage]


def batch_to_store(
    messages: Sequence[Message], passages: Sequence[Passage]
) -> list[MessageToStore]:
    """The first copy of each message id, in batch order, each with the passages of
    the batch that belong to it (see the module)."""
    firsts: dict[str, MessageToStore] = {}
    for m in messages:
        if m.id not in firsts:
            firsts[m.id] = MessageToStore(m, [])
    ids: set[str] = set()
    places: set[tuple[str, int]] = set()
    for p in passages:
        entry = firsts.get(p.message_id)
        if entry is None or p.id in ids or (p.message_id, p.start) in places:
            continue
        if entry.message.content[p.start : p.end] != p.quote:
            continue  # a passage of another copy's text
        ids.add(p.id)
        places.add((p.message_id, p.start))
        entry.passages.append(p)
    return list(firsts.values())
