"""The embedded store: one SQLite file that survives restarts.

WAL mode lets readers run beside the one writer; every batch is written in one
short IMMEDIATE transaction, so it is all or nothing. Each thread has its own
connection, as sqlite3 requires.
"""

from __future__ import annotations

import heapq
import json
import sqlite3
import uuid
from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import fields
from operator import itemgetter
from pathlib import Path
from typing import Any

from ..domain.aliases import Alias, EntityName, MergeResult, NameState, plan_merge, rekeyed
from ..domain.erasure import (
    COUNTS,
    ErasurePlan,
    ErasureRecord,
    ErasureStatus,
    PendingErasure,
    tombstone_hashes,
)
from ..domain.filters import FactFilter, MessageFilter
from ..domain.listing import EntityCounts
from ..domain.model import ROLES, Fact, FactPointer, Message, Passage, Role
from ..domain.reports import Report
from ..domain.validity import contradiction_key, plan_closings, sortable, start_of
from ..ports import Credential, ExtractionFailure, PendingVector, VectorKind
from . import sqlite_vectors
from .sqlite_file import SqliteFile
from .sqlite_name_keys import migrate_name_keys, name_keys_current

SCHEMA_VERSION = 6

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
    quote_start INTEGER,
    quote_end INTEGER,
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
CREATE TABLE IF NOT EXISTS entity_roles (
    project TEXT NOT NULL,
    key TEXT NOT NULL,
    role TEXT NOT NULL,
    -- How many facts of this role name the entity: a name is found in a question
    -- only for the roles asked for, so what was not asked for cannot shape it.
    facts INTEGER NOT NULL,
    PRIMARY KEY (project, key, role)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pending_vectors (
    project TEXT NOT NULL,
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    text TEXT NOT NULL,
    role TEXT,
    -- Written with the record it indexes, cleared once its vector is stored: storing
    -- never waits on the model, and a failed embedding is retried, never lost.
    PRIMARY KEY (project, kind, id)
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
-- The next storing position of each project's messages (messages.position): one
-- row, updated once per storing request, inside its transaction.
CREATE TABLE IF NOT EXISTS message_positions (
    project TEXT PRIMARY KEY,
    next INTEGER NOT NULL
) WITHOUT ROWID;
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
-- The explorer's message listing: newest first, a page at a time.
CREATE INDEX IF NOT EXISTS messages_by_recorded ON messages (project, recorded_at, id);
CREATE TABLE IF NOT EXISTS dirty_entities (
    project TEXT NOT NULL,
    role TEXT NOT NULL,
    key TEXT NOT NULL,
    -- A new token on every write: a rebuild clears only the marks it read, so a
    -- write that lands during the rebuild stays marked.
    token TEXT NOT NULL,
    PRIMARY KEY (project, role, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS reports (
    project TEXT NOT NULL,
    id TEXT NOT NULL,
    role TEXT NOT NULL,
    level INTEGER NOT NULL,
    parent_id TEXT,
    title TEXT NOT NULL,
    summary TEXT NOT NULL,
    path TEXT NOT NULL,
    source_messages TEXT NOT NULL,
    entity_keys TEXT NOT NULL,
    component TEXT NOT NULL,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS reports_by_component ON reports (project, role, component);
CREATE TABLE IF NOT EXISTS report_members (
    project TEXT NOT NULL,
    role TEXT NOT NULL,
    key TEXT NOT NULL,
    report_id TEXT NOT NULL,
    PRIMARY KEY (project, role, key, report_id)
) WITHOUT ROWID;
-- Extraction: a mark per message waiting for it, written with the message; a
-- failure record replaces the mark after the last failed attempt, until replayed.
CREATE TABLE IF NOT EXISTS pending_extractions (
    project TEXT NOT NULL,
    message_id TEXT NOT NULL,
    PRIMARY KEY (project, message_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS failed_extractions (
    project TEXT NOT NULL,
    message_id TEXT NOT NULL,
    error TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    failed_at TEXT NOT NULL,
    PRIMARY KEY (project, message_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS credentials (
    hash TEXT PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL,
    label TEXT,
    created_at TEXT NOT NULL,
    revoked_at TEXT
) WITHOUT ROWID;
"""

# Entity aliases (domain/aliases.py): `key` is another name of the entity `target`,
# which is never itself an alias; `name` is the alias as first written.
_ALIAS_SCHEMA = """
CREATE TABLE IF NOT EXISTS aliases (
    project TEXT NOT NULL,
    key TEXT NOT NULL,
    name TEXT NOT NULL,
    target TEXT NOT NULL,
    PRIMARY KEY (project, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS aliases_by_target ON aliases (project, target);
"""

# Erasure (domain/erasure.py): tombstones, the audit record. Neither holds a name:
# subjects are hashes of the project and the normalised name. `erased_vectors` is no
# longer written (the vectors go in the erasure's transaction: they are in this file);
# rows an older version left there (entity ids hold names) are drained by erase().
_ERASURE_SCHEMA = """
CREATE TABLE IF NOT EXISTS erased_subjects (
    project TEXT NOT NULL,
    hash TEXT NOT NULL,
    PRIMARY KEY (project, hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS erased_vectors (
    project TEXT NOT NULL,
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    PRIMARY KEY (project, kind, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS erasures (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL,
    subject_hash TEXT NOT NULL,
    erased_at TEXT NOT NULL,
    facts INTEGER NOT NULL,
    entities INTEGER NOT NULL,
    messages INTEGER NOT NULL,
    passages INTEGER NOT NULL,
    reports INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS erasure_requests (
    project TEXT NOT NULL,
    id TEXT NOT NULL,
    subject_hash TEXT NOT NULL,
    names TEXT NOT NULL,
    requested_at TEXT NOT NULL,
    facts INTEGER NOT NULL DEFAULT 0,
    entities INTEGER NOT NULL DEFAULT 0,
    messages INTEGER NOT NULL DEFAULT 0,
    passages INTEGER NOT NULL DEFAULT 0,
    reports INTEGER NOT NULL DEFAULT 0,
    holder TEXT,
    held_until REAL,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
"""

_MARK_DIRTY = (
    "INSERT INTO dirty_entities (project, role, key, token) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (project, role, key) DO UPDATE SET token = excluded.token"
)
_PENDING = (
    "INSERT INTO pending_vectors (project, kind, id, text, role) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (project, kind, id) DO UPDATE SET text = excluded.text, role = excluded.role"
)
_PENDING_PASSAGE = (
    "INSERT INTO pending_vectors (project, kind, id, text, role, position, occurred_at) "
    "VALUES (?, 'passage', ?, ?, ?, ?, ?) ON CONFLICT (project, kind, id) DO UPDATE SET "
    "text = excluded.text, role = excluded.role, position = excluded.position, "
    "occurred_at = excluded.occurred_at"
)
_FACT_COLUMNS = (
    "id, subject, subject_key, predicate, object, object_kind, object_key, statement, "
    "source_role, quote, context, message_id, valid_from, valid_to, recorded_at, "
    "quote_start, quote_end"
)
_POINTER_COLUMNS = ", ".join(FactPointer._fields)
# Columns added after a file may have been created (schema 6): (column, type).
_ADDED_FACT_COLUMNS = (("quote_start", "INTEGER"), ("quote_end", "INTEGER"))
# SQLite allows 32,766 bound variables; stay well below it per statement.
_CHUNK = 500


if tuple(f.name for f in fields(Fact)) != tuple(c.strip() for c in _FACT_COLUMNS.split(",")):
    raise RuntimeError("_FACT_COLUMNS must list Fact's fields in order")


def _sortable(column: str) -> str:
    """SQL for `domain.validity.sortable` of a timestamp column: the short form
    "...:SSZ" gains ".000000" so that text order is time order."""
    return (
        f"(CASE WHEN length({column}) = 20 THEN substr({column}, 1, 19) || '.000000Z' "
        f"ELSE {column} END)"
    )


def _fact_filter_sql(filters: FactFilter | None) -> tuple[str, list[object]]:
    """The recall filters as extra WHERE conditions on facts (see domain/filters.py)."""
    if filters is None:
        return "", []
    where: list[str] = []
    params: list[object] = []
    if filters.valid_at is not None:
        at = sortable(filters.valid_at)
        where.append(f"(valid_from IS NULL OR {_sortable('valid_from')} <= ?)")
        where.append(f"(valid_to IS NULL OR {_sortable('valid_to')} > ?)")
        params += [at, at]
    if filters.recorded_after is not None:
        where.append(f"{_sortable('recorded_at')} >= ?")
        params.append(sortable(filters.recorded_after))
    if filters.recorded_before is not None:
        where.append(f"{_sortable('recorded_at')} < ?")
        params.append(sortable(filters.recorded_before))
    if filters.subjects is not None:
        marks = ",".join("?" * len(filters.subjects))
        where.append(f"(subject_key IN ({marks}) OR object_key IN ({marks}))")
        params += [*filters.subjects, *filters.subjects]
    return "".join(f" AND {w}" for w in where), params


def _message_filter_sql(messages: MessageFilter | None) -> tuple[str, list[object]]:
    """The recall's time filters as extra WHERE conditions on messages `m`."""
    if messages is None:
        return "", []
    where: list[str] = []
    params: list[object] = []
    if messages.occurred_by is not None:
        where.append(f"{_sortable('m.occurred_at')} <= ?")
        params.append(sortable(messages.occurred_by))
    if messages.recorded_after is not None:
        where.append(f"{_sortable('m.recorded_at')} >= ?")
        params.append(sortable(messages.recorded_after))
    if messages.recorded_before is not None:
        where.append(f"{_sortable('m.recorded_at')} < ?")
        params.append(sortable(messages.recorded_before))
    return "".join(f" AND {w}" for w in where), params


def _fact(row: tuple[Any, ...]) -> Fact:
    """A fact from a plain row (seq, then the columns of Fact in order)."""
    return Fact(*row[1:])


class SqliteStore:
    """Store and CredentialStore over one SQLite file."""

    def __init__(
        self, path: Path | str, *, mark_vectors: bool = True, mark_extractions: bool = False
    ) -> None:
        # Without an embedding model nothing would ever take the pending marks, so
        # the wiring turns them off rather than let them pile up.
        self.mark_vectors = mark_vectors
        # Likewise extraction marks: only with an extractor configured.
        self.mark_extractions = mark_extractions
        self.file = SqliteFile(
            path,
            _SCHEMA + _ALIAS_SCHEMA + _ERASURE_SCHEMA + "INSERT OR REPLACE INTO meta (key, value) "
            f"VALUES ('schema_version', '{SCHEMA_VERSION}');",
        )
        self.path = self.file.path
        self._add_fact_columns()
        self._add_columns("erasures", (("requested_at", "TEXT"),))
        # A message's place in its project's storing order, copied to its passages'
        # vector marks (ports.Store.put_messages); older rows have none.
        self._add_columns("messages", (("position", "INTEGER"),))
        # And its time (ports.PendingVector.occurred_at): NULL on older marks, not known.
        self._add_columns("pending_vectors", (("position", "INTEGER"), ("occurred_at", "TEXT")))
        self._add_columns("erasure_requests", (("holder", "TEXT"), ("held_until", "REAL")))
        if not name_keys_current(self._db()):  # keys of an older rule: sqlite_name_keys.py
            with self._write() as db:
                migrate_name_keys(db, mark_vectors=mark_vectors)
        self._drain_erased_vectors()

    def _db(self) -> sqlite3.Connection:
        return self.file.db()

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self.file.write()

    def close(self) -> None:
        self.file.close()

    # -- facts and entities -------------------------------------------------

    def put_facts(self, project: str, facts: Sequence[Fact]) -> None:
        token = uuid.uuid4().hex
        with self._write() as db:
            facts = self._resolve_aliases(db, project, facts)
            facts = self._close_contradictions(db, project, facts, token)
            for f in facts:
                # ON CONFLICT names the one conflict to skip (an id already stored):
                # OR IGNORE would also silently skip a row that breaks NOT NULL.
                inserted = db.execute(
                    f"INSERT INTO facts (project, {_FACT_COLUMNS}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
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
                        f.quote_start,
                        f.quote_end,
                    ),
                ).rowcount
                if not inserted:
                    continue
                if self.mark_vectors:  # its statement is embedded for recall's ranking
                    db.execute(_PENDING, (project, "fact", f.id, f.statement, f.source_role))
                # Reports of these entities are rebuilt later, never during a recall.
                db.executemany(
                    _MARK_DIRTY,
                    [
                        (project, f.source_role, k, token)
                        for k in (f.subject_key, f.object_key)
                        if k
                    ],
                )
                names = [(f.subject_key, f.subject)]
                if f.object_key is not None:
                    names.append((f.object_key, f.object))
                db.executemany(
                    "INSERT OR IGNORE INTO entities (project, key, name) VALUES (?, ?, ?)",
                    [(project, key, name) for key, name in names],
                )
                # One count per end, as delete_fact takes one per end (a self-link twice).
                for key, name in names:
                    count = db.execute(
                        "INSERT INTO entity_roles (project, key, role, facts) VALUES (?, ?, ?, 1) "
                        "ON CONFLICT (project, key, role) DO UPDATE SET facts = facts + 1 "
                        "RETURNING facts",
                        (project, key, f.source_role),
                    ).fetchone()[0]
                    if count == 1 and self.mark_vectors:  # new to this role: index it
                        db.execute(
                            _PENDING,
                            (project, "entity", f"{f.source_role}:{key}", name, f.source_role),
                        )

    # -- validity: contradictions close stored facts --------------------------------

    def _close_contradictions(
        self, db: sqlite3.Connection, project: str, facts: Sequence[Fact], token: str
    ) -> list[Fact]:
        """The batch with the validity `plan_closings` gives it; the stored facts it
        closes are updated here, inside the batch's transaction."""
        keyed = [f for f in facts if contradiction_key(f) is not None]
        if not keyed:
            return list(facts)
        stored = self._stored_ids(db, project, [f.id for f in keyed])
        incoming: dict[str, Fact] = {}
        for f in facts:
            if f.id not in stored:
                incoming.setdefault(f.id, f)  # a repeated id: the first copy is stored
        # Per subject and role, the earliest start in the batch: a stored fact that
        # ended by then can neither be closed nor end a new fact.
        earliest: dict[tuple[str, str], str] = {}
        for f in incoming.values():
            if contradiction_key(f) is not None:
                at = sortable(start_of(f))
                group = (f.subject_key, f.source_role)
                earliest[group] = min(earliest.get(group, at), at)
        existing: list[Fact] = []
        for (subject_key, role), at in earliest.items():
            existing += [
                _fact(r)
                for r in db.execute(
                    f"SELECT seq, {_FACT_COLUMNS} FROM facts WHERE project = ? "
                    "AND subject_key = ? AND source_role = ? "
                    f"AND (valid_to IS NULL OR {_sortable('valid_to')} > ?) ORDER BY seq",
                    (project, subject_key, role, at),
                )
            ]
        planned, closings = plan_closings(existing, list(incoming.values()))
        for c in closings:
            db.execute(
                "UPDATE facts SET valid_to = ? WHERE project = ? AND id = ?",
                (c.valid_to, project, c.fact.id),
            )
            # The closed fact no longer holds now: its reports are rebuilt.
            db.executemany(
                _MARK_DIRTY,
                [
                    (project, c.fact.source_role, k, token)
                    for k in (c.fact.subject_key, c.fact.object_key)
                    if k
                ],
            )
        changed = {f.id: f for f in planned}
        return [changed.get(f.id, f) if f.id not in stored else f for f in facts]

    def _stored_ids(self, db: sqlite3.Connection, project: str, ids: list[str]) -> set[str]:
        found: set[str] = set()
        for i in range(0, len(ids), _CHUNK):
            chunk = ids[i : i + _CHUNK]
            rows = db.execute(
                f"SELECT id FROM facts WHERE project = ? AND id IN ({','.join('?' * len(chunk))})",
                (project, *chunk),
            )
            found.update(r[0] for r in rows)
        return found

    def _scan(self, sql: str, params: tuple[object, ...]) -> sqlite3.Cursor:
        """A cursor of plain tuples: cheaper than sqlite3.Row for hot reads."""
        cursor = self._db().cursor()
        cursor.row_factory = None
        return cursor.execute(sql, params)

    def _facts_of_key(
        self, project: str, key: str, roles: Collection[Role], filters: FactFilter | None
    ) -> Iterator[Fact]:
        # Two index range scans (subject side, object side), each already in storing
        # order, merged lazily: the caller stops reading once it has enough, so the
        # cost follows what the question touches, not the size of the store.
        marks = ",".join("?" * len(roles))
        where, params = _fact_filter_sql(filters)
        scans = [
            self._scan(
                f"SELECT seq, {_FACT_COLUMNS} FROM facts "
                f"WHERE project = ? AND {column} = ? AND source_role IN ({marks}){where} "
                "ORDER BY seq",
                (project, key, *roles, *params),
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
        filters: FactFilter | None = None,
    ) -> Iterator[Fact]:
        seen = set(exclude)
        count = 0
        if not roles or limit <= 0:
            return
        for key in keys:
            for fact in self._facts_of_key(project, key, roles, filters):
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
            gone = db.execute(
                "DELETE FROM facts WHERE project = ? AND id = ? "
                "RETURNING source_role, subject_key, object_key",
                (project, fact_id),
            ).fetchone()
            if gone is None:
                return False
            db.execute(
                "DELETE FROM pending_vectors WHERE project = ? AND kind = 'fact' AND id = ?",
                (project, fact_id),
            )
            role, *keys = gone
            db.executemany(
                _MARK_DIRTY,
                [(project, role, k, uuid.uuid4().hex) for k in keys if k],
            )
            db.executemany(
                "UPDATE entity_roles SET facts = facts - 1 "
                "WHERE project = ? AND key = ? AND role = ?",
                [(project, k, role) for k in keys if k],
            )
            return True

    def known_names(
        self, project: str, keys: Collection[str], roles: Collection[Role] | None = None
    ) -> set[str]:
        wanted = list(keys)
        known: set[str] = set()
        role_marks = ",".join("?" * len(roles)) if roles is not None else ""
        for i in range(0, len(wanted), _CHUNK):
            chunk = wanted[i : i + _CHUNK]
            key_marks = ",".join("?" * len(chunk))
            if roles is None:
                query = f"SELECT key FROM entities WHERE project = ? AND key IN ({key_marks})"
                params: tuple[object, ...] = (project, *chunk)
            else:
                query = (
                    f"SELECT DISTINCT key FROM entity_roles WHERE project = ? AND key IN "
                    f"({key_marks}) AND role IN ({role_marks}) AND facts > 0"
                )
                params = (project, *chunk, *roles)
            known.update(r["key"] for r in self._db().execute(query, params))
        return known

    # -- messages and passages ------------------------------------------------

    def put_messages(
        self, project: str, messages: Sequence[Message], passages: Sequence[Passage]
    ) -> set[str]:
        with self._write() as db:
            # Positions follow on from the project's last, given to new messages only
            # (inside this transaction: no gaps, none given twice).
            row = db.execute(
                "SELECT next FROM message_positions WHERE project = ?", (project,)
            ).fetchone()
            first = int(row[0]) if row else 1
            new: dict[str, Message] = {}
            positions: dict[str, int] = {}
            for m in messages:
                position = first + len(new)
                if db.execute(
                    "INSERT INTO messages "
                    "(project, id, role, content, source, occurred_at, recorded_at, position) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project, id) DO NOTHING",
                    (
                        project,
                        m.id,
                        m.role,
                        m.content,
                        m.source,
                        m.occurred_at,
                        m.recorded_at,
                        position,
                    ),
                ).rowcount:
                    new[m.id] = m
                    positions[m.id] = position
            if new:
                db.execute(
                    "INSERT INTO message_positions (project, next) VALUES (?, ?) "
                    "ON CONFLICT (project) DO UPDATE SET next = excluded.next",
                    (project, first + len(new)),
                )
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
            if self.mark_vectors:
                db.executemany(
                    _PENDING_PASSAGE,
                    [
                        (
                            project,
                            row[1],
                            row[7],
                            row[3],
                            positions[str(row[2])],
                            new[str(row[2])].occurred_at or "",
                        )
                        for row in rows.values()
                    ],
                )
            if self.mark_extractions:
                db.executemany(
                    "INSERT OR IGNORE INTO pending_extractions (project, message_id) VALUES (?, ?)",
                    [(project, message_id) for message_id in new],
                )
        return set(new)

    def mark_everything(self, project: str | None = None) -> int:
        """Mark every passage, fact and live name for indexing, and every entity for a
        report rebuild (to index what was stored while no model was configured).
        Returns how many vector marks were written."""
        only = "AND project = ?" if project else ""
        params: tuple[str, ...] = (project,) if project else ()
        with self._write() as db:
            passages = db.execute(
                "INSERT INTO pending_vectors "
                "(project, kind, id, text, role, position, occurred_at) "
                "SELECT p.project, 'passage', p.id, p.quote, p.role, m.position, "
                "COALESCE(m.occurred_at, '') "
                "FROM passages p JOIN messages m ON m.project = p.project AND m.id = p.message_id "
                f"WHERE 1 {only.replace('project', 'p.project')} "
                "ON CONFLICT (project, kind, id) DO NOTHING",
                params,
            ).rowcount
            names = db.execute(
                "INSERT INTO pending_vectors (project, kind, id, text, role) "
                "SELECT project, 'entity', role || ':' || key, "
                "(SELECT name FROM entities e WHERE e.project = r.project AND e.key = r.key), "
                f"role FROM entity_roles r WHERE facts > 0 {only} "
                "ON CONFLICT (project, kind, id) DO NOTHING",
                params,
            ).rowcount
            facts = db.execute(
                "INSERT INTO pending_vectors (project, kind, id, text, role) "
                f"SELECT project, 'fact', id, statement, source_role FROM facts WHERE 1 {only} "
                "ON CONFLICT (project, kind, id) DO NOTHING",
                params,
            ).rowcount
            db.execute(
                "INSERT INTO dirty_entities (project, role, key, token) "
                "SELECT project, role, key, lower(hex(randomblob(16))) FROM entity_roles "
                f"WHERE facts > 0 {only} "
                "ON CONFLICT (project, role, key) DO UPDATE SET token = excluded.token",
                params,
            )
        return passages + names + facts

    def vector_projects(self) -> list[str]:
        rows = self._db().execute("SELECT DISTINCT project FROM pending_vectors ORDER BY project")
        return [r["project"] for r in rows]

    def pending_vectors(self, project: str, limit: int) -> list[PendingVector]:
        rows = self._db().execute(
            "SELECT kind, id, text, role, position, occurred_at FROM pending_vectors "
            "WHERE project = ? ORDER BY kind, id LIMIT ?",
            (project, limit),
        )
        return [
            PendingVector(r["kind"], r["id"], r["text"], r["role"], r["position"], r["occurred_at"])
            for r in rows
        ]

    def clear_pending_vectors(self, project: str, items: Sequence[PendingVector]) -> None:
        with self._write() as db:
            db.executemany(
                "DELETE FROM pending_vectors WHERE project = ? AND kind = ? AND id = ? "
                "AND text = ?",
                [(project, i.kind, i.id, i.text) for i in items],
            )

    def held_facts(self, project: str, ids: Collection[str]) -> set[str]:
        return self._stored_ids(self._db(), project, list(dict.fromkeys(ids)))

    def fact_pointers(self, project: str, ids: Sequence[str]) -> list[FactPointer]:
        # Only the pointer's columns, as plain tuples: a whole Fact per row took 1.6 ms
        # for the ~200 facts a recall reads, these 0.6 ms (measured).
        found: dict[str, FactPointer] = {}
        for i in range(0, len(ids), _CHUNK):
            chunk = ids[i : i + _CHUNK]
            rows = self._scan(
                f"SELECT {_POINTER_COLUMNS} FROM facts WHERE project = ? "
                f"AND id IN ({','.join('?' * len(chunk))})",
                (project, *chunk),
            )
            found.update((r[0], FactPointer._make(r)) for r in rows)
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def passages_by_ids(
        self,
        project: str,
        ids: Sequence[str],
        messages: MessageFilter | None = None,
        times: bool = False,
    ) -> list[Passage]:
        # occurred_at comes with the join the message filter needs anyway.
        found: dict[str, Passage] = {}
        where, params = _message_filter_sql(messages)
        for i in range(0, len(ids), _CHUNK):
            chunk = ids[i : i + _CHUNK]
            rows = self._scan(
                'SELECT p.id, p.message_id, p.role, p.source, p.start, p."end", p.quote, '
                "m.occurred_at, m.position FROM passages p "
                "JOIN messages m ON m.project = p.project AND m.id = p.message_id "
                f"WHERE p.project = ? AND p.id IN ({','.join('?' * len(chunk))}){where}",
                (project, *chunk, *params),
            )
            # Plain tuples in Passage's field order: recall reads hundreds per question.
            found.update((r[0], Passage(*r)) for r in rows)
        return [found[i] for i in ids if i in found]

    def passages_of(self, project: str, message_id: str) -> list[Passage]:
        rows = self._db().execute(
            'SELECT id, message_id, role, source, start, "end", quote, '
            "(SELECT position FROM messages m WHERE m.project = passages.project "
            "AND m.id = passages.message_id) AS position FROM passages "
            "WHERE project = ? AND message_id = ? ORDER BY start",
            (project, message_id),
        )
        return [Passage(**dict(r)) for r in rows]

    def passages_of_messages(
        self, project: str, message_ids: Sequence[str]
    ) -> dict[str, list[Passage]]:
        return {m: self.passages_of(project, m) for m in dict.fromkeys(message_ids)}

    # -- reports ---------------------------------------------------------------

    def dirty_projects(self) -> list[str]:
        rows = self._db().execute("SELECT DISTINCT project FROM dirty_entities ORDER BY project")
        return [r["project"] for r in rows]

    def dirty_entities(self, project: str) -> list[tuple[Role, str, str]]:
        rows = self._db().execute(
            "SELECT role, key, token FROM dirty_entities WHERE project = ? ORDER BY role, key",
            (project,),
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def clear_dirty(self, project: str, marks: Sequence[tuple[Role, str, str]]) -> None:
        with self._write() as db:
            db.executemany(
                "DELETE FROM dirty_entities "
                "WHERE project = ? AND role = ? AND key = ? AND token = ?",
                [(project, *mark) for mark in marks],
            )

    def report_components(self, project: str, role: Role, keys: Collection[str]) -> set[str]:
        wanted = list(keys)
        found: set[str] = set()
        for i in range(0, len(wanted), _CHUNK):
            chunk = wanted[i : i + _CHUNK]
            rows = self._db().execute(
                "SELECT DISTINCT r.component FROM report_members m JOIN reports r "
                "ON r.project = m.project AND r.id = m.report_id "
                f"WHERE m.project = ? AND m.role = ? AND m.key IN ({','.join('?' * len(chunk))})",
                (project, role, *chunk),
            )
            found.update(r[0] for r in rows)
        return found

    def replace_reports(
        self, project: str, role: Role, components: Collection[str], reports: Sequence[Report]
    ) -> list[str]:
        """Drop the reports of `components` and store `reports`, in one transaction.

        Returns the ids of the reports dropped (whose vectors must go too)."""
        dropped: list[str] = []
        with self._write() as db:
            reports = self._not_erased(db, project, reports)
            for component in components:
                ids = [
                    r[0]
                    for r in db.execute(
                        "DELETE FROM reports WHERE project = ? AND role = ? AND component = ? "
                        "RETURNING id",
                        (project, role, component),
                    )
                ]
                db.executemany(
                    "DELETE FROM report_members WHERE project = ? AND role = ? AND report_id = ?",
                    [(project, role, i) for i in ids],
                )
                dropped += ids
            for r in reports:
                db.execute(
                    "INSERT OR REPLACE INTO reports (project, id, role, level, parent_id, "
                    "title, summary, path, source_messages, entity_keys, component) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        project,
                        r.id,
                        r.role,
                        r.level,
                        r.parent_id,
                        r.title,
                        r.summary,
                        json.dumps(r.path),
                        json.dumps(r.source_messages),
                        json.dumps(r.entity_keys),
                        r.component,
                    ),
                )
                db.executemany(
                    "INSERT OR IGNORE INTO report_members (project, role, key, report_id) "
                    "VALUES (?, ?, ?, ?)",
                    [(project, r.role, k, r.id) for k in r.entity_keys],
                )
        kept = {r.id for r in reports}
        return [i for i in dropped if i not in kept]

    @staticmethod
    def _not_erased(
        db: sqlite3.Connection, project: str, reports: Sequence[Report]
    ) -> Sequence[Report]:
        """The reports without those of a component that holds an erased name: built
        from facts read before an erasure and written after it. Checked in the write's
        transaction, after the tombstone (written first) is committed; the erasure
        marked the members that stay, so the next pass rebuilds the component."""
        keys = {k for r in reports for k in r.entity_keys}
        if not keys:
            return reports
        hashes = tombstone_hashes(project, keys)
        wanted = list(hashes)
        erased: set[str] = set()
        for i in range(0, len(wanted), _CHUNK):
            chunk = wanted[i : i + _CHUNK]
            rows = db.execute(
                "SELECT hash FROM erased_subjects WHERE project = ? "
                f"AND hash IN ({','.join('?' * len(chunk))})",
                (project, *chunk),
            )
            erased.update(hashes[r[0]] for r in rows)
        if not erased:
            return reports
        tainted = {r.component for r in reports if erased.intersection(r.entity_keys)}
        return [r for r in reports if r.component not in tainted]

    def _reports(self, project: str, where: str, params: tuple[object, ...]) -> list[Report]:
        rows = self._db().execute(
            "SELECT id, role, level, parent_id, title, summary, path, source_messages, "
            f"entity_keys, component FROM reports WHERE project = ? AND {where}",
            (project, *params),
        )
        return [
            Report(
                id=r["id"],
                role=r["role"],
                level=r["level"],
                parent_id=r["parent_id"],
                title=r["title"],
                summary=r["summary"],
                path=tuple(json.loads(r["path"])),
                source_messages=tuple(json.loads(r["source_messages"])),
                entity_keys=tuple(json.loads(r["entity_keys"])),
                component=r["component"],
            )
            for r in rows
        ]

    def reports_by_ids(self, project: str, ids: Sequence[str]) -> list[Report]:
        found: dict[str, Report] = {}
        for i in range(0, len(ids), _CHUNK):
            chunk = ids[i : i + _CHUNK]
            for r in self._reports(project, f"id IN ({','.join('?' * len(chunk))})", chunk):
                found[r.id] = r
        return [found[i] for i in ids if i in found]

    def reports_of_entity(self, project: str, key: str, roles: Collection[Role]) -> list[Report]:
        """The level-0 reports that hold this entity, for the roles given."""
        marks = ",".join("?" * len(roles))
        return self._reports(
            project,
            f"level = 0 AND role IN ({marks}) AND id IN (SELECT report_id FROM report_members "
            "WHERE project = reports.project AND key = ?) ORDER BY role, id",
            (*roles, key),
        )

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

    # -- extraction (messages -> facts) ----------------------------------------------

    def _add_fact_columns(self) -> None:
        self._add_columns("facts", _ADDED_FACT_COLUMNS)

    def _add_columns(self, table: str, columns: Sequence[tuple[str, str]]) -> None:
        """Add the columns a file made by an older version lacks (CREATE TABLE IF NOT
        EXISTS leaves an existing table as it is)."""
        have = {r["name"] for r in self._db().execute(f"PRAGMA table_info({table})")}
        for column, kind in columns:
            if column not in have:
                try:
                    self._db().execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
                except sqlite3.OperationalError as exc:
                    if "duplicate column" not in str(exc):
                        raise  # another process added it first otherwise

    def message(self, project: str, message_id: str) -> Message | None:
        row = (
            self._db()
            .execute(
                "SELECT id, role, content, source, occurred_at, recorded_at FROM messages "
                "WHERE project = ? AND id = ?",
                (project, message_id),
            )
            .fetchone()
        )
        return Message(**dict(row)) if row else None

    def extraction_projects(self) -> list[str]:
        rows = self._db().execute(
            "SELECT DISTINCT project FROM pending_extractions ORDER BY project"
        )
        return [r["project"] for r in rows]

    def pending_extractions(self, project: str, limit: int) -> list[str]:
        rows = self._db().execute(
            "SELECT message_id FROM pending_extractions WHERE project = ? "
            "ORDER BY message_id LIMIT ?",
            (project, limit),
        )
        return [r["message_id"] for r in rows]

    def extraction_pending(self, project: str, message_id: str) -> bool:
        row = (
            self._db()
            .execute(
                "SELECT 1 FROM pending_extractions WHERE project = ? AND message_id = ?",
                (project, message_id),
            )
            .fetchone()
        )
        return row is not None

    def finish_extraction(
        self, project: str, message_id: str, failure: ExtractionFailure | None = None
    ) -> None:
        with self._write() as db:
            db.execute(
                "DELETE FROM pending_extractions WHERE project = ? AND message_id = ?",
                (project, message_id),
            )
            if failure is not None:
                db.execute(
                    "INSERT OR REPLACE INTO failed_extractions "
                    "(project, message_id, error, attempts, failed_at) VALUES (?, ?, ?, ?, ?)",
                    (project, message_id, failure.error, failure.attempts, failure.failed_at),
                )

    def failed_extractions(self, project: str | None = None) -> list[ExtractionFailure]:
        only = "WHERE project = ?" if project is not None else ""
        rows = self._db().execute(
            "SELECT project, message_id, error, attempts, failed_at FROM failed_extractions "
            f"{only} ORDER BY project, message_id",
            (project,) if project is not None else (),
        )
        return [ExtractionFailure(**dict(r)) for r in rows]

    def replay_extractions(
        self, project: str | None = None, message_ids: Collection[str] | None = None
    ) -> list[ExtractionFailure]:
        wanted = set(message_ids) if message_ids is not None else None
        replayed: list[ExtractionFailure] = []
        with self._write() as db:
            for failure in self.failed_extractions(project):
                if wanted is not None and failure.message_id not in wanted:
                    continue
                db.execute(
                    "DELETE FROM failed_extractions WHERE project = ? AND message_id = ?",
                    (failure.project, failure.message_id),
                )
                db.execute(
                    "INSERT OR IGNORE INTO pending_extractions (project, message_id) VALUES (?, ?)",
                    (failure.project, failure.message_id),
                )
                replayed.append(failure)
        return replayed

    # -- entities and aliases ---------------------------------------------------

    def _resolve_aliases(
        self, db: sqlite3.Connection, project: str, facts: Sequence[Fact]
    ) -> Sequence[Fact]:
        """The facts with each alias key replaced by its entity's (the words stay)."""
        keys = list({k for f in facts for k in (f.subject_key, f.object_key) if k})
        targets: dict[str, str] = {}
        for i in range(0, len(keys), _CHUNK):
            chunk = keys[i : i + _CHUNK]
            rows = db.execute(
                "SELECT key, target FROM aliases WHERE project = ? "
                f"AND key IN ({','.join('?' * len(chunk))})",
                (project, *chunk),
            )
            targets.update((r[0], r[1]) for r in rows)
        return rekeyed(facts, targets)

    def resolve_names(
        self, project: str, keys: Collection[str], roles: Collection[Role] | None = None
    ) -> dict[str, str]:
        wanted = list(keys)
        targets: dict[str, str] = {}
        for i in range(0, len(wanted), _CHUNK):
            chunk = wanted[i : i + _CHUNK]
            rows = self._db().execute(
                "SELECT key, target FROM aliases WHERE project = ? "
                f"AND key IN ({','.join('?' * len(chunk))})",
                (project, *chunk),
            )
            targets.update((r[0], r[1]) for r in rows)
        found = {k: k for k in self.known_names(project, set(wanted) - set(targets), roles)}
        live = self.known_names(project, set(targets.values()), roles)
        found.update((k, t) for k, t in targets.items() if t in live)
        return found

    @staticmethod
    def _name_state(db: sqlite3.Connection, project: str, key: str) -> NameState:
        alias_of = db.execute(
            "SELECT target FROM aliases WHERE project = ? AND key = ?", (project, key)
        ).fetchone()
        named = db.execute(
            "SELECT 1 FROM entities WHERE project = ? AND key = ?", (project, key)
        ).fetchone()
        return NameState(key, alias_of[0] if alias_of else None, named is not None)

    def merge_entities(
        self, project: str, alias_key: str, alias_text: str, into_key: str, into_text: str
    ) -> MergeResult:
        with self._write() as db:
            plan = plan_merge(
                self._name_state(db, project, alias_key),
                self._name_state(db, project, into_key),
                alias_text,
                into_text,
            )
            alias, target = plan.alias_key, plan.target_key
            moved = db.execute(
                "SELECT source_role, subject_key, object_key FROM facts "
                "WHERE project = ? AND (subject_key = ? OR object_key = ?)",
                (project, alias, alias),
            ).fetchall()
            # Each end counts one live fact of its role, as put_facts counts them.
            ends: dict[str, int] = {}
            for role, subject_key, object_key in moved:
                ends[role] = ends.get(role, 0) + (subject_key == alias) + (object_key == alias)
            db.execute(
                "UPDATE facts SET subject_key = ? WHERE project = ? AND subject_key = ?",
                (target, project, alias),
            )
            db.execute(
                "UPDATE facts SET object_key = ? WHERE project = ? AND object_key = ?",
                (target, project, alias),
            )
            row = db.execute(
                "SELECT name FROM entities WHERE project = ? AND key = ?", (project, target)
            ).fetchone()
            into_name = row[0] if row else into_text
            for role, count in ends.items():
                total = db.execute(
                    "INSERT INTO entity_roles (project, key, role, facts) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (project, key, role) DO UPDATE SET facts = facts + excluded.facts "
                    "RETURNING facts",
                    (project, target, role, count),
                ).fetchone()[0]
                if total == count and count and self.mark_vectors:  # new to this role
                    db.execute(_PENDING, (project, "entity", f"{role}:{target}", into_name, role))
            # Both ends' reports are rebuilt: the alias's are dropped, the target's grow.
            token = uuid.uuid4().hex
            db.executemany(
                _MARK_DIRTY,
                [(project, role, k, token) for role in ends for k in (alias, target)],
            )
            db.execute("DELETE FROM entity_roles WHERE project = ? AND key = ?", (project, alias))
            # The alias's name vectors may stay in the index: recall resolves them.
            db.executemany(
                "DELETE FROM pending_vectors WHERE project = ? AND kind = 'entity' AND id = ?",
                [(project, f"{role}:{alias}") for role in ROLES],
            )
            row = db.execute(
                "DELETE FROM entities WHERE project = ? AND key = ? RETURNING name",
                (project, alias),
            ).fetchone()
            db.execute(
                "INSERT INTO aliases (project, key, name, target) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (project, key) DO NOTHING",
                (project, alias, row[0] if row else alias_text, target),
            )
            repointed = db.execute(
                "UPDATE aliases SET target = ? WHERE project = ? AND target = ?",
                (target, project, alias),
            ).rowcount
            alias_name = db.execute(
                "SELECT name FROM aliases WHERE project = ? AND key = ?", (project, alias)
            ).fetchone()[0]
        return MergeResult(alias_name, into_name, len(moved), repointed)

    def remove_aliases(self, project: str, keys: Collection[str]) -> int:
        wanted = sorted(set(keys))
        if not wanted:
            return 0
        marks = ", ".join("?" * len(wanted))
        with self._write() as db:
            gone = db.execute(
                f"DELETE FROM aliases WHERE project = ? AND (key IN ({marks}) "
                f"OR target IN ({marks}))",
                (project, *wanted, *wanted),
            )
            return gone.rowcount

    def aliases(self, project: str) -> list[Alias]:
        rows = self._db().execute(
            "SELECT a.name, a.key, COALESCE(e.name, a.target), a.target FROM aliases a "
            "LEFT JOIN entities e ON e.project = a.project AND e.key = a.target "
            "WHERE a.project = ? ORDER BY a.key",
            (project,),
        )
        return [Alias(*r) for r in rows]

    def entity_keys(self, project: str, limit: int) -> list[str]:
        rows = self._db().execute(
            "SELECT key FROM entities WHERE project = ? ORDER BY key LIMIT ?", (project, limit)
        )
        return [r[0] for r in rows]

    def entity_names(self, project: str, limit: int) -> list[EntityName]:
        rows = self._db().execute(
            "SELECT e.key, e.name, SUM(r.facts) FROM entities e JOIN entity_roles r "
            "ON r.project = e.project AND r.key = e.key WHERE e.project = ? "
            "GROUP BY e.key HAVING SUM(r.facts) > 0 ORDER BY e.key LIMIT ?",
            (project, limit),
        )
        return [EntityName(*r) for r in rows]

    # -- listings (domain/listing.py) --------------------------------------------

    def entity_page(
        self, project: str, after: str | None, limit: int, contains: str | None
    ) -> list[EntityCounts]:
        where = ["e.project = ?"]
        args: list[object] = [project]
        if after is not None:
            where.append("e.key > ?")
            args.append(after)
        if contains:
            where.append("instr(e.key, ?) > 0")
            args.append(contains)
        db = self._db()
        rows = db.execute(
            f"SELECT e.key, e.name FROM entities e WHERE {' AND '.join(where)} "
            "AND EXISTS (SELECT 1 FROM entity_roles r WHERE r.project = e.project "
            "AND r.key = e.key AND r.facts > 0) ORDER BY e.key LIMIT ?",
            (*args, limit),
        ).fetchall()
        counts: dict[str, dict[Role, int]] = {r[0]: {} for r in rows}
        if rows:
            marks = ",".join("?" * len(rows))
            for key, role, n in db.execute(
                f"SELECT key, role, facts FROM entity_roles WHERE project = ? AND key IN ({marks})",
                (project, *counts),
            ):
                counts[key][role] = n
        return [EntityCounts(r[0], r[1], counts[r[0]]) for r in rows]

    def message_page(
        self,
        project: str,
        before: tuple[str, str] | None,
        limit: int,
        role: Role | None,
        source: str | None,
    ) -> list[Message]:
        where = ["project = ?"]
        args: list[object] = [project]
        if before is not None:
            where.append("(recorded_at, id) < (?, ?)")
            args += list(before)
        if role is not None:
            where.append("role = ?")
            args.append(role)
        if source is not None:
            where.append("source = ?")
            args.append(source)
        rows = self._db().execute(
            "SELECT id, role, content, source, occurred_at, recorded_at FROM messages "
            f"WHERE {' AND '.join(where)} ORDER BY recorded_at DESC, id DESC LIMIT ?",
            (*args, limit),
        )
        return [Message(*r) for r in rows]

    # -- erasure ---------------------------------------------------------------
    # domain/erasure.py finds what names an entity; erase() applies its plan in one
    # transaction, so an erasure is all or nothing.

    def project_facts(self, project: str) -> Iterator[Fact]:
        rows = self._scan(f"SELECT seq, {_FACT_COLUMNS} FROM facts WHERE project = ?", (project,))
        for row in rows:
            yield _fact(row)

    def project_entities(self, project: str) -> Iterator[str]:
        for row in self._scan("SELECT key FROM entities WHERE project = ?", (project,)):
            yield row[0]

    def project_messages(self, project: str) -> Iterator[Message]:
        rows = self._scan(
            "SELECT id, role, content, source, occurred_at, recorded_at FROM messages "
            "WHERE project = ? ORDER BY seq",
            (project,),
        )
        for row in rows:
            yield Message(*row)

    def erase(self, project: str, plan: ErasurePlan) -> int:
        token = uuid.uuid4().hex
        erased = set(plan.entity_keys)
        vectors: list[tuple[str, str]] = []
        with self._write() as db:
            db.execute(
                "INSERT OR IGNORE INTO erased_subjects (project, hash) VALUES (?, ?)",
                (project, plan.tombstone),
            )
            # Facts, with the counts and report marks of the ends that stay.
            touched: dict[str, set[str]] = {role: set(erased) for role in ROLES}
            for i in range(0, len(plan.fact_ids), _CHUNK):
                chunk = plan.fact_ids[i : i + _CHUNK]
                gone = db.execute(
                    f"DELETE FROM facts WHERE project = ? AND id IN ({','.join('?' * len(chunk))}) "
                    "RETURNING source_role, subject_key, object_key",
                    (project, *chunk),
                ).fetchall()
                db.executemany(
                    "DELETE FROM pending_vectors WHERE project = ? AND kind = 'fact' AND id = ?",
                    [(project, i) for i in chunk],
                )
                vectors += [("fact", i) for i in chunk]
                for role, *keys in gone:
                    ends = [k for k in keys if k]
                    touched[role].update(ends)
                    db.executemany(
                        "UPDATE entity_roles SET facts = facts - 1 "
                        "WHERE project = ? AND key = ? AND role = ?",
                        [(project, k, role) for k in ends if k not in erased],
                    )
            # Entities: names, role counts, their pending vectors (and their vectors).
            for key in erased:
                db.execute("DELETE FROM entities WHERE project = ? AND key = ?", (project, key))
                db.execute("DELETE FROM entity_roles WHERE project = ? AND key = ?", (project, key))
                ids = [f"{role}:{key}" for role in ROLES]
                db.executemany(
                    "DELETE FROM pending_vectors WHERE project = ? AND kind = 'entity' AND id = ?",
                    [(project, i) for i in ids],
                )
                vectors += [("entity", i) for i in ids]
            # Messages: the redacted text, passages deleted or given the new source.
            for r in plan.redactions:
                db.execute(
                    "UPDATE messages SET content = ?, source = ? WHERE project = ? AND id = ?",
                    (r.content, r.source, project, r.message_id),
                )
                db.executemany(
                    "DELETE FROM passages WHERE project = ? AND id = ?",
                    [(project, p.id) for p in r.dropped],
                )
                db.executemany(
                    "DELETE FROM pending_vectors WHERE project = ? AND kind = 'passage' AND id = ?",
                    [(project, p.id) for p in r.dropped],
                )
                db.executemany(
                    "UPDATE passages SET source = ? WHERE project = ? AND id = ?",
                    [(p.source, project, p.id) for p in r.kept],
                )
                vectors += [("passage", p.id) for p in r.dropped]
            # Reports of every component the erased facts reached: dropped now, their
            # members marked so the worker rebuilds them from the facts that remain.
            dropped = self._drop_reports(db, project, touched, erased, token)
            vectors += [("report", i) for i in dropped]
            self._erase_vectors(db, project, vectors)
        return len(dropped)

    @staticmethod
    def _erase_vectors(
        db: sqlite3.Connection, project: str, vectors: list[tuple[str, str]]
    ) -> None:
        """The vectors and indexed text of erased items, deleted in the erasure's own
        transaction: the vector index lives in this file (if embeddings were ever on),
        so nothing, not even the ids (an entity's holds its name), is kept for later.
        Ids an older version left in erased_vectors go too."""
        legacy = db.execute(
            "DELETE FROM erased_vectors WHERE project = ? RETURNING kind, id", (project,)
        ).fetchall()
        if not sqlite_vectors.held_in(db):
            return
        by_kind: dict[str, list[str]] = {}
        for kind, item_id in [*vectors, *legacy]:
            by_kind.setdefault(kind, []).append(item_id)
        for kind, ids in by_kind.items():
            sqlite_vectors.delete_rows(db, project, kind, sorted(set(ids)))

    def _drain_erased_vectors(self) -> None:
        """Ids an older version left in erased_vectors (an entity's holds its name):
        their vectors and the rows go, and the file is purged, once, at open."""
        if self._db().execute("SELECT 1 FROM erased_vectors LIMIT 1").fetchone() is None:
            return
        with self._write() as db:
            projects = [r[0] for r in db.execute("SELECT DISTINCT project FROM erased_vectors")]
            for project in projects:
                self._erase_vectors(db, project, [])
        self._purge_deleted()

    def _drop_reports(
        self,
        db: sqlite3.Connection,
        project: str,
        touched: dict[str, set[str]],
        erased: set[str],
        token: str,
    ) -> list[str]:
        dropped: list[str] = []
        for role, keys in touched.items():
            wanted = list(keys)
            components: set[str] = set()
            for i in range(0, len(wanted), _CHUNK):
                chunk = wanted[i : i + _CHUNK]
                components.update(
                    r[0]
                    for r in db.execute(
                        "SELECT DISTINCT r.component FROM report_members m JOIN reports r "
                        "ON r.project = m.project AND r.id = m.report_id WHERE m.project = ? "
                        f"AND m.role = ? AND m.key IN ({','.join('?' * len(chunk))})",
                        (project, role, *chunk),
                    )
                )
            members: set[str] = set(keys)
            for component in components:
                for report_id, entity_keys in db.execute(
                    "DELETE FROM reports WHERE project = ? AND role = ? AND component = ? "
                    "RETURNING id, entity_keys",
                    (project, role, component),
                ).fetchall():
                    dropped.append(report_id)
                    members.update(json.loads(entity_keys))
                    db.execute(
                        "DELETE FROM report_members WHERE project = ? AND role = ? "
                        "AND report_id = ?",
                        (project, role, report_id),
                    )
            # The members that stay are marked, the erased names never (a mark would keep
            # the name in plain text until the worker's pass); their marks go. A rebuild
            # that read the facts before this transaction and writes after it is stopped
            # by the tombstones (replace_reports) and redone from the members' marks.
            db.executemany(
                _MARK_DIRTY, [(project, role, k, token) for k in members if k not in erased]
            )
            db.executemany(
                "DELETE FROM dirty_entities WHERE project = ? AND role = ? AND key = ?",
                [(project, role, k) for k in sorted(erased)],
            )
        return dropped

    def _purge_deleted(self) -> None:
        """What SQLite keeps of deleted rows is purged: the full-text index's deleted
        terms (merged away) and the WAL's older page copies (checkpointed, truncated).
        Deleted content in the file itself was zeroed as it went (secure_delete)."""
        with self._write() as db:
            if sqlite_vectors.held_in(db):
                sqlite_vectors.purge_text(db)
        self.file.purge()

    def erased(self, project: str, hashes: Collection[str]) -> set[str]:
        wanted = list(hashes)
        found: set[str] = set()
        for i in range(0, len(wanted), _CHUNK):
            chunk = wanted[i : i + _CHUNK]
            rows = self._db().execute(
                "SELECT hash FROM erased_subjects WHERE project = ? "
                f"AND hash IN ({','.join('?' * len(chunk))})",
                (project, *chunk),
            )
            found.update(r[0] for r in rows)
        return found

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

    # -- erasure requests: the embedded store finishes them in the request, but records
    # them as DynamoDB does, so a crash part-way leaves one the worker completes.

    def begin_erasure(self, pending: PendingErasure) -> None:
        with self._write() as db:
            db.execute(
                "INSERT INTO erasure_requests (project, id, subject_hash, names, requested_at, "
                "holder, held_until) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    pending.project,
                    pending.id,
                    pending.subject_hash,
                    json.dumps(list(pending.names)),
                    pending.requested_at,
                    pending.holder,
                    pending.held_until,
                ),
            )

    def _pending(self, project: str, where: str, params: tuple[str, ...]) -> list[PendingErasure]:
        rows = self._db().execute(
            "SELECT id, subject_hash, names, requested_at, facts, entities, messages, "
            "passages, reports, holder, held_until "
            f"FROM erasure_requests WHERE project = ? {where} "
            "ORDER BY requested_at, id",
            (project, *params),
        )
        return [
            PendingErasure(
                id=r["id"],
                project=project,
                subject_hash=r["subject_hash"],
                names=tuple(json.loads(r["names"])),
                requested_at=r["requested_at"],
                counts={k: r[k] for k in COUNTS},
                holder=r["holder"],
                held_until=r["held_until"],
            )
            for r in rows
        ]

    def pending_erasure(self, project: str, erasure_id: str) -> PendingErasure | None:
        found = self._pending(project, "AND id = ?", (erasure_id,))
        return found[0] if found else None

    def pending_erasures(self, project: str) -> list[PendingErasure]:
        return self._pending(project, "", ())

    def erasing_projects(self) -> list[str]:
        rows = self._db().execute("SELECT DISTINCT project FROM erasure_requests ORDER BY project")
        return [r[0] for r in rows]

    def claim_erasure(
        self, project: str, erasure_id: str, holder: str, now: float, until: float
    ) -> bool:
        with self._write() as db:
            return (
                db.execute(
                    "UPDATE erasure_requests SET holder = ?, held_until = ? "
                    "WHERE project = ? AND id = ? "
                    "AND (holder IS NULL OR holder = ? OR held_until < ?)",
                    (holder, until, project, erasure_id, holder, now),
                ).rowcount
                == 1
            )

    def add_erasure_counts(self, project: str, erasure_id: str, counts: dict[str, int]) -> None:
        with self._write() as db:
            db.execute(
                "UPDATE erasure_requests SET "
                + ", ".join(f"{k} = {k} + ?" for k in COUNTS)
                + " WHERE project = ? AND id = ?",
                (*(counts.get(k, 0) for k in COUNTS), project, erasure_id),
            )

    def finish_erasure(self, record: ErasureRecord, requested_at: str) -> bool:
        with self._write() as db:
            gone = db.execute(
                "DELETE FROM erasure_requests WHERE project = ? AND id = ?",
                (record.project, record.id),
            ).rowcount
            if not gone:
                return False
            db.execute(
                "INSERT INTO erasures (id, project, subject_hash, erased_at, facts, entities, "
                "messages, passages, reports, requested_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    record.project,
                    record.subject_hash,
                    record.erased_at,
                    *(record.counts()[k] for k in COUNTS),
                    requested_at,
                ),
            )
        self._purge_deleted()
        return True

    def erasure_status(self, project: str, erasure_id: str) -> ErasureStatus | None:
        pending = self.pending_erasure(project, erasure_id)
        if pending is not None:
            return ErasureStatus(pending.id, "pending", pending.counts, pending.requested_at)
        row = (
            self._db()
            .execute(
                "SELECT erased_at, requested_at, facts, entities, messages, passages, reports "
                "FROM erasures WHERE project = ? AND id = ?",
                (project, erasure_id),
            )
            .fetchone()
        )
        if row is None:
            return None
        counts = {k: row[k] for k in COUNTS}
        return ErasureStatus(erasure_id, "done", counts, row["requested_at"], row["erased_at"])

    def erasures(self, project: str | None = None) -> list[ErasureRecord]:
        query = (
            "SELECT id, project, subject_hash, erased_at, facts, entities, messages, passages, "
            "reports FROM erasures"
        )
        params: tuple[str, ...] = ()
        if project is not None:
            query += " WHERE project = ?"
            params = (project,)
        return [ErasureRecord(*r) for r in self._scan(query + " ORDER BY seq", params)]
