"""Users inside a project: what a request sees and where it writes.

A project's memory is partitioned by end user. The shared memory lives in the
project's own partition; user U's lives in the partition `scope(project, U)`. A
request with a user writes to that user's partition and reads two partitions, the
shared one and its own; a request without one writes and reads the shared partition
only. Every store keeps partitions as it keeps projects (keys, indexes, vectors), so
nothing is filtered out of another user's items: another user's items are never read.

`Scope` is a partition name that also knows what it reads (`seen`), so it goes
wherever a project name goes: a write lands in the partition, a read asks `seen` for
the partitions to read. A plain project name reads itself only (the shared memory;
and the worker, which works one partition at a time, so a user's reports are built
from that user's facts alone).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from pydantic import StringConstraints

from .model import Hit

USER_PATTERN = r"^[A-Za-z0-9._:@-]{1,128}$"
User = Annotated[str, StringConstraints(pattern=USER_PATTERN)]

# Between the project and the user in a partition's name: a character a user id cannot
# hold, so the partition names a user one way only.
SEPARATOR = "\x1f"


class Scope(str):
    """A user's partition of a project (its value), and the partitions a request in it
    reads: the project's shared one, then the user's."""

    __slots__ = ("project", "user")
    project: str
    user: str

    def __new__(cls, project: str, user: str) -> Scope:
        made = super().__new__(cls, f"{project}{SEPARATOR}{user}")
        made.project = project
        made.user = user
        return made

    def __reduce__(self) -> tuple[type[Scope], tuple[str, str]]:
        return (Scope, (self.project, self.user))


def scope(project: str, user: str | None) -> str:
    """Where a request of `project` with `user` (or without) writes."""
    return project if user is None else Scope(project, user)


def seen(partition: str) -> tuple[str, str]:
    """The partitions a request in `partition` reads, as a pair (the same name twice
    for the shared memory: an `IN (?, ?)` then binds one value)."""
    if isinstance(partition, Scope):
        return (partition.project, str(partition))
    return (partition, partition)


def partitions(partition: str) -> tuple[str, ...]:
    """The partitions a request in `partition` reads, each once: the shared one first."""
    if isinstance(partition, Scope):
        return (partition.project, str(partition))
    return (partition,)


def as_scope(partition: str) -> str:
    """A partition by its name (the worker's, read from the store's marks) as a request
    of its user holds it, so that its writes resolve names as the user's requests do
    (the user's aliases over the shared ones). The separator is in no project name nor
    user id, so a name holds one user's partition one way only."""
    if isinstance(partition, Scope) or SEPARATOR not in partition:
        return partition
    project, user = partition.split(SEPARATOR, 1)
    return Scope(project, user)


@dataclass(frozen=True, slots=True)
class ScopeGuard:
    """A write that must not land in a user's scope erased since `recorded_at` (an
    extraction of a message recorded then): the store checks the user's tombstone
    under `project` in the write itself."""

    project: str
    tombstone: str
    recorded_at: str


class ScopeErased(Exception):
    """The write's scope was erased after what it was made from was recorded."""


def user_of(partition: str) -> str | None:
    """The user a partition belongs to, or None for the shared memory."""
    return partition.user if isinstance(partition, Scope) else None


def project_of_partition(partition: str) -> str:
    """The project a partition belongs to (its shared partition's name)."""
    return partition.project if isinstance(partition, Scope) else partition


# A user's erasure is recorded as a pending erasure of the project (where a store
# completes it in steps) whose one name is this mark and the user's id: no name a
# request could hold (it starts with NUL), so nothing else is hidden or erased by it.
USER_ERASURE = "\x00user\x00"


def user_erasure_names(user: str) -> tuple[str]:
    """The names of a user's pending erasure."""
    return (USER_ERASURE + user,)


def erased_user(names: Sequence[str]) -> str | None:
    """The user a pending erasure with these names erases, or None (a name's)."""
    if len(names) == 1 and names[0].startswith(USER_ERASURE):
        return names[0].removeprefix(USER_ERASURE)
    return None


def best_hits(found: Sequence[Sequence[Hit]], k: int) -> list[Hit]:
    """The k best of the hits of several partitions, best first, ties by id (as one
    index's search orders them)."""
    merged = sorted((h for hits in found for h in hits), key=lambda h: (-h.score, h.id))
    return merged[:k]
