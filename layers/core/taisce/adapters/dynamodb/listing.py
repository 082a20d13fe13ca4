"""The explorer's pages (domain/listing.py): the project's listing shards merged, each
sorted, in order (project_listings.py), then the records themselves read by
BatchGetItem.
"""

from __future__ import annotations

from ...domain.model import ROLES, EntityCounts, Message, Role
from .client import MIN_PAGE, TableClient, chunks
from .codec import ALIAS_OF, count_attribute, message_of
from .keys import (
    LIST_ENTITIES,
    LIST_MESSAGES,
    entity_pk,
    key_tail,
    message_key,
    message_listing_sk,
    name_key,
)
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
        for chunk in chunks(listed, max(limit, MIN_PAGE)):
            keys = [i["k"]["S"] for i in chunk]
            items = self.table._batch_get([name_key(project, k) for k in keys])
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
        for chunk in chunks(listed, max(limit, MIN_PAGE)):
            wanted = [(i["SK"]["S"].split("#", 1)[0], i["id"]["S"]) for i in chunk]
            items = self.table._batch_get([message_key(project, i) for _, i in wanted])
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
