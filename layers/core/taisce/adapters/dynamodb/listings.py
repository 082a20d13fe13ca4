"""A project's listings (keys.py, "project listings"): what a project holds, read
with one Query per shard (the shards in parallel), never a Scan of the multi-tenant
table. The explorer's pages (domain/listing.py) merge the shards, each sorted, in
order, then read the records themselves by BatchGetItem.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from itertools import chain
from typing import Any

from ...domain.model import ROLES, EntityCounts, Fact, Message, Role
from .client import MIN_PAGE, TableClient, chunks, parallel
from .codec import ALIAS_OF, count_attribute, fact_of, message_of
from .keys import (
    LIST_ENTITIES,
    LIST_FACTS,
    LIST_MESSAGES,
    Item,
    entity_pk,
    key_tail,
    listing_pks,
    message_key,
    message_listing_sk,
    name_key,
)


class Listings(TableClient):
    """The project listings and the explorer's pages."""

    def _listing(self, project: str, kind: str) -> list[Item]:
        """Every listing item of one kind: one Query per shard, the shards in parallel."""

        def shard(pk: str) -> list[Item]:
            return list(
                self._query(
                    KeyConditionExpression="PK = :pk",
                    ExpressionAttributeValues={":pk": {"S": pk}},
                )
            )

        return [i for items in parallel(shard, listing_pks(project, kind)) for i in items]

    def _listing_in_order(
        self,
        project: str,
        kind: str,
        *,
        after: str | None = None,
        before: str | None = None,
        filters: Sequence[tuple[str, str, str]] = (),
        descending: bool = False,
        page: int = MIN_PAGE,
    ) -> Iterator[Item]:
        """The listing items of one kind, merged across shards by sort key (ascending,
        or descending), those after/before the given sort key only, each filter a
        (attribute, function, value) with function "=" or "contains"."""
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
                "Limit": page,
            }
            if tests:
                params["FilterExpression"] = " AND ".join(tests)
                params["ExpressionAttributeNames"] = names
            items = self._query(**params)
            first = next(items, None)  # the first page, read in this wave
            return iter(()) if first is None else chain([first], items)

        shards = parallel(start, listing_pks(project, kind))
        return heapq.merge(*shards, key=lambda i: i["SK"]["S"], reverse=descending)

    def project_facts(self, project: str) -> Iterator[Fact]:
        for item in self._listing(project, LIST_FACTS):
            yield fact_of(item)

    def entity_page(
        self, project: str, after: str | None, limit: int, contains: str | None
    ) -> list[EntityCounts]:
        listed = self._listing_in_order(
            project,
            LIST_ENTITIES,
            after=None if after is None else key_tail(after),
            filters=[("k", "contains", contains)] if contains else (),
            page=max(limit, MIN_PAGE),
        )
        found: list[EntityCounts] = []
        for chunk in chunks(listed, max(limit, MIN_PAGE)):
            keys = [i["k"]["S"] for i in chunk]
            items = self._batch_get([name_key(project, k) for k in keys])
            by_pk = {i["PK"]["S"]: i for i in items}
            for k in keys:
                # An entity with no live fact (every fact deleted or erased, or merged
                # into another as an alias) is left out, as the embedded store leaves it.
                item = by_pk.get(entity_pk(project, k))
                if item is None or "n" not in item or ALIAS_OF in item:
                    continue
                counts = {
                    role: int(item[count_attribute(role)]["N"])
                    for role in ROLES
                    if count_attribute(role) in item
                }
                if any(n > 0 for n in counts.values()):
                    found.append(EntityCounts(k, item["n"]["S"], counts))  # type: ignore[arg-type]
                    if len(found) == limit:
                        return found
        return found

    def message_page(
        self,
        project: str,
        before: tuple[str, str] | None,
        limit: int,
        role: Role | None,
        source: str | None,
    ) -> list[Message]:
        filters = [("role", "=", role)] if role is not None else []
        if source is not None:
            filters.append(("source", "=", source))
        listed = self._listing_in_order(
            project,
            LIST_MESSAGES,
            before=None if before is None else message_listing_sk(*before),
            filters=filters,
            descending=True,
            page=max(limit, MIN_PAGE),
        )
        found: list[Message] = []
        for chunk in chunks(listed, max(limit, MIN_PAGE)):
            wanted = [(i["SK"]["S"].split("#", 1)[0], i["id"]["S"]) for i in chunk]
            items = self._batch_get([message_key(project, i) for _, i in wanted])
            by_id = {i["id"]["S"]: i for i in items}
            for recorded_at, message_id in wanted:
                item = by_id.get(message_id)
                # A listing item left by a write that never claimed its message (a
                # long message whose writer died) names another moment: skipped.
                if item is None or item["recorded_at"]["S"] != recorded_at:
                    continue
                found.append(message_of(item))
                if len(found) == limit:
                    return found
        return found
