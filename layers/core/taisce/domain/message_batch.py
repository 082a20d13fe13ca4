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


class BatchToStore(NamedTuple):
    """The messages to store (the first copy of each id, in batch order) and their
    passages (in the order given). Flat, not grouped by message: the embedded store
    writes each list in one go, on storing's hot path."""

    messages: list[Message]
    passages: list[Passage]


def batch_to_store(messages: Sequence[Message], passages: Sequence[Passage]) -> BatchToStore:
    """What of the batch a store writes (see the module)."""
    firsts: dict[str, Message] = {}
    for m in messages:
        if m.id not in firsts:
            firsts[m.id] = m
    ids: set[str] = set()
    places: set[tuple[str, int]] = set()
    kept: list[Passage] = []
    for p in passages:
        message = firsts.get(p.message_id)
        if message is None or p.id in ids:
            continue
        place = (p.message_id, p.start)
        if place in places or message.content[p.start : p.end] != p.quote:
            continue  # a second passage at one place, or one of another copy's text
        ids.add(p.id)
        places.add(place)
        kept.append(p)
    return BatchToStore(list(firsts.values()), kept)


def passages_by_message(batch: BatchToStore) -> dict[str, list[Passage]]:
    """The batch's passages under their message's id (every message listed), for a
    store that writes a message and its passages together."""
    grouped: dict[str, list[Passage]] = {m.id: [] for m in batch.messages}
    for p in batch.passages:
        grouped[p.message_id].append(p)
    return grouped
