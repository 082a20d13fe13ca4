"""Reads of a whole project, for erasure to find what names an entity
(domain/erasure.py, plan_erasure): from the project's listings (project_listings.py),
never a Scan of the table.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ...domain.model import Fact, Message, Passage
from .client import TableClient, parallel
from .codec import fact_of, message_of
from .keys import LIST_ENTITIES, LIST_FACTS, LIST_MESSAGES, message_key
from .messages import DynamoDbMessageStore
from .names import name_items, names_of
from .project_listings import listing, listing_page


class DynamoDbProjectReads:
    """Every fact, entity and message of a project."""

    def __init__(self, table: TableClient, messages: DynamoDbMessageStore) -> None:
        self.table = table
        self.messages = messages

    def project_facts(self, project: str) -> Iterator[Fact]:
        for item in listing(self.table, project, LIST_FACTS):
            yield fact_of(item)

    def project_entities(self, project: str) -> Iterator[str]:
        for key, _ in name_items(self.table, project):
            yield key

    def project_messages(self, project: str) -> Iterator[Message]:
        ids = [i["id"]["S"] for i in listing(self.table, project, LIST_MESSAGES)]
        for item in self.table._batch_get([message_key(project, i) for i in ids]):
            yield message_of(item)

    def entity_key_page(
        self, project: str, after: str | None, limit: int
    ) -> tuple[list[str], str | None]:
        listed, following = listing_page(self.table, project, LIST_ENTITIES, after, limit)
        keys = [i["k"]["S"] for i in listed]
        # A listed key whose name item is gone (erased, undone) is left out.
        held = names_of(self.table, project, keys) if keys else {}
        return [k for k in keys if k in held], following

    def fact_page(
        self, project: str, after: str | None, limit: int
    ) -> tuple[list[Fact], str | None]:
        listed, following = listing_page(self.table, project, LIST_FACTS, after, limit)
        return [fact_of(i) for i in listed], following

    def message_page_of_project(
        self, project: str, after: str | None, limit: int
    ) -> tuple[list[Message], str | None]:
        listed, following = listing_page(self.table, project, LIST_MESSAGES, after, limit)
        keys = [message_key(project, i["id"]["S"]) for i in listed]
        return [message_of(i) for i in self.table._batch_get(keys)], following

    def passages_of_messages(
        self, project: str, message_ids: Sequence[str]
    ) -> dict[str, list[Passage]]:
        """passages_of for several messages: their Queries in parallel."""
        ids = list(dict.fromkeys(message_ids))
        found = parallel(lambda m: self.messages.passages_of(project, m), ids)
        return dict(zip(ids, found, strict=True))
