"""The rule both stores follow when they read the facts of several entities:
entity after entity, each fact once, none of those excluded, at most `limit`.

The stores supply one lazy stream per entity (their queries, in their order);
this walks them and stops reading as soon as the limit is reached, so a store
makes no query or page read beyond what the caller takes.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator

from .model import Fact, Role

# One entity's facts, opened with how many facts the caller may still take (a store
# may size its first read by it; most ignore it). Opened only when reached.
FactStream = Callable[[int], Iterable[Fact]]


def facts_once(
    streams: Iterable[FactStream],
    roles: Collection[Role],
    limit: int,
    exclude: Collection[str] = (),
) -> Iterator[Fact]:
    """The facts of the streams in order, each fact once, none in `exclude`, at most
    `limit`; nothing at all (no stream opened) when no role is asked or limit <= 0."""
    if not roles or limit <= 0:
        return
    seen = set(exclude)
    count = 0
    for stream in streams:
        for fact in stream(limit - count):
            if fact.id not in seen:
                seen.add(fact.id)
                yield fact
                count += 1
                if count >= limit:
                    return
