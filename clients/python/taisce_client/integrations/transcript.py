"""A conversation kept as Taisce messages under one `source` (no framework needed).

A chat history or an agent session is the messages stored with its session id as their
`source`, read back oldest first. The listing route gives them newest first by
`recorded_at`, then `id`; one request stores a batch under one `recorded_at`, so the ids
made here sort in the batch's order (time, then position) and the order read back is
the order written.

A turn whose content is plain text is stored as that text, so it becomes searchable
memory like any message. A turn that is not (tool calls, non-text content, anything a
framework needs back exactly) is stored as its framework's JSON, and its id ends in
`.j` so that reading back knows to parse it.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ..async_client import AsyncClient
from ..client import Client
from ..errors import TaisceError
from ..models import NewMessage, Role, StoredMessage

# The API's largest batch of messages.
BATCH = 100
ROLES: frozenset[str] = frozenset({"user", "assistant", "system", "tool"})


class NotErasable(TaisceError, NotImplementedError):
    """Raised by clear and pop: the API has no route that deletes a message."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"{what}: Taisce keeps every stored message as memory and its API cannot "
            "delete one; use a new session id for an empty history, or erase an entity "
            "(Client.erase) to remove what is held about it"
        )


@dataclass(frozen=True, slots=True)
class Turn:
    """One stored turn: plain text, or (`structured`) a framework's record as JSON."""

    role: Role
    content: str
    structured: bool = False
    id: str | None = None

    @classmethod
    def of_record(cls, role: Role, record: Any) -> Turn:
        return cls(role, json.dumps(record, ensure_ascii=False, sort_keys=True), True)

    def record(self) -> Any:
        """The framework's record of a structured turn."""
        return json.loads(self.content)


def new_messages(
    prefix: str, source: str | None, turns: Sequence[Turn], keys: Sequence[str] | None = None
) -> list[NewMessage]:
    """The turns as messages with ids that sort in their order (see the module's note).

    With `keys` (one per turn, from the framework's own message ids) the ids are the
    same each time the same turns are sent, so a node that runs again stores nothing
    twice (the API keeps an id once); without, they start with the time."""
    now = time.time_ns()
    messages = []
    for index, turn in enumerate(turns):
        if keys is None:
            middle = f"{now:020d}.{index:05d}.{uuid.uuid4().hex[:12]}"
        else:
            middle = f"{index:05d}.{keys[index]}"
        kind = "j" if turn.structured else "t"
        messages.append(
            NewMessage(turn.role, turn.content, id=f"{prefix}.{middle}.{kind}", source=source)
        )
    return messages


def batches(messages: list[NewMessage]) -> Iterator[list[NewMessage]]:
    for start in range(0, len(messages), BATCH):
        yield messages[start : start + BATCH]


def turn_of(stored: StoredMessage, prefixes: tuple[str, ...] = ()) -> Turn:
    """A stored message (as the listing gives it) as a turn. It is structured only when
    its id is one this framework's integration made (`prefixes`) and marked `.j`: a
    message another writer put in the same source reads back as text."""
    made_here = stored.id.startswith(tuple(f"{p}." for p in prefixes))
    structured = made_here and stored.id.endswith(".j")
    return Turn(stored.role, stored.content, structured, stored.id)


def _oldest_first(newest_first: list[StoredMessage], prefixes: tuple[str, ...] = ()) -> list[Turn]:
    """Oldest first by the moment recorded, then id. The listing compares `recorded_at`
    as text, and a time on a whole second is written without its fraction (`…:07Z`
    sorts after `…:07.5Z`), so the order is taken from the parsed time."""
    ordered = sorted(newest_first, key=lambda m: (_moment(m.recorded_at), m.id))
    return [turn_of(stored, prefixes) for stored in ordered]


def _moment(recorded_at: str | None) -> datetime:
    # The listing always carries recorded_at; the model lets it be absent.
    if recorded_at is None:
        return datetime.min.replace(tzinfo=timezone.utc)
    return datetime.fromisoformat(recorded_at.replace("Z", "+00:00"))


def _page_size(limit: int | None, have: int) -> int:
    return BATCH if limit is None else max(1, min(BATCH, limit - have))


def read_turns(
    client: Client,
    source: str,
    limit: int | None = None,
    prefixes: tuple[str, ...] = (),
    user: str | None = None,
) -> list[Turn]:
    """The source's turns oldest first; with `limit`, only the newest `limit`.
    `prefixes`: the id prefixes whose `.j` turns this reader parses. `user`: the end
    user whose messages these are (None: the client's own user, if any)."""
    newest_first: list[StoredMessage] = []
    cursor = None
    while limit is None or len(newest_first) < limit:
        size = _page_size(limit, len(newest_first))
        page = client.messages(source=source, limit=size, cursor=cursor, user=user)
        newest_first.extend(page.messages)
        cursor = page.next_cursor
        if not cursor:
            break
    return _oldest_first(newest_first if limit is None else newest_first[:limit], prefixes)


async def aread_turns(
    client: AsyncClient,
    source: str,
    limit: int | None = None,
    prefixes: tuple[str, ...] = (),
    user: str | None = None,
) -> list[Turn]:
    """`read_turns` for the async client."""
    newest_first: list[StoredMessage] = []
    cursor = None
    while limit is None or len(newest_first) < limit:
        size = _page_size(limit, len(newest_first))
        page = await client.messages(source=source, limit=size, cursor=cursor, user=user)
        newest_first.extend(page.messages)
        cursor = page.next_cursor
        if not cursor:
            break
    return _oldest_first(newest_first if limit is None else newest_first[:limit], prefixes)


def write_turns(
    client: Client,
    prefix: str,
    source: str | None,
    turns: Sequence[Turn],
    keys: Sequence[str] | None = None,
    user: str | None = None,
) -> list[str]:
    ids: list[str] = []
    for batch in batches(new_messages(prefix, source, turns, keys)):
        ids.extend(client.store_messages(batch, user=user))
    return ids


async def awrite_turns(
    client: AsyncClient,
    prefix: str,
    source: str | None,
    turns: Sequence[Turn],
    keys: Sequence[str] | None = None,
    user: str | None = None,
) -> list[str]:
    ids: list[str] = []
    for batch in batches(new_messages(prefix, source, turns, keys)):
        ids.extend(await client.store_messages(batch, user=user))
    return ids
