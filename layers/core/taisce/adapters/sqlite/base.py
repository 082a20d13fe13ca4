"""What every capability of the embedded store works on: its file, a connection, a
write transaction, a plain-tuple scan, and the switches of the marks it writes. Each
capability module holds one mixin over this base; store.SqliteStore composes them."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path

from .file import SqliteFile


class SqliteBase:
    file: SqliteFile
    path: Path
    # Without an embedding model nothing would ever take the pending vector marks, so
    # the wiring turns them off rather than let them pile up.
    mark_vectors: bool
    # Likewise extraction marks: only with an extractor configured.
    mark_extractions: bool

    def _db(self) -> sqlite3.Connection:
        return self.file.db()

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self.file.write()

    def _scan(self, sql: str, params: tuple[object, ...]) -> sqlite3.Cursor:
        """A cursor of plain tuples: cheaper than sqlite3.Row for hot reads."""
        cursor = self._db().cursor()
        cursor.row_factory = None
        return cursor.execute(sql, params)

    def close(self) -> None:
        self.file.close()
