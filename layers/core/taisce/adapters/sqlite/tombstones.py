"""What an erasure leaves behind in the embedded store: tombstones (keyed hashes of
erased names: a late write naming one is refused or dropped), and the vector ids an
older version recorded for deleting later (none are written now: erase() deletes the
vectors in its own transaction)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ...domain.model import VectorKind
from .base import SqliteBase
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


class SqliteTombstones(SqliteBase):
    def add_tombstones(self, project: str, hashes: Collection[str]) -> None:
        with self._write() as db:
            db.executemany(
                "INSERT OR IGNORE INTO erased_subjects (project, hash) VALUES (?, ?)",
                [(project, h) for h in dict.fromkeys(hashes)],
            )

    def erased(self, project: str, hashes: Collection[str]) -> set[str]:
        return erased_hashes(self._db().execute, project, list(hashes))

    def clear_erased(self, project: str, hashes: Collection[str]) -> None:
        with self._write() as db:
            db.executemany(
                "DELETE FROM erased_subjects WHERE project = ? AND hash = ?",
                [(project, h) for h in hashes],
            )

    def erased_vectors(self, project: str) -> list[tuple[VectorKind, str]]:
        rows = self._db().execute(
            "SELECT kind, id FROM erased_vectors WHERE project = ? ORDER BY kind, id", (project,)
        )
        return [(r[0], r[1]) for r in rows]

    def clear_erased_vectors(self, project: str, items: Sequence[tuple[VectorKind, str]]) -> None:
        with self._write() as db:
            db.executemany(
                "DELETE FROM erased_vectors WHERE project = ? AND kind = ? AND id = ?",
                [(project, kind, i) for kind, i in items],
            )
