"""The memory as the API answers it: the domain's use cases (domain/memory.py), each
read giving its HTTP body (api/bodies.py) rather than the domain's records.

The handlers, the local tools and the tests call this; the domain's record-returning
methods keep names of their own, so no method changes its return type here.
"""

from __future__ import annotations

from typing import Any

from ..domain.aliases import MergeRequest
from ..domain.controls import RecallRequest
from ..domain.memory import Memory as UseCases
from ..domain.model import Role
from . import bodies


class Memory(UseCases):
    def facts_about_subject(self, project: str, subject: str) -> list[dict[str, Any]]:
        return [bodies.fact(f) for f in self.facts_of_subject(project, subject)]

    def list_entities(
        self, project: str, search: str | None, limit: int | None, cursor: str | None
    ) -> dict[str, Any]:
        return bodies.entity_list(self.entity_page(project, search, limit, cursor))

    def list_messages(
        self,
        project: str,
        role: Role | None,
        source: str | None,
        limit: int | None,
        cursor: str | None,
        passages: bool = False,
    ) -> dict[str, Any]:
        page = self.message_page(project, role, source, limit, cursor, passages)
        return bodies.message_list(page)

    def message_with_passages(self, project: str, message_id: str) -> dict[str, Any]:
        return bodies.message_with_passages(self.shown_message(project, message_id))

    def neighbourhood(self, project: str, name: str, hops: int) -> dict[str, Any]:
        return bodies.neighbourhood(self.neighbourhood_of(project, name, hops))

    def merge_entities(self, project: str, request: MergeRequest) -> dict[str, Any]:
        return bodies.merged(self.merge(project, request))

    def aliases(self, project: str) -> dict[str, Any]:
        return bodies.aliases(self.alias_list(project))

    def merge_proposals(self, project: str) -> dict[str, Any]:
        return bodies.proposals(self.proposals(project))

    def recall(self, project: str, request: RecallRequest) -> dict[str, Any]:
        return bodies.recall(self.recall_answer(project, request))
