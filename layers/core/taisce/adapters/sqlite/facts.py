"""Facts in the embedded store: writing a batch (aliases resolved, contradictions
closed, entities and role counts kept, work marked), and the reads recall makes."""

from __future__ import annotations

import heapq
import sqlite3
import uuid
from collections.abc import Collection, Iterator, Sequence
from dataclasses import fields
from operator import itemgetter
from typing import Any

from ...domain.aliases import rekeyed
from ...domain.entity_counts import end_counts, end_names, new_to_role
from ...domain.fact_identity import fact_identity, first_of_each
from ...domain.facts_once import facts_once
from ...domain.filters import FactFilter
from ...domain.model import Fact, FactPointer, Role
from ...domain.scope import ScopeErased, ScopeGuard, partitions, seen
from ...domain.validity import closing_reads, keyed_ids, plan_closings, sortable
from .aliases import alias_targets
from .base import SqlitePart
from .sql import MARKS, SEEN, Execute, rows_in, sortable_sql
from .work import MARK_DIRTY, MARK_VECTOR

FACT_COLUMNS = (
    "id, subject, subject_key, predicate, object, object_kind, object_key, statement, "
    "source_role, quote, context, message_id, valid_from, valid_to, recorded_at, "
    "quote_start, quote_end"
)
_POINTER_COLUMNS = ", ".join(FactPointer._fields)


if tuple(f.name for f in fields(Fact)) != tuple(c.strip() for c in FACT_COLUMNS.split(",")):
    raise RuntimeError("FACT_COLUMNS must list Fact's fields in order")


def _fact_filter_sql(filters: FactFilter | None) -> tuple[str, list[object]]:
    """The recall filters as extra WHERE conditions on facts (see domain/filters.py)."""
    if filters is None:
        return "", []
    where: list[str] = []
    params: list[object] = []
    if filters.valid_at is not None:
        at = sortable(filters.valid_at)
        where.append(f"(valid_from IS NULL OR {sortable_sql('valid_from')} <= ?)")
        where.append(f"(valid_to IS NULL OR {sortable_sql('valid_to')} > ?)")
        params += [at, at]
    if filters.recorded_after is not None:
        where.append(f"{sortable_sql('recorded_at')} >= ?")
        params.append(sortable(filters.recorded_after))
    if filters.recorded_before is not None:
        where.append(f"{sortable_sql('recorded_at')} < ?")
        params.append(sortable(filters.recorded_before))
    if filters.subjects is not None:
        marks = ",".join("?" * len(filters.subjects))
        where.append(f"(subject_key IN ({marks}) OR object_key IN ({marks}))")
        params += [*filters.subjects, *filters.subjects]
    return "".join(f" AND {w}" for w in where), params


def fact_from_row(row: tuple[Any, ...]) -> Fact:
    """A fact from a plain row (seq, then the columns of Fact in order)."""
    return Fact(*row[1:])


def _stored_ids(execute: Execute, project: str, ids: Sequence[str]) -> set[str]:
    """Which of these fact ids the project holds."""
    rows = rows_in(
        execute, f"SELECT id FROM facts WHERE project = ? AND id IN ({MARKS})", ids, (project,)
    )
    return {r[0] for r in rows}


def _erased_since(execute: Execute, guard: ScopeGuard) -> bool:
    """Whether the guard's scope was erased at or after its time: its tombstone (one
    key lookup), then the erasure's audit time (the erasure commits both at once)."""
    held = execute(
        "SELECT 1 FROM erased_subjects WHERE project = ? AND hash = ?",
        (guard.project, guard.tombstone),
    ).fetchone()
    if held is None:
        return False
    times = execute(
        "SELECT erased_at FROM erasures WHERE project = ? AND subject_hash = ?",
        (guard.project, guard.tombstone),
    )
    return any(sortable(t[0]) >= sortable(guard.recorded_at) for t in times)


def _resolve_aliases(db: sqlite3.Connection, project: str, facts: Sequence[Fact]) -> Sequence[Fact]:
    """The facts with each alias key replaced by its entity's (the words stay)."""
    keys = list({k for f in facts for k in (f.subject_key, f.object_key) if k})
    return rekeyed(facts, alias_targets(db.execute, project, keys))


def _live_identities(execute: Execute, project: str, identities: Sequence[str]) -> dict[str, str]:
    """The ids of the live facts holding these identities, by identity."""
    rows = rows_in(
        execute,
        f"SELECT identity, id FROM facts WHERE project = ? AND identity IN ({MARKS})",
        identities,
        (project,),
    )
    return {r[0]: r[1] for r in rows}


def _new_facts(
    execute: Execute, project: str, facts: Sequence[Fact]
) -> tuple[list[Fact], dict[str, str], dict[str, str]]:
    """The facts of the batch to store (none identical to a live fact or to an earlier
    one of the batch), the identity of each by id, and the ids left out mapped to the
    ids that stand for them. Read inside the write transaction: no writer comes between."""
    kept, same = first_of_each(facts)
    identities = {f.id: fact_identity(f) for f in kept}
    stored = _live_identities(execute, project, list(identities.values()))
    found = {i: stored[identities[i]] for i in identities if identities[i] in stored}
    same = {k: found.get(v, v) for k, v in same.items()}
    same.update((i, other) for i, other in found.items() if other != i)
    return [f for f in kept if f.id not in found], identities, same


class SqliteFactStore(SqlitePart):
    def put_facts(
        self, project: str, facts: Sequence[Fact], guard: ScopeGuard | None = None
    ) -> dict[str, str]:
        token = uuid.uuid4().hex
        with self._write() as db:
            if guard is not None and _erased_since(db.execute, guard):
                raise ScopeErased(project)
            facts, identities, same = _new_facts(db.execute, project, facts)
            facts = _resolve_aliases(db, project, facts)
            facts = self._close_contradictions(db, project, facts, token)
            for f in facts:
                # ON CONFLICT names the one conflict to skip (an id already stored):
                # OR IGNORE would also silently skip a row that breaks NOT NULL, and an
                # identity already held (checked above) fails the batch.
                inserted = db.execute(
                    f"INSERT INTO facts (project, {FACT_COLUMNS}, identity) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
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
                        identities[f.id],
                    ),
                ).rowcount
                if not inserted:
                    continue
                if self.switches.vectors:  # its statement is embedded for recall's ranking
                    db.execute(MARK_VECTOR, (project, "fact", f.id, f.statement, f.source_role))
                role, names = f.source_role, end_names(f)
                # Reports of these entities are rebuilt later, never during a recall.
                db.executemany(MARK_DIRTY, [(project, role, k, token) for k in names])
                db.executemany(
                    "INSERT OR IGNORE INTO entities (project, key, name) VALUES (?, ?, ?)",
                    [(project, key, name) for key, name in names.items()],
                )
                for key, n in end_counts(f.subject_key, f.object_key).items():
                    count = db.execute(
                        "INSERT INTO entity_roles (project, key, role, facts) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT (project, key, role) DO UPDATE "
                        "SET facts = facts + excluded.facts RETURNING facts",
                        (project, key, role, n),
                    ).fetchone()[0]
                    if new_to_role(count - n, n) and self.switches.vectors:  # index its name
                        db.execute(
                            MARK_VECTOR, (project, "entity", f"{role}:{key}", names[key], role)
                        )
        return same

    # -- validity: contradictions close stored facts --------------------------------

    def _close_contradictions(
        self, db: sqlite3.Connection, project: str, facts: Sequence[Fact], token: str
    ) -> list[Fact]:
        """The batch with the validity `plan_closings` gives it; the stored facts it
        closes are updated here, inside the batch's transaction."""
        keyed = keyed_ids(facts)
        if not keyed:
            return list(facts)
        stored = _stored_ids(db.execute, project, keyed)
        reads = closing_reads(facts, stored)
        existing: list[Fact] = []
        for (subject_key, role), at in reads.open_from.items():
            existing += [
                fact_from_row(r)
                for r in db.execute(
                    f"SELECT seq, {FACT_COLUMNS} FROM facts WHERE project = ? "
                    "AND subject_key = ? AND source_role = ? "
                    f"AND (valid_to IS NULL OR {sortable_sql('valid_to')} > ?) ORDER BY seq",
                    (project, subject_key, role, at),
                )
            ]
        planned, closings = plan_closings(existing, reads.incoming)
        for c in closings:
            # Closed, it no longer stands for its content (domain/fact_identity.py).
            db.execute(
                "UPDATE facts SET valid_to = ?, identity = NULL WHERE project = ? AND id = ?",
                (c.valid_to, project, c.fact.id),
            )
            # The closed fact no longer holds now: its reports are rebuilt.
            db.executemany(
                MARK_DIRTY,
                [
                    (project, c.fact.source_role, k, token)
                    for k in end_counts(c.fact.subject_key, c.fact.object_key)
                ],
            )
        changed = {f.id: f for f in planned}
        return [changed.get(f.id, f) if f.id not in stored else f for f in facts]

    def _facts_of_key(
        self, project: str, key: str, roles: Collection[Role], filters: FactFilter | None
    ) -> Iterator[Fact]:
        # Index range scans (subject side, object side, in each partition the request
        # sees), each already in storing order, merged lazily: the caller stops reading
        # once it has enough, so the cost follows what the question touches, not the
        # size of the store (nor the number of its users).
        marks = ",".join("?" * len(roles))
        where, params = _fact_filter_sql(filters)
        scans = [
            self._scan(
                f"SELECT seq, {FACT_COLUMNS} FROM facts "
                f"WHERE project = ? AND {column} = ? AND source_role IN ({marks}){where} "
                "ORDER BY seq",
                (partition, key, *roles, *params),
            )
            for partition in partitions(project)
            for column in ("subject_key", "object_key")
        ]
        for row in heapq.merge(*scans, key=itemgetter(0)):
            yield fact_from_row(row)

    def facts_about(
        self,
        project: str,
        keys: Sequence[str],
        roles: Collection[Role],
        limit: int,
        exclude: Collection[str] = (),
        filters: FactFilter | None = None,
    ) -> Iterator[Fact]:
        streams = (
            lambda _remaining, key=key: self._facts_of_key(project, key, roles, filters)
            for key in keys
        )
        return facts_once(streams, roles, limit, exclude)

    def facts_with_subject(self, project: str, key: str) -> list[Fact]:
        rows = self._scan(
            f"SELECT seq, {FACT_COLUMNS} FROM facts WHERE {SEEN} AND subject_key = ? ORDER BY seq",
            (*seen(project), key),
        )
        return [fact_from_row(r) for r in rows]

    def subject_page(
        self, project: str, key: str, after: str | None, limit: int
    ) -> list[tuple[str, Fact]]:
        rows = self._scan(
            f"SELECT seq, {FACT_COLUMNS} FROM facts WHERE project IN (?, ?) AND subject_key = ? "
            "AND seq > ? ORDER BY seq LIMIT ?",
            (*seen(project), key, int(after) if after and after.isdigit() else 0, limit),
        )
        return [(str(r[0]), fact_from_row(r)) for r in rows]

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
            role, subject_key, object_key = gone
            ends = end_counts(subject_key, object_key)
            token = uuid.uuid4().hex
            db.executemany(MARK_DIRTY, [(project, role, k, token) for k in ends])
            db.executemany(
                "UPDATE entity_roles SET facts = facts - ? "
                "WHERE project = ? AND key = ? AND role = ?",
                [(n, project, k, role) for k, n in ends.items()],
            )
            return True

    def held_facts(self, project: str, ids: Collection[str]) -> set[str]:
        return _stored_ids(self._db().execute, project, list(dict.fromkeys(ids)))

    def fact_pointers(self, project: str, ids: Sequence[str]) -> list[FactPointer]:
        # Only the pointer's columns, as plain tuples: a whole Fact per row costs more
        # than twice as much for the ~200 facts a recall reads.
        rows = rows_in(
            self._scan,
            f"SELECT {_POINTER_COLUMNS} FROM facts WHERE {SEEN} AND id IN ({MARKS})",
            ids,
            seen(project),
        )
        found = {r[0]: FactPointer._make(r) for r in rows}
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def facts_by_ids(self, project: str, ids: Sequence[str]) -> list[Fact]:
        rows = rows_in(
            self._scan,
            f"SELECT seq, {FACT_COLUMNS} FROM facts WHERE {SEEN} AND id IN ({MARKS})",
            ids,
            seen(project),
        )
        found = {f.id: f for f in map(fact_from_row, rows)}
        return [found[i] for i in dict.fromkeys(ids) if i in found]
