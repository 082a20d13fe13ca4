"""One SQLite file shared by the embedded adapters (the store and the vector index):
a connection per thread (as sqlite3 requires), WAL so readers run beside the one
writer, and short IMMEDIATE write transactions that are all or nothing; and the one
migration step both need, adding the columns an older file lacks.

Deleted content is overwritten with zeros (`secure_delete` ON, on every connection:
the setting is per connection). FAST would not do: it leaves deleted content on
freelist pages. The WAL still holds older copies of every page it logged until it is
checkpointed and truncated: `purge()` does that, after an erasure."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

# One writer at a time per file within a process. SQLite would serialise writers
# anyway, but a thread that finds the file locked sleeps in SQLite's busy handler
# (1, 2, 5, 10, ... ms) however soon the lock is freed; waiting on this lock wakes
# it at once. Other processes (the CLI beside a server) still meet the busy timeout.
_WRITERS: dict[Path, threading.RLock] = {}
_WRITERS_LOCK = threading.Lock()
# Tries of a TRUNCATE checkpoint; each waits up to the busy timeout for readers.
_PURGE_TRIES = 3

logger = logging.getLogger(__name__)


def _writer_lock(path: Path) -> threading.RLock:
    key = path.resolve()
    with _WRITERS_LOCK:
        return _WRITERS.setdefault(key, threading.RLock())


def add_columns(db: sqlite3.Connection, table: str, columns: Sequence[tuple[str, str]]) -> None:
    """Add the (column, type)s a file made by an older version lacks: CREATE TABLE IF
    NOT EXISTS leaves an existing table as it is."""
    have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
    for column, kind in columns:
        if column not in have:
            try:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            except sqlite3.OperationalError as exc:
                if "duplicate column" not in str(exc):
                    raise  # another process added it first otherwise


class SqliteFile:
    def __init__(self, path: Path | str, schema: str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._writer = _writer_lock(self.path)
        # executescript commits as it goes; every statement of a schema is idempotent.
        self.db().executescript(schema)

    def db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA secure_delete=ON")
            self._local.db = db
        return db

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        db = self.db()
        with self._writer:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                # A failed COMMIT too: left open, the transaction would keep the file's
                # write lock and every later write on this thread would fail to BEGIN.
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise

    def purge(self) -> bool:
        """Rebuild the file, then copy the WAL into it and truncate the WAL to zero
        bytes, so that no older copy of a row or a page (holding what was deleted since)
        stays in either. Waits for readers (the busy timeout, a few times); returns
        whether the WAL was truncated."""
        db = self.db()
        with self._writer:
            # secure_delete zeroes a deleted cell, but a page rebalanced by the b-tree
            # keeps stale copies of cells it moved in its unused space (found by a byte
            # scan of the file): VACUUM writes every page anew, leaving none. Its
            # cost grows with the file (docs/erasure.md).
            try:
                db.execute("VACUUM")
            except sqlite3.OperationalError as error:
                logger.warning("%s could not be rebuilt after an erasure: %s", self.path, error)
            for _ in range(_PURGE_TRIES):
                busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                if not busy:
                    return True
        logger.warning("the WAL of %s could not be truncated: readers kept it busy", self.path)
        return False

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None
