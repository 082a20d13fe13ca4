"""Erasure (domain/erasure.py): one step that applies the plan, tombstones and the
audit record. Nothing here holds a name: tombstones and records are hashes
(erasure.subject_hash).

Erasure requests (docs/API.md, "Erasure"): recorded when accepted, completed in steps
by the request or the worker, finished once.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

from ..model import ErasurePlan, ErasureRecord, ErasureStatus, PendingErasure, VectorKind


class ErasureStore(Protocol):
    """Applying erasure plans, and the erasure requests' records."""

    def erase(self, project: str, plan: ErasurePlan) -> int:
        """Apply the plan: the tombstone, then delete its facts (with their name counts
        and report marks), its entities (names, role counts, pending vector marks),
        redact its messages (content and source rewritten, passages deleted or given
        the new source), drop the reports of every component its facts belonged to
        (marking their members for a rebuild) and record the ids of every vector to
        delete (or delete them, where the vector index shares the store's file). All or
        nothing, or in steps that a retry of the same erasure completes. Returns how
        many reports were dropped."""
        ...

    def remove_aliases(self, project: str, keys: Collection[str]) -> int:
        """Forget every alias whose own name or whose entity is one of `keys` (erasure);
        returns how many went."""
        ...

    def add_tombstones(self, project: str, hashes: Collection[str], at: str | None = None) -> None:
        """A tombstone for each of these subject hashes (erase writes its plan's own):
        from then on a write naming one is refused or dropped. Written before the
        erasure is recorded, so an extraction cannot bring the entity back meanwhile.
        `at`: when (a user's scope erased: a guarded write of what was recorded before
        is refused, domain/scope.py ScopeGuard), where the store keeps the time there."""
        ...

    def erased(self, project: str, hashes: Collection[str]) -> set[str]:
        """Which of these subject hashes have a tombstone."""
        ...

    def clear_erased(self, project: str, hashes: Collection[str]) -> None: ...

    def erased_vectors(self, project: str) -> list[tuple[VectorKind, str]]:
        """Vectors of erased items still to delete from the VectorIndex."""
        ...

    def clear_erased_vectors(
        self, project: str, items: Sequence[tuple[VectorKind, str]]
    ) -> None: ...

    def erasures(self, project: str | None = None) -> list[ErasureRecord]:
        """Audit records, oldest first."""
        ...

    def begin_erasure(self, pending: PendingErasure) -> None:
        """Record an accepted erasure durably (and list its project for the worker)."""
        ...

    def pending_erasure(self, project: str, erasure_id: str) -> PendingErasure | None: ...

    def pending_erasures(self, project: str) -> list[PendingErasure]:
        """The project's erasures not finished, oldest first (recall hides their names)."""
        ...

    def erasing_projects(self) -> list[str]:
        """Projects with an erasure not finished (the worker's and the sweep's list)."""
        ...

    def claim_erasure(
        self, project: str, erasure_id: str, holder: str, now: float, until: float
    ) -> bool:
        """Make `holder` the one working on a pending erasure until `until` (seconds
        since the epoch), at once: True if it was unheld, held by `holder`, or its
        holder's time had ended at `now`; False, changing nothing, otherwise (or if it
        is no longer pending). An `until` already past lets it go."""
        ...

    def add_erasure_counts(
        self, project: str, erasure_id: str, counts: dict[str, int], cursor: str | None = None
    ) -> None:
        """Add what one step removed to the pending erasure's counts and, if given,
        set where its plan stands (PendingErasure.cursor), both at once."""
        ...

    def finish_erasure(self, record: ErasureRecord, requested_at: str) -> bool:
        """At once: the pending erasure goes (with its names), its status becomes done
        with the record's counts, and the audit record is written. False, changing
        nothing, if it was no longer pending (a retry or a duplicate finished it): the
        audit record is written once."""
        ...

    def erasure_status(self, project: str, erasure_id: str) -> ErasureStatus | None:
        """Pending or done, None for an id the project never had."""
        ...
