"""The use cases behind the routes: store, list, delete and recall memory."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from ..ports import Store
from .controls import Limits, RecallRequest, resolve
from .errors import NotFound
from .ingest import (
    FactsRequest,
    MessagesRequest,
    make_fact,
    make_message,
    split_passages,
    timestamp,
)
from .names import normalize_name
from .recall import recall


def _now() -> datetime:
    return datetime.now(UTC)


class Memory:
    def __init__(
        self,
        store: Store,
        limits: Limits,
        *,
        embeddings: bool = False,
        clock: Callable[[], datetime] = _now,
    ) -> None:
        self.store = store
        self.limits = limits
        self.embeddings = embeddings
        self.clock = clock

    def store_facts(self, project: str, request: FactsRequest) -> list[str]:
        recorded_at = timestamp(self.clock())
        facts = [make_fact(given, recorded_at) for given in request.facts]
        self.store.put_facts(project, facts)
        return [f.id for f in facts]

    def facts_about_subject(self, project: str, subject: str) -> list[dict[str, object]]:
        return [f.wire() for f in self.store.facts_with_subject(project, normalize_name(subject))]

    def delete_fact(self, project: str, fact_id: str) -> None:
        if not self.store.delete_fact(project, fact_id):
            raise NotFound(f"no fact with id {fact_id!r}")

    def store_messages(self, project: str, request: MessagesRequest) -> list[str]:
        recorded_at = timestamp(self.clock())
        messages = [make_message(given, recorded_at) for given in request.messages]
        passages = [p for m in messages for p in split_passages(m)]
        self.store.put_messages(project, messages, passages)
        return [m.id for m in messages]

    def recall(self, project: str, request: RecallRequest) -> dict[str, object]:
        controls = resolve(request, self.limits)
        return recall(self.store, project, request.question, controls, embeddings=self.embeddings)
