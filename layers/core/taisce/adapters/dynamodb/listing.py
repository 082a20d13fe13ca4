"""The explorer's pages (domain/listing.py): the project's listing shards merged, each
sorted, in order (project_listings.py), then the records themselves read by
BatchGetItem.
"""

from __future__ import annotations

from itertools import groupby, product

from ...domain.model import ROLES, EntityCounts, Message, Role
from ...domain.scope import partitions
from .client import MIN_PAGE, TableClient, chunks
from .codec import ALIAS_OF, count_attribute, message_of
from .keys import (
    LIST_ENTITIES,
    LIST_MESSAGES,
    key_tail,
    listing_pks,
    message_key,
    message_listing_sk,
)
from .names import names_seen
from .project_listings import listing_in_order


class DynamoDbListingStore:
    """Pages of entities and messages."""

    def __init__(self, table: TableClient) -> None:
        self.table = table

    def entity_page(
        self, project: str, after: str | None, limit: int, contains: str | None
    ) -> list[EntityCounts]:
        listed = listing_in_order(
            self.table,
            project,
            LIST_ENTITIES,
            after=None if after is None else key_tail(after),
            filters=[("k", "contains", contains)] if contains else (),
            page=max(limit, MIN_PAGE),
        )
        found: list[EntityCounts] = []
        # A key both partitions list comes twice in a row: listed once.
        keys = (k for k, _ in groupby(i["k"]["S"] for i in listed))
        for chunk in chunks(keys, max(limit, MIN_PAGE)):
            seen = names_seen(self.table, project, chunk)
            for k in chunk:
                # An entity with no live fact (every fact deleted or erased, or merged
                # into another as an alias) is left out, as the embedded store leaves it;
                # held by both partitions, its counts are summed, the shared name kept.
                named = [i for i in seen.get(k, []) if "n" in i and ALIAS_OF not in i]
                counts: dict[Role, int] = {}
                for item, role in product(named, ROLES):
                    if count_attribute(role) in item:
                        n = int(item[count_attribute(role)]["N"])
                        counts[role] = counts.get(role, 0) + n
                if any(n > 0 for n in counts.values()):
                    found.append(EntityCounts(k, named[0]["n"]["S"], counts))
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
        listed = listing_in_order(
            self.table,
            project,
            LIST_MESSAGES,
            before=None if before is None else message_listing_sk(*before),
            filters=filters,
            descending=True,
            page=max(limit, MIN_PAGE),
        )
        found: list[Message] = []
        home = {pk: p for p in partitions(project) for pk in listing_pks(p, LIST_MESSAGES)}
        for chunk in chunks(listed, max(limit, MIN_PAGE)):
            wanted = [
                (home[i["PK"]["S"]], i["SK"]["S"].split("#", 1)[0], i["id"]["S"]) for i in chunk
            ]
            items = self.table._batch_get([message_key(p, i) for p, _, i in wanted])
            by_key = {i["PK"]["S"]: i for i in items}
            for partition, recorded_at, message_id in wanted:
                item = by_key.get(message_key(partition, message_id)["PK"]["S"])
                # A listing item left by a write that never claimed its message (a
                # long message whose writer died) names another moment: skipped.
                if item is None or item["recorded_at"]["S"] != recorded_at:
                    continue
                found.append(message_of(item))
                if len(found) == limit:
                    return found
        return found
