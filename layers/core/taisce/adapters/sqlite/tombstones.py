"""The tombstones an erasure leaves in the embedded store (keyed hashes of erased
names: a late write naming one is refused or dropped), read by erasure.py and by
reports.py (a report naming an erased entity is never written)."""

from __future__ import annotations

from .sql import MARKS, Execute, rows_in


def erased_hashes(execute: Execute, project: str, hashes: list[str]) -> set[str]:
    """Which of these subject hashes the project holds a tombstone for."""
    rows = rows_in(
        execute,
        f"SELECT hash FROM erased_subjects WHERE project = ? AND hash IN ({MARKS})",
        hashes,
        (project,),
    )
    return {r[0] for r in rows}
