"""The embedded store: one SQLite file that survives restarts.

WAL mode lets readers run beside the one writer; every batch is written in one
short IMMEDIATE transaction, so it is all or nothing. Each thread has its own
connection, as sqlite3 requires.
"""

from __future__ import annotations

import heapq
import sqlite3
import threading
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields
from operator import itemgetter
from pathlib import Path
from typing import Any

from ..domain.model import Fact, Message, Passage, Role
from ..ports import Credential

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS facts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    project TEXT NOT NULL,
    id TEXT NOT NULL,
    subject TEXT NOT NULL,
    subject_key TEXT NOT NULL,
    predicate TEXT NOT NULL,
    object TEXT NOT NULL,
    object_kind TEXT NOT NULL,
    object_key TEXT,
    statement TEXT NOT NULL,
    source_role TEXT NOT NULL,
    quote TEXT,
    context TEXT,
    message_id TEXT,
    valid_from TEXT,
    valid_to TEXT,
    recorded_at TEXT NOT NULL,
    UNIQUE (project, id)
);
CREATE INDEX IF NOT EXISTS facts_by_subject ON facts (project, subject_key, seq);
CREATE INDEX IF NOT EXISTS facts_by_object ON facts (project, object_key, seq)
    WHERE object_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS entities (
    project TEXT NOT NULL,
    key TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (project, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    project TEXT NOT NULL,
    id TEXT NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    source TEXT,
    occurred_at TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    UNIQUE (project, id)
);
CREATE TABLE IF NOT EXISTS passages (
    project TEXT NOT NULL,
    id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    role TEXT NOT NULL,
    source TEXT,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    quote TEXT NOT NULL,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS passages_by_message ON passages (project, message_id, start);
CREATE TABLE IF NOT EXISTS credentials (
    hash TEXT PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL,
    label TEXT,
    created_at TEXT NOT NULL,
    revoked_at TEXT
) WITHOUT ROWID;
"""

_FACT_COLUMNS = (
    "id, subject, subject_key, predicate, object, object_kind, object_key, statement, "
    "source_role, quote, context, message_id, valid_from, valid_to, recorded_at"
)
# SQLite allows 32,766 bound variables; stay well below it per statement.
_CHUNK = 500


if tuple(f.name for f in fields(Fact)) != tuple(c.strip() for c in _FACT_COLUMNS.split(",")):
    raise RuntimeError("_FACT_COLUMNS must list Fact's fields in order")


def _fact(row: tuple[Any, ...]) -> Fact:
    """A fact from a plain row (seq, then the columns of Fact in order)."""
    return Fact(*row[1:])


class SqliteStore:
    """Store and CredentialStore over one SQLite file."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        # executescript commits as it goes; every statement is idempotent.
        self._db().executescript(
            _SCHEMA + "INSERT OR IGNORE INTO meta (key, value) "
            f"VALUES ('schema_version', '{SCHEMA_VERSION}');"
        )

    # -- connections -------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            self._local.db = db
        return db

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    # -- facts and entities -------------------------------------------------

    def put_facts(self, project: str, facts: Sequence[Fact]) -> None:
        with self._write() as db:
            for f in facts:
                # ON CONFLICT names the one conflict to skip (an id already stored):
                # OR IGNORE would also silently skip a row that breaks NOT NULL.
                inserted = db.execute(
                    f"INSERT INTO facts (project, {_FACT_COLUMNS}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (project, id) DO NOTHING",
                    (
                        project,
                        f.id,
                        f.subject,
                        f.subject_key,
                        f.predicate,
                        f.object,
                        f.object_kind,
                        f.object_key,
                        f.statement,
                        f.source_role,
                        f.quote,
                        f.context,
                        f.message_id,
                        f.valid_from,
                        f.valid_to,
                        f.recorded_at,
                    ),
                ).rowcount
                if not inserted:
                    continue
                names = [(f.subject_key, f.subject)]
                if f.object_key is not None:
                    names.append((f.object_key, f.object))
                db.executemany(
                    "INSERT OR IGNORE INTO entities (project, key, name) VALUES (?, ?, ?)",
                    [(project, key, name) for key, name in names],
                )

    def _scan(self, sql: str, params: tuple[object, ...]) -> sqlite3.Cursor:
        """A cursor of plain tuples: cheaper than sqlite3.Row for hot reads."""
        cursor = self._db().cursor()
        cursor.row_factory = None
        return cursor.execute(sql, params)

    def _facts_of_key(self, project: str, key: str, roles: Collection[Role]) -> Iterator[Fact]:
        # Two index range scans (subject side, object side), each already in storing
        # order, merged lazily: the caller stops reading once it has enough, so the
        # cost follows what the question touches, not the size of the store.
        marks = ",".join("?" * len(roles))
        scans = [
            self._scan(
                f"SELECT seq, {_FACT_COLUMNS} FROM facts "
                f"WHERE project = ? AND {column} = ? AND source_role IN ({marks}) "
                "ORDER BY seq",
                (project, key, *roles),
            )
            for column in ("subject_key", "object_key")
        ]
        for row in heapq.merge(*scans, key=itemgetter(0)):
            yield _fact(row)

    def facts_about(
        self,
        project: str,
        keys: Sequence[str],
        roles: Collection[Role],
        limit: int,
        exclude: Collection[str] = (),
    ) -> Iterator[Fact]:
        seen = set(exclude)
        count = 0
        if not roles or limit <= 0:
            return
        for key in keys:
            for fact in self._facts_of_key(project, key, roles):
                if fact.id not in seen:
                    seen.add(fact.id)
                    yield fact
                    count += 1
                    if count >= limit:
                        return

    def facts_with_subject(self, project: str, key: str) -> list[Fact]:
        rows = self._scan(
            f"SELECT seq, {_FACT_COLUMNS} FROM facts WHERE project = ? AND subject_key = ? "
            "ORDER BY seq",
            (project, key),
        )
        return [_fact(r) for r in rows]

    def delete_fact(self, project: str, fact_id: str) -> bool:
        with self._write() as db:
            return bool(
                db.execute(
                    "DELETE FROM facts WHERE project = ? AND id = ?", (project, fact_id)
                ).rowcount
            )

    def known_names(self, project: str, keys: Collection[str]) -> set[str]:
        wanted = list(keys)
        known: set[str] = set()
        for i in range(0, len(wanted), _CHUNK):
            chunk = wanted[i : i + _CHUNK]
            rows = self._db().execute(
                f"SELECT key FROM entities WHERE project = ? AND key IN "
                f"({','.join('?' * len(chunk))})",
                (project, *chunk),
            )
            known.update(r["key"] for r in rows)
        return known

    # -- messages and passages ------------------------------------------------

    def put_messages(
        self, project: str, messages: Sequence[Message], passages: Sequence[Passage]
    ) -> None:
        with self._write() as db:
            new: dict[str, Message] = {}
            for m in messages:
                if db.execute(
                    "INSERT INTO messages "
                    "(project, id, role, content, source, occurred_at, recorded_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project, id) DO NOTHING",
                    (project, m.id, m.role, m.content, m.source, m.occurred_at, m.recorded_at),
                ).rowcount:
                    new[m.id] = m
            # A message already stored keeps the passages it was split into; an id
            # repeated in the batch keeps the first copy and only passages of its text.
            rows: dict[str, tuple[object, ...]] = {}
            for p in passages:
                m = new.get(p.message_id)
                if m is not None and p.id not in rows and m.content[p.start : p.end] == p.quote:
                    rows[p.id] = (
                        project,
                        p.id,
                        p.message_id,
                        p.role,
                        p.source,
                        p.start,
                        p.end,
                        p.quote,
                    )
            db.executemany(
                'INSERT INTO passages (project, id, message_id, role, source, start, "end", '
                "quote) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                list(rows.values()),
            )

    def passages_of(self, project: str, message_id: str) -> list[Passage]:
        rows = self._db().execute(
            'SELECT id, message_id, role, source, start, "end", quote FROM passages '
            "WHERE project = ? AND message_id = ? ORDER BY start",
            (project, message_id),
        )
        return [Passage(**dict(r)) for r in rows]

    # -- credentials ---------------------------------------------------------

    def add_credential(self, credential: Credential, secret_hash: str) -> None:
        with self._write() as db:
            db.execute(
                "INSERT INTO credentials (hash, id, project, label, created_at, revoked_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    secret_hash,
                    credential.id,
                    credential.project,
                    credential.label,
                    credential.created_at,
                    credential.revoked_at,
                ),
            )

    def project_for(self, secret_hash: str) -> str | None:
        row = (
            self._db()
            .execute(
                "SELECT project FROM credentials WHERE hash = ? AND revoked_at IS NULL",
                (secret_hash,),
            )
            .fetchone()
        )
        return row["project"] if row else None

    def list_credentials(self, project: str | None = None) -> list[Credential]:
        query = "SELECT id, project, label, created_at, revoked_at FROM credentials"
        params: tuple[str, ...] = ()
        if project is not None:
            query += " WHERE project = ?"
            params = (project,)
        rows = self._db().execute(query + " ORDER BY created_at, id", params)
        return [Credential(**dict(r)) for r in rows]

    def revoke_credential(self, credential_id: str, revoked_at: str) -> bool:
        with self._write() as db:
            return bool(
                db.execute(
                    "UPDATE credentials SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                    (revoked_at, credential_id),
                ).rowcount
            )
