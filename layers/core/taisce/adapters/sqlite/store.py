"""The embedded store: one SQLite file that survives restarts (file.py: WAL, a
connection per thread, short IMMEDIATE write transactions, all or nothing).

SqliteStore is the domain's Store and CredentialStore, composed of one mixin per
capability, each in its own module over base.SqliteBase: facts, names (entities,
aliases, name listings), messages (and passages), marks (work for the worker),
reports, erasure, tombstones, credentials. Opening a file brings an older one up to
date: schema.py's added columns, name_keys.py's re-keying, and the erased vector ids
an older version left (erasure.py)."""

from __future__ import annotations

from pathlib import Path

from ...domain.model import StoreCapabilities
from .credentials import SqliteCredentials
from .erasure import SqliteErasure
from .facts import SqliteFacts
from .file import SqliteFile, add_columns
from .marks import SqliteMarks
from .messages import SqliteMessages
from .name_keys import migrate_name_keys, name_keys_current
from .names import SqliteNames
from .reports import SqliteReports
from .schema import ADDED_COLUMNS, SCHEMA
from .tombstones import SqliteTombstones


class SqliteStore(
    SqliteFacts,
    SqliteNames,
    SqliteMessages,
    SqliteMarks,
    SqliteReports,
    SqliteErasure,
    SqliteTombstones,
    SqliteCredentials,
):
    """Store and CredentialStore over one SQLite file."""

    # Reads are local and cheap in line; an erasure is completed in the request, in
    # one transaction.
    capabilities = StoreCapabilities()

    def __init__(
        self, path: Path | str, *, mark_vectors: bool = True, mark_extractions: bool = False
    ) -> None:
        self.mark_vectors = mark_vectors
        self.mark_extractions = mark_extractions
        self.file = SqliteFile(path, SCHEMA)
        self.path = self.file.path
        for table, columns in ADDED_COLUMNS:
            add_columns(self._db(), table, columns)
        if not name_keys_current(self._db()):  # keys of an older rule: name_keys.py
            with self._write() as db:
                migrate_name_keys(db, mark_vectors=mark_vectors)
        self._drain_erased_vectors()
