"""A project's listings (keys.py, "project listings"): what a project holds, read
with one Query per shard (the shards in parallel), never a Scan of the multi-tenant
table. The reads of a whole project and the explorer's pages (listing.py) start here.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from itertools import chain
from typing import Any

from ...domain.scope import partitions
from .client import MIN_PAGE, TableClient, parallel
from .keys import LISTING_SHARDS, Item, listing_pks

# Listing items a filtered Query reads per round trip (a message's listing item holds
# its sort key, id, role and source: ~100 bytes, so ~100 KB, 13 read units).
FILTERED_PAGE = 1000


def listing(table: TableClient, project: str, kind: str) -> list[Item]:
    """Every listing item of one kind: one Query per shard, the shards in parallel."""
    return [i for items in listing_seen(table, project, kind, (project,)) for i in items]


def listing_seen(
    table: TableClient, project: str, kind: str, parts: Sequence[str] | None = None
) -> list[list[Item]]:
    """Every listing item of one kind in each partition a request sees (domain/scope.py;
    or in `parts`), one list a partition, the shared partition's first: one Query per
    shard, every shard of every partition in one wave."""
    parts = partitions(project) if parts is None else parts

    def shard(pk: str) -> list[Item]:
        return list(
            table._query(
                KeyConditionExpression="PK = :pk",
                ExpressionAttributeValues={":pk": {"S": pk}},
            )
        )

    found = parallel(shard, [pk for p in parts for pk in listing_pks(p, kind)])
    return [
        [i for items in found[n * LISTING_SHARDS : (n + 1) * LISTING_SHARDS] for i in items]
        for n in range(len(parts))
    ]


def listing_page(
    table: TableClient, project: str, kind: str, after: str | None, limit: int
) -> tuple[list[Item], str | None]:
    """One page of a listing, its shards read one after the other: up to `limit` items
    from `after` ("<shard>#<last sort key read>", None: the start) and where the next
    page starts (None: that was the last). One Query."""
    shard, _, last = (after or "0#").partition("#")
    n = int(shard)
    pk = listing_pks(project, kind)[n]
    params: dict[str, Any] = {
        "TableName": table.table_name,
        "KeyConditionExpression": "PK = :pk",
        "ExpressionAttributeValues": {":pk": {"S": pk}},
        "ConsistentRead": table.consistent_reads,
        "Limit": limit,
        "ReturnConsumedCapacity": "TOTAL",
    }
    if last:
        params["ExclusiveStartKey"] = {"PK": {"S": pk}, "SK": {"S": last}}
    reply = table._read("Query", params, direct=False)
    more = reply.get("LastEvaluatedKey")
    if more:
        return reply.get("Items", []), f"{n}#{more['SK']['S']}"
    return reply.get("Items", []), f"{n + 1}#" if n + 1 < LISTING_SHARDS else None


def listing_in_order(
    table: TableClient,
    project: str,
    kind: str,
    *,
    after: str | None = None,
    before: str | None = None,
    filters: Sequence[tuple[str, str, str]] = (),
    descending: bool = False,
    page: int = MIN_PAGE,
) -> Iterator[Item]:
    """The listing items of one kind, merged across shards (of every partition the
    request sees: domain/scope.py) by sort key (ascending, or descending), those
    after/before the given sort key only, each filter a (attribute, function, value)
    with function "=" or "contains". An item's PK tells its partition."""
    condition = "PK = :pk"
    values: Item = {}
    if after is not None:
        condition += " AND SK > :a"
        values[":a"] = {"S": after}
    if before is not None:
        condition += " AND SK < :b"
        values[":b"] = {"S": before}
    names: dict[str, str] = {}
    tests: list[str] = []
    for n, (attribute, function, value) in enumerate(filters):
        names[f"#f{n}"] = attribute
        values[f":f{n}"] = {"S": value}
        if function == "contains":
            tests.append(f"contains(#f{n}, :f{n})")
        else:
            tests.append(f"#f{n} = :f{n}")

    def start(pk: str) -> Iterator[Item]:
        params: dict[str, Any] = {
            "KeyConditionExpression": condition,
            "ExpressionAttributeValues": {":pk": {"S": pk}, **values},
            "ScanIndexForward": not descending,
            # DynamoDB counts the items a Query reads, not those its filter keeps,
            # against Limit: a filtered page reads FILTERED_PAGE listing items (small
            # ones: ~100 KB), so a rare role does not cost a round trip per page read.
            "Limit": max(page, FILTERED_PAGE) if tests else page,
        }
        if tests:
            params["FilterExpression"] = " AND ".join(tests)
            params["ExpressionAttributeNames"] = names
        items = table._query(**params)
        first = next(items, None)  # the first page, read in this wave
        return iter(()) if first is None else chain([first], items)

    pks = [pk for p in partitions(project) for pk in listing_pks(p, kind)]
    shards = parallel(start, pks)
    return heapq.merge(*shards, key=lambda i: i["SK"]["S"], reverse=descending)
