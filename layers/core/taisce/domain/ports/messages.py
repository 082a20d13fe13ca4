"""Messages and the passages cut from them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..filters import MessageFilter
from ..model import Message, Passage


class MessageStore(Protocol):
    """A project's messages and passages."""

    def put_messages(
        self, project: str, messages: Sequence[Message], passages: Sequence[Passage]
    ) -> set[str]:
        """Store messages and their passages; returns the ids of messages new to the store.

        Each message new to the store gets the next position of its project's storing
        order (in the batch's order, after every earlier batch's), which its passages'
        vector marks carry (PendingVector.position); a message already stored keeps
        its own. Positions within a batch are consecutive; between batches a store may
        leave a gap (DynamoDB reserves a batch's range before it knows which are new)."""
        ...

    def passages_of(self, project: str, message_id: str) -> list[Passage]: ...

    def passages_by_ids(
        self,
        project: str,
        ids: Sequence[str],
        messages: MessageFilter | None = None,
        times: bool = False,
    ) -> list[Passage]:
        """The passages with these ids, in the order given (unknown ids left out),
        only those of messages that `messages` admits; with `times`, each carries its
        message's occurred_at (a store may fill it, and recorded_at, anyway where they
        are free)."""
        ...

    def message(self, project: str, message_id: str) -> Message | None: ...

    def messages_by_ids(self, project: str, ids: Sequence[str]) -> list[Message]:
        """The messages of these ids, in the order given (unknown ids left out); the
        user's own where the shared memory holds the id too."""
        ...
