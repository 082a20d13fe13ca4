"""The reports an erasure drops and the marks it leaves, the rule both stores apply.

Reports are per role (domain/reports.py: roles never mix). For each role, the reports
of every component holding an erased entity or an end of an erased fact of that role
are dropped at once (their text may name the entity), and their members are marked
dirty, so the worker rebuilds them from the facts that remain. The erased names are
not marked, and their marks go: a mark would keep the name in plain text until the
worker's pass. A store that cannot stop a rebuild which read the facts before the
erasure from writing after it (`mark_erased`) marks them instead, so that the
worker's next pass drops what such a rebuild wrote.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from .entity_counts import end_counts
from .model import ROLES, Role


def touched_by_erasure(
    entity_keys: Collection[str], facts: Iterable[tuple[Role, str, str | None]]
) -> dict[Role, set[str]]:
    """Per role, the entities whose components' reports go: the erased entities, and
    the ends of the erased facts of that role, given as (role, subject key, object key)."""
    touched: dict[Role, set[str]] = {role: set(entity_keys) for role in ROLES}
    for role, subject_key, object_key in facts:
        touched[role].update(end_counts(subject_key, object_key))
    return touched


@dataclass(frozen=True, slots=True)
class ReportMarks:
    """One role's dirty marks after its reports are dropped: to write, to delete."""

    mark: list[str]
    clear: list[str]


def report_marks(
    touched: Collection[str],
    members: Iterable[str],
    erased: Collection[str],
    *,
    mark_erased: bool = False,
) -> ReportMarks:
    """The marks for one role: the touched entities and the members of the reports
    dropped, but the erased names (see the module)."""
    everyone = set(touched).union(members)
    if mark_erased:
        return ReportMarks(sorted(everyone), [])
    return ReportMarks(sorted(everyone.difference(erased)), sorted(erased))
