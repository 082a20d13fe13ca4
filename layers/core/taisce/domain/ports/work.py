"""Work marks: what the worker has still to do, written with the records.

Vectors: storing a passage, or a name new to a role, writes a pending mark in the
same transaction; a worker embeds the marks in batches and clears them.

Reports: a fact written or deleted marks its entities dirty (per role) in the same
transaction; a worker later reads the marks, rebuilds their reports and clears exactly
the marks it read (a mark rewritten meanwhile stays).

Extraction (messages -> facts): with an extractor configured, storing a message new to
the store writes a pending extraction mark in the same transaction. A worker extracts
the message, stores its facts (put_facts), then clears the mark; after the last failed
attempt the mark is replaced by a failure record, in one transaction, until replayed.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

from ..model import ExtractionFailure, PendingVector, Role, VectorKind


class WorkMarks(Protocol):
    """Pending vector, report and extraction marks, per project."""

    def vector_projects(self) -> list[str]:
        """Projects with pending vectors."""
        ...

    def pending_vectors(self, project: str, limit: int) -> list[PendingVector]: ...

    def clear_pending_vectors(self, project: str, items: Sequence[PendingVector]) -> None:
        """Clear these marks (a mark rewritten since with other text stays)."""
        ...

    def vector_marks(
        self, project: str, items: Sequence[tuple[VectorKind, str]]
    ) -> list[PendingVector]:
        """The pending marks of these (kind, id) items; an item without one is left
        out (stored before, or embedded already). Read consistently: a request embeds
        the marks its own write has just made."""
        ...

    def dirty_projects(self) -> list[str]: ...

    def dirty_entities(self, project: str) -> list[tuple[Role, str, str]]:
        """(role, entity key, token) of each mark."""
        ...

    def clear_dirty(self, project: str, marks: Sequence[tuple[Role, str, str]]) -> None: ...

    def extraction_projects(self) -> list[str]:
        """Projects with messages waiting for extraction."""
        ...

    def pending_extractions(self, project: str, limit: int) -> list[str]:
        """Ids of messages waiting for extraction, at most `limit`."""
        ...

    def extraction_pending(self, project: str, message_id: str) -> bool: ...

    def finish_extraction(
        self, project: str, message_id: str, failure: ExtractionFailure | None = None
    ) -> None:
        """Clear the message's mark; with a failure, record it in the same write."""
        ...

    def failed_extractions(self, project: str | None = None) -> list[ExtractionFailure]:
        """Failure records, of one project or of all, by project and message id."""
        ...

    def replay_extractions(
        self, project: str | None = None, message_ids: Collection[str] | None = None
    ) -> list[ExtractionFailure]:
        """Turn these failure records (all, or of one project, or these messages) back
        into pending marks, each in one write. Returns the records replayed."""
        ...
