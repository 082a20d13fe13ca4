"""Facts: storing, reading by entity, deleting."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from typing import Protocol

from ..filters import FactFilter
from ..model import Fact, FactPointer, Role
from ..scope import ScopeGuard


class FactStore(Protocol):
    """A project's facts, read by the entities they name."""

    def put_facts(
        self, project: str, facts: Sequence[Fact], guard: ScopeGuard | None = None
    ) -> dict[str, str]:
        """Store new facts; in the same transaction, close what they contradict.

        With a guard, nothing is stored if the user's scope was erased at or after the
        guard's time (its tombstone, checked in the write): ScopeErased is raised.

        A fact identical to a live fact of the project, or to an earlier one of the
        batch (domain/fact_identity.py), is not stored: the answer maps its id to the
        id of the fact that stands for it. This holds under concurrent writers.

        The stored facts that share a new fact's subject, role and single-valued
        predicate go through `domain.validity.plan_closings` with the batch (new
        facts only: an id already stored changes nothing), and the stored facts it
        closes get their `valid_to` with the batch, all or nothing.
        """
        ...

    def facts_about(
        self,
        project: str,
        keys: Sequence[str],
        roles: Collection[Role],
        limit: int,
        exclude: Collection[str] = (),
        filters: FactFilter | None = None,
    ) -> Iterator[Fact]:
        """Facts whose subject or entity object is one of `keys`, said by one of `roles`.

        Grouped by key in the order given, each group in storing order, each fact
        once, none in `exclude`, only those `filters` admit, at most `limit` in all.
        Lazy: a recall stops reading when its bundle closes, so an adapter should
        fetch as it is read, and apply `filters` in its query.
        """
        ...

    def facts_with_subject(self, project: str, key: str) -> list[Fact]:
        """Every fact with this subject, closed ones too, in storing order."""
        ...

    def subject_page(
        self, project: str, key: str, after: str | None, limit: int
    ) -> list[tuple[str, Fact]]:
        """Up to `limit` facts with this subject, closed ones too, in storing order,
        each with its place in that order (an opaque string), those after the place
        `after` only."""
        ...

    def delete_fact(self, project: str, fact_id: str) -> bool: ...

    def held_facts(self, project: str, ids: Collection[str]) -> set[str]:
        """Which of these fact ids the store still holds (for the worker: a vector
        written for a fact deleted or erased meanwhile is deleted again)."""
        ...

    def fact_pointers(self, project: str, ids: Sequence[str]) -> list[FactPointer]:
        """The pointers of the facts of these ids the store still holds, in the order
        given (unknown ids left out); the caller applies roles and filters."""
        ...

    def facts_by_ids(self, project: str, ids: Sequence[str]) -> list[Fact]:
        """The facts of these ids the store still holds, whole, in the order given
        (unknown ids left out): a search's matches (service/memory.py)."""
        ...
