"""One SQLite file shared by the embedded adapters (the store and the vector index):
a connection per thread (as sqlite3 requires), WAL so readers run beside the one
writer, and short IMMEDIATE write transactions that are all or nothing; and the one
migration step both need, adding the columns an older file lacks.

Deleted content is overwritten with zeros (`secure_delete` ON, on every connection:
the setting is per connection). FAST would not do: it leaves deleted content on
freelist pages. Copies of moved cells stay in pages' unused space, and the WAL holds
older copies of every page it logged until it is checkpointed and truncated:
`purge()` rebuilds the file and truncates the WAL, after an erasure.

A full disk refuses writes, not reads: a write that meets SQLITE_FULL raises
StorageFull (507 insufficient_storage), rolled back whole; opening a file whose tables
all exist needs no space, so a server restarted on a full disk still serves reads.
Reading a WAL file needs its shared-memory index (`-shm`, 32 KB), which goes with the
last connection: on a disk that filled while nothing had the file open even a read
fails ("disk I/O error"). So a reserve of RESERVE_BYTES is kept beside the file and
given up when an open meets a full disk."""

from __future__ import annotations

import logging
import os
import re
import shutil
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ...domain.errors import StorageFull

# One writer at a time per file within a process. SQLite would serialise writers
# anyway, but a thread that finds the file locked sleeps in SQLite's busy handler
# (1, 2, 5, 10, ... ms) however soon the lock is freed; waiting on this lock wakes
# it at once. Other processes (the CLI beside a server) still meet the busy timeout.
_WRITERS: dict[Path, threading.RLock] = {}
_WRITERS_LOCK = threading.Lock()
# Tries of a TRUNCATE checkpoint; each waits up to the busy timeout for readers.
_PURGE_TRIES = 3

logger = logging.getLogger(__name__)

# SQLite's primary result code for "database or disk is full" (a full disk, or the
# file at its max_page_count).
SQLITE_FULL = 13
FULL_MESSAGE = (
    "the server's disk is full: nothing was written; reads and recalls still work. "
    "Send it again once space is freed"
)
# Space kept beside the file (`<file>.reserve`, zeros) for the WAL's index (32 KB) and
# header, released when an open fails on a full disk, made again by a later open with
# room. What the open leaves of it takes a few small writes until the disk is full again.
RESERVE_BYTES = 256 * 1024
# SQLite's primary result code for an I/O error: what a read meets when the WAL's index
# cannot be made.
SQLITE_IOERR = 10
_CREATED = re.compile(
    r"CREATE\s+(?:UNIQUE\s+|VIRTUAL\s+)?(?:TABLE|INDEX|TRIGGER|VIEW)\s+IF\s+NOT\s+EXISTS\s+(\w+)",
    re.IGNORECASE,
)


def is_full(exc: BaseException) -> bool:
    """Whether `exc` is SQLite saying the disk (or the file's page limit) is full."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.Error) and code is not None and code & 0xFF == SQLITE_FULL


def _no_room(exc: BaseException) -> bool:
    """Whether an open may have failed for want of space (full, or the WAL's index
    not made)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return is_full(exc) or (
        isinstance(exc, sqlite3.Error) and code is not None and code & 0xFF == SQLITE_IOERR
    )


def missing_objects(db: sqlite3.Connection, script: str) -> list[str]:
    """The tables, indexes and triggers `script` creates that the file lacks."""
    have = {str(r[0]) for r in db.execute("SELECT name FROM sqlite_master")}
    return [name for name in _CREATED.findall(script) if name not in have]


def run_schema(db: sqlite3.Connection, script: str) -> None:
    """Run an idempotent schema script. On a full disk, a file that already has
    everything it creates is used as it is (reads need no space); one that lacks
    something cannot be made and says so."""
    try:
        # executescript commits as it goes; every statement of a schema is idempotent.
        db.executescript(script)
    except sqlite3.Error as exc:
        if not is_full(exc):
            raise
        if db.in_transaction:
            db.execute("ROLLBACK")
        lacking = missing_objects(db, script)
        if lacking:
            raise StorageFull(
                f"the disk is full: the store's tables ({', '.join(lacking[:3])}) cannot be created"
            ) from exc
        logger.warning("the disk is full: the store opened for reads; writes are refused")


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
        self.reserve = self.path.with_name(self.path.name + ".reserve")
        try:
            run_schema(self.db(), schema)
        except sqlite3.Error as exc:
            if not _no_room(exc):
                raise
            if not self._release_reserve():
                if shutil.disk_usage(self.path.parent).free >= RESERVE_BYTES:
                    raise  # not for want of space
                raise StorageFull(
                    "the disk is full: the store cannot be opened, even to read (SQLite "
                    "needs 32 KB beside the file for its WAL index)"
                ) from exc
            self.close()
            run_schema(self.db(), schema)
        self._keep_reserve()

    def _release_reserve(self) -> bool:
        """Give the reserve's space back to SQLite; False if there was none."""
        try:
            self.reserve.unlink()
        except FileNotFoundError:
            return False
        logger.warning("the disk is full: the store's reserve was released to open it")
        return True

    def _keep_reserve(self) -> None:
        """Make the reserve if it is missing and there is room (never a partial one)."""
        if self.reserve.exists():
            return
        made = f"{self.reserve.name}.{os.getpid()}.{threading.get_ident()}"
        partial = self.reserve.with_name(made)
        try:
            with open(partial, "wb") as out:
                out.write(bytes(RESERVE_BYTES))  # not synced: a start remakes it if lost
            os.replace(partial, self.reserve)
        except OSError:
            partial.unlink(missing_ok=True)

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
            except BaseException as exc:
                # A failed COMMIT too: left open, the transaction would keep the file's
                # write lock and every later write on this thread would fail to BEGIN.
                if db.in_transaction:
                    db.execute("ROLLBACK")
                if is_full(exc):
                    raise StorageFull(FULL_MESSAGE) from exc
                raise

    def purge(self) -> bool:
        """Rebuild the file (VACUUM), then copy the WAL into it and truncate the WAL to
        zero bytes, so that no copy of what was deleted stays anywhere in the folder.

        The rebuild is needed because secure_delete zeroes a deleted cell but not the
        copies SQLite leaves in a page's unused space when it moves cells between pages
        (rebalancing a b-tree as rows come and go): in a store of a few hundred
        messages, whole erased sentences stayed in live pages of facts, passages and
        the full-text index. VACUUM writes every page afresh from the live rows (it
        keeps every explicit INTEGER PRIMARY KEY, which the full-text index's rows are
        named by). It costs a copy of the file (docs/reliability.md has the figures),
        and needs room for one: on a full disk it is skipped and said, and the next
        erasure's purge does it. Waits for readers (the busy timeout, a few times);
        returns whether the WAL was truncated."""
        db = self.db()
        with self._writer:
            try:
                db.execute("VACUUM")
            except sqlite3.Error as exc:
                logger.warning(
                    "the file %s could not be rebuilt after an erasure: %s",
                    self.path.name,
                    "disk full" if is_full(exc) else type(exc).__name__,
                )
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
