"""The embedded store: one SQLite file that survives restarts (file.py: WAL, a
connection per thread, short IMMEDIATE write transactions, all or nothing).

SqliteStore is the domain's Store and CredentialStore: one part per port, each in the
module named as the port's (facts.py holds SqliteFactStore, the FactStore; names.py
SqliteNameLookup; ...; docs/architecture.md has the table), all over one SqliteFile
(base.SqlitePart), delegated to by composed_store.ComposedStore. reindex.py marks
everything for the worker again. Opening a file brings an older one up to date:
schema.py's added columns, name_keys.py's re-keying, and the erased vector ids an older
version left (erasure.py)."""

from __future__ import annotations

from pathlib import Path

from ...domain.model import ErasureRecord, StoreCapabilities
from ..composed_store import ComposedStore, MarkSwitches
from .aliases import SqliteAliasStore
from .credentials import SqliteCredentialStore
from .erasure import SqliteErasureStore
from .facts import SqliteFactStore
from .file import SqliteFile, add_columns, run_schema
from .listing import SqliteListingStore
from .messages import SqliteMessageStore
from .name_keys import migrate_name_keys, name_keys_current
from .names import SqliteNameLookup
from .projects import SqliteProjectReads
from .reindex import SqliteReindex
from .reports import SqliteReportStore
from .schema import ADDED_COLUMNS, INDEXES, SCHEMA
from .scope_erasure import SqliteScopeErasure
from .work import SqliteWorkMarks


class SqliteStore(ComposedStore):
    """Store and CredentialStore over one SQLite file."""

    # Reads are local and cheap in line; an erasure is completed in the request, in
    # one transaction.
    capabilities = StoreCapabilities()

    def __init__(
        self, path: Path | str, *, mark_vectors: bool = True, mark_extractions: bool = False
    ) -> None:
        self.switches = MarkSwitches(vectors=mark_vectors, extractions=mark_extractions)
        self.file = file = SqliteFile(path, SCHEMA)
        self.path = file.path
        db = file.db()
        for table, columns in ADDED_COLUMNS:
            add_columns(db, table, columns)
        run_schema(db, INDEXES)
        if not name_keys_current(db):  # keys of an older rule: name_keys.py
            with file.write() as db:
                migrate_name_keys(db, mark_vectors=mark_vectors)
        switches = self.switches
        self.fact_store = SqliteFactStore(file, switches)
        self.name_lookup = SqliteNameLookup(file, switches)
        self.alias_store = SqliteAliasStore(file, switches)
        self.message_store = messages = SqliteMessageStore(file, switches)
        self.listing_store = SqliteListingStore(file, switches)
        self.work_marks = SqliteWorkMarks(file, switches)
        self.report_store = SqliteReportStore(file, switches)
        self.project_reads = SqliteProjectReads(file, switches, messages)
        self.erasure_store = erasure = SqliteErasureStore(file, switches)
        self.credential_store = SqliteCredentialStore(file, switches)
        self.reindex = SqliteReindex(file, switches)
        self.scope_erasure = SqliteScopeErasure(file, switches)
        erasure.drain_erased_vectors()

    def mark_everything(self, project: str | None = None) -> int:
        """Mark every passage, fact and live name for indexing, and every entity for a
        report rebuild (reindex.py). Returns how many vector marks were written."""
        return self.reindex.mark_everything(project)

    def erase_scope(self, partition: str, tombstone: str, record: ErasureRecord) -> dict[str, int]:
        """Everything in one user's scope, erased now (scope_erasure.py)."""
        return self.scope_erasure.erase_scope(partition, tombstone, record)

    def release_request_holds(self) -> int:
        """Pending erasures held by requests of a server that stopped, let go
        (erasure.py): the local server calls it as it starts."""
        return self.erasure_store.release_request_holds()

    def close(self) -> None:
        self.file.close()
