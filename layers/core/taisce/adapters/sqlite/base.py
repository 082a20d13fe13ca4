"""What every part of the embedded store works on: its file (a connection, a write
transaction, a plain-tuple scan) and the switches of the work marks it writes. Each
part (one per port, in the module named as the port's) is built over one of these;
store.SqliteStore holds them and delegates to them."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager

from ..composed_store import MarkSwitches
from .file import SqliteFile


class SqlitePart:
    def __init__(self, file: SqliteFile, switches: MarkSwitches) -> None:
        self.file = file
        self.switches = switches

    def _db(self) -> sqlite3.Connection:
        return self.file.db()

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self.file.write()

    def _scan(self, sql: str, params: tuple[object, ...]) -> sqlite3.Cursor:
        """A cursor of plain tuples: cheaper than sqlite3.Row for hot reads."""
        cursor = self._db().cursor()
        cursor.row_factory = None
        return cursor.execute(sql, params)
