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

    def passages_of_messages(
        self, project: str, message_ids: Sequence[str]
    ) -> dict[str, list[Passage]]:
        """passages_of for each of these messages (read at once where the store can)."""
        ...
