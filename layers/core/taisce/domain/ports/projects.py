"""Reads of a whole project, for erasure to find what names an entity."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from ..model import Fact, Message, Passage


class ProjectReads(Protocol):
    """Every fact, entity and message of a project (domain.erasure.plan_erasure)."""

    def project_facts(self, project: str) -> Iterator[Fact]:
        """Every fact of the project, each once, in no promised order."""
        ...

    def project_entities(self, project: str) -> Iterator[str]:
        """The key of every entity name held (live or not)."""
        ...

    def project_messages(self, project: str) -> Iterator[Message]: ...

    # Pages (domain/erasure_pages.py): each returns up to `limit` items from the
    # position `after` (an opaque string it returned before; None: the start) and
    # the position after them, None when the page was the last. The order is the
    # store's own and stable; items deleted or rewritten between pages shift nothing.

    def entity_key_page(
        self, project: str, after: str | None, limit: int
    ) -> tuple[list[str], str | None]:
        """Keys of the entity names held (live or not, aliases too), a page."""
        ...

    def fact_page(
        self, project: str, after: str | None, limit: int
    ) -> tuple[list[Fact], str | None]:
        """Facts of the project, each once, a page."""
        ...

    def message_page_of_project(
        self, project: str, after: str | None, limit: int
    ) -> tuple[list[Message], str | None]:
        """Messages of the project, a page."""
        ...

    def passages_of_messages(
        self, project: str, message_ids: Sequence[str]
    ) -> dict[str, list[Passage]]:
        """passages_of for each of these messages (read at once where the store can)."""
        ...
