"""Listings for the memory explorer (domain/listing.py): one page at a time, read
from the project's own records only (on DynamoDB, its listing partitions).
"""

from __future__ import annotations

from typing import Protocol

from ..model import EntityCounts, Message, Role


class ListingStore(Protocol):
    """Pages of entities and messages."""

    def entity_page(
        self, project: str, after: str | None, limit: int, contains: str | None
    ) -> list[EntityCounts]:
        """Up to `limit` entities named by a live fact (not aliases), by key (as UTF-8
        bytes), those after `after` only, whose key holds `contains` if given."""
        ...

    def message_page(
        self,
        project: str,
        before: tuple[str, str] | None,
        limit: int,
        role: Role | None,
        source: str | None,
    ) -> list[Message]:
        """Up to `limit` messages newest first: by (recorded_at, id) descending, only
        those before `before`, of this role and this source if given."""
        ...
