"""The recall filters as the store applies them: validity time, recording window and
subjects. Stores apply them in their queries (where they cut reads); `admits` is
the same rule in Python, for what a store cannot express in its query language.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import Fact, FactPointer
from .validity import sortable, valid_at


@dataclass(frozen=True, slots=True)
class FactFilter:
    """Which facts a recall may see.

    valid_at: only facts that hold at this moment (None: any validity).
    recorded_after / recorded_before: recorded_at in [after, before) (None: open).
    subjects: normalised names; only facts whose subject or entity object is one.
    """

    valid_at: str | None = None
    recorded_after: str | None = None
    recorded_before: str | None = None
    subjects: frozenset[str] | None = None

    def admits(self, fact: Fact | FactPointer) -> bool:
        if self.valid_at is not None and not valid_at(fact, self.valid_at):
            return False
        if not self.recorded_in(fact.recorded_at):
            return False
        return self.subjects is None or bool({fact.subject_key, fact.object_key} & self.subjects)

    def recorded_in(self, recorded_at: str) -> bool:
        at = sortable(recorded_at)
        if self.recorded_after is not None and at < sortable(self.recorded_after):
            return False
        return self.recorded_before is None or at < sortable(self.recorded_before)


@dataclass(frozen=True, slots=True)
class MessageFilter:
    """Which messages' passages a recall may see: those that occurred at or before
    `occurred_by` (a recall's as_of), recorded in [after, before)."""

    occurred_by: str | None = None
    recorded_after: str | None = None
    recorded_before: str | None = None

    @property
    def active(self) -> bool:
        return any((self.occurred_by, self.recorded_after, self.recorded_before))

    def admits(self, occurred_at: str, recorded_at: str) -> bool:
        if self.occurred_by is not None and sortable(occurred_at) > sortable(self.occurred_by):
            return False
        window = FactFilter(
            recorded_after=self.recorded_after, recorded_before=self.recorded_before
        )
        return window.recorded_in(recorded_at)
