"""What must be stored together, and how it is stored: a `Unit` (a claim item,
guarded by attribute_not_exists(PK), and the items and name counts that belong to
it), packed in order into transactions of at most 100 items and ~4 MB and committed
all or nothing (a later transaction failing undoes the earlier ones of the call); a
unit too big for one transaction (a long message) is written item by item with its
claim last. Also the work marks a unit carries (docs/dynamodb.md, "Work marks"):
dirty entities and pending vectors, and the index entry of the project with work.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...domain.entity_counts import end_counts, end_names
from ...domain.model import Fact
from ...domain.validity import unsortable
from .client import (
    DROP_FAILED,
    RESEND,
    TRANSACTION_BUDGET,
    TRANSACTION_ITEMS,
    Members,
    TableClient,
    cancellation,
    error_code,
    parallel,
)
from .codec import count_attribute, item_size, page_mark_id, page_mark_passages
from .keys import (
    DIRTY,
    NAME_SK,
    VECTORS,
    Item,
    dirty_sk,
    item_key,
    key_of,
    mark_pk,
    vector_sk,
    work_entry_key,
    work_index_prefix,
)

logger = logging.getLogger(__name__)


def work_ops(table: str, units: Sequence[Any]) -> list[Item]:
    """Put each mark of these units once, and touch each index entry once."""
    marks: dict[tuple[str, str], Item] = {}
    work: dict[str, str] = {}
    for unit in units:
        marks.update(unit.marks)
        marks.update(unit.listed)
        work.update(unit.work)
    ops: list[Item] = [{"Put": {"TableName": table, "Item": m}} for m in marks.values()]
    ops += [{"Update": {"TableName": table, **work_touch(sk, p)}} for sk, p in work.items()]
    return ops


def work_touch(prefix: str, project: str) -> Item:
    """One index entry of a project with work, with a new token: the worker removes
    it only if no writer touched it since it saw the partition empty."""
    return {
        "Key": work_entry_key(prefix),
        "UpdateExpression": "SET #p = :p, #t = :t",
        "ExpressionAttributeNames": {"#p": "project", "#t": "t"},
        "ExpressionAttributeValues": {":p": {"S": project}, ":t": {"S": secrets.token_hex(8)}},
    }


@dataclass(eq=False)
class Unit:
    """What must be stored together: a claim item, guarded by attribute_not_exists(PK),
    and the items that belong to it. `names` are the entity name items it touches: the
    name (kept as first written) and how many live facts of each role it adds to them."""

    claim: Item
    items: list[Item]
    names: dict[str, tuple[Item, dict[str, int]]] = field(default_factory=dict)
    size: int = 0
    # Too big for one transaction (a long message): stored by _store_big.
    big: bool = False
    # Stored facts this one closes: Update ops (with conditions on what was read),
    # and the Update ops that undo them.
    updates: list[Item] = field(default_factory=list)
    restores: list[Item] = field(default_factory=list)
    # Work marks written with it (dirty entities, pending vectors: see "work marks"),
    # by key, and the kinds of work ("D", "V") it adds to the project's entry in the
    # index of projects with work.
    marks: dict[tuple[str, str], Item] = field(default_factory=dict)
    work: dict[str, str] = field(default_factory=dict)
    # Listing items of the entities it names (put, never undone: a listed entity whose
    # name item is gone is skipped by the readers).
    listed: dict[tuple[str, str], Item] = field(default_factory=dict)
    # ConditionChecks the write stands on (a user's tombstone: facts.py), by key; one
    # per key in a transaction.
    checks: dict[tuple[str, str], Item] = field(default_factory=dict)
    # A new fact's content marker (fact_identities.guard): a Put with a condition,
    # which stands for the unit as its claim does; removed with it on undo.
    guard: Item | None = None

    def item_keys(self) -> list[Item]:
        return [key_of(i) for i in (self.claim, *self.items)]


def name_update(pk: str, name: Item | None, counts: dict[str, int]) -> Item:
    """SET the name if the item has none yet, ADD to the live-fact count of each role."""
    names: dict[str, str] = {}
    values: dict[str, Item] = {}
    adds = []
    for n, (role, count) in enumerate(sorted(counts.items())):
        names[f"#c{n}"] = count_attribute(role)
        values[f":c{n}"] = {"N": str(count)}
        adds.append(f"#c{n} :c{n}")
    expression = f"ADD {', '.join(adds)}"
    if name is not None:
        names["#n"] = "n"
        values[":n"] = name
        expression = f"SET #n = if_not_exists(#n, :n) {expression}"
    return {
        "Key": item_key(pk, NAME_SK),
        "UpdateExpression": expression,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
    }


class _Clock:
    """Storing order: nanoseconds since the epoch, never repeated in this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0

    def next(self) -> int:
        with self._lock:
            self._last = max(time.time_ns(), self._last + 1)
            return self._last


CLOCK = _Clock()


class Stale(Exception):
    """What a batch was planned on changed before it was written: plan it again."""


def add_mark(project: str, unit: Unit, kind: str, sk: str, attributes: Item) -> None:
    pk = mark_pk(project, sk)
    mark = {**item_key(pk, sk), **attributes}
    unit.marks[(pk, sk)] = mark
    unit.work[work_index_prefix(kind, project)] = project
    unit.size += item_size(mark) + 128


def mark_dirty(project: str, unit: Unit, role: str, keys: Collection[str], token: str) -> None:
    for key in keys:
        attributes = {"role": {"S": role}, "key": {"S": key}, "t": {"S": token}}
        add_mark(project, unit, DIRTY, dirty_sk(role, key), attributes)


def mark_vector(
    project: str,
    unit: Unit,
    kind: str,
    item_id: str,
    text: str,
    role: str | None,
    position: int | None = None,
    occurred_at: str | None = None,
) -> None:
    attributes: Item = {"kind": {"S": kind}, "id": {"S": item_id}, "text": {"S": text}}
    if role is not None:
        attributes["role"] = {"S": role}
    if position is not None:
        attributes["pos"] = {"N": str(position)}
    # A passage's message's time, as passages_by_ids reads it ("" for none; absent
    # on marks written before times were kept: PendingVector.occurred_at).
    if occurred_at is not None:
        attributes["at"] = {"S": occurred_at}
    add_mark(project, unit, VECTORS, vector_sk(kind, item_id), attributes)


def mark_fact(project: str, unit: Unit, f: Fact, token: str, vectors: bool) -> None:
    """A stored fact marks both its entities dirty for its role, and (`vectors`: with a
    model) their names pending for its role. Not only when new to the role, as the rule
    is (entity_counts.new_to_role) and the embedded store does: every batch naming it
    marks it again, since a write here cannot read the count it adds to (the worker
    embeds the name again)."""
    ends = end_names(f)
    mark_dirty(project, unit, f.source_role, list(ends), token)
    if vectors:
        for key, name in ends.items():
            entity = f"{f.source_role}:{key}"
            mark_vector(project, unit, "entity", entity, name, f.source_role)
        # Its statement is embedded for recall's fact ranking.
        mark_vector(project, unit, "fact", f.id, f.statement, f.source_role)


def _occurred_at(unit: Unit) -> str:
    """A passage mark's `at`: its message's occurred_at for the index, "" for none."""
    occurred = unit.claim.get("occurred_at")
    return unsortable(occurred["S"]) if occurred is not None else ""


def mark_passages(project: str, unit: Unit, vectors: bool) -> None:
    if vectors:
        at = _occurred_at(unit)
        for p in unit.items:
            mark_vector(
                project,
                unit,
                "passage",
                p["id"]["S"],
                p["quote"]["S"],
                p["role"]["S"],
                int(p["pos"]["N"]),
                at,
            )


def mark_pages(project: str, unit: Unit, vectors: bool, token: str) -> None:
    """A paged message's vector marks: one a page, with its passages' ids and texts
    (the worker embeds each passage; codec.pending_vectors_of), cleared whole."""
    if not vectors:
        return
    at = {"S": _occurred_at(unit)}
    for page in unit.items:
        page_id = page_mark_id(page["message_id"]["S"], page["SK"]["S"])
        attributes: Item = {
            "kind": {"S": "page"},
            "id": {"S": page_id},
            "role": page["role"],
            "at": at,
            "t": {"S": token},
            "ps": page_mark_passages(page["ps"]["L"]),
        }
        if "pos" in page:
            attributes["pos"] = page["pos"]
        add_mark(project, unit, VECTORS, vector_sk("page", page_id), attributes)


def claim_ends(claim: Item) -> dict[str, int]:
    """end_counts of the fact a claim item stands for."""
    return end_counts(claim["sn"]["S"], claim["on"]["S"] if "on" in claim else None)


def dirty_marks(project: str, role: str, claim: Item, token: str) -> Unit:
    """The marks a deleted fact leaves: both its entities, for its role."""
    unit = Unit(claim={}, items=[])
    mark_dirty(project, unit, role, list(claim_ends(claim)), token)
    return unit


class UnitWrites(TableClient):
    """Units stored in transactions (see the module)."""

    def _ops(
        self, units: Sequence[Unit], *, undo: bool = False
    ) -> tuple[list[Item], dict[int, int]]:
        """The TransactItems that store these units (or, with undo, remove them again),
        and which op is whose claim (op index: unit's place). Name items are updated
        once per transaction."""
        table = self.table_name
        ops: list[Item] = []
        claims: dict[int, int] = {}
        names: dict[str, tuple[Item, dict[str, int]]] = {}
        sign = -1 if undo else 1
        for n, unit in enumerate(units):
            claims[len(ops)] = n
            claim_key = item_key(unit.claim["PK"]["S"], unit.claim["SK"]["S"])
            if undo:
                # Only what this call stored: not a fact deleted (or stored) meanwhile.
                ops.append(
                    {
                        "Delete": {
                            "TableName": table,
                            "Key": claim_key,
                            "ConditionExpression": "#w = :w",
                            "ExpressionAttributeNames": {"#w": "w"},
                            "ExpressionAttributeValues": {":w": unit.claim["w"]},
                        }
                    }
                )
                ops += [{"Delete": {"TableName": table, "Key": k}} for k in unit.item_keys()[1:]]
                if unit.guard is not None:
                    ops.append({"Delete": {"TableName": table, "Key": key_of(unit.guard["Item"])}})
                ops += [{"Update": {"TableName": table, **u}} for u in unit.restores]
            else:
                ops.append(
                    {
                        "Put": {
                            "TableName": table,
                            "Item": unit.claim,
                            "ConditionExpression": "attribute_not_exists(PK)",
                        }
                    }
                )
                if unit.guard is not None:
                    claims[len(ops)] = n
                    ops.append({"Put": {"TableName": table, **unit.guard}})
                ops += [{"Put": {"TableName": table, "Item": i}} for i in unit.items]
                ops += [{"Update": {"TableName": table, **u}} for u in unit.updates]
            for pk, (name, counts) in unit.names.items():
                merged = names.setdefault(pk, (name, {}))[1]
                for role, count in counts.items():
                    merged[role] = merged.get(role, 0) + sign * count
        for pk, (name, counts) in names.items():
            update = name_update(pk, None if undo else name, counts)
            ops.append({"Update": {"TableName": table, **update}})
        if not undo:
            checks = {k: c for u in units for k, c in u.checks.items()}
            ops += [{"ConditionCheck": {"TableName": table, **c}} for c in checks.values()]
            # Undo leaves marks: a mark without its record only costs the worker a
            # rebuild or an embedding it did not need.
            ops += work_ops(table, units)
        return ops, claims

    @staticmethod
    def _op_count(units: Sequence[Unit]) -> int:
        names = {pk for u in units for pk in u.names}
        marks = {k for u in units for k in (*u.marks, *u.listed)}
        work = {k for u in units for k in u.work}
        checks = {k for u in units for k in u.checks}
        return (
            len(checks)
            + sum(1 + len(u.items) + len(u.updates) + (u.guard is not None) for u in units)
            + len(names)
            + len(marks)
            + len(work)
        )

    def _groups(self, units: Sequence[Unit]) -> Iterator[list[Unit]]:
        """Units packed in order into transactions of at most 100 items and ~4 MB."""
        group: list[Unit] = []
        size = 0
        for unit in units:
            if group and (
                self._op_count([*group, unit]) > TRANSACTION_ITEMS
                or size + unit.size > TRANSACTION_BUDGET
            ):
                yield group
                group, size = [], 0
            group.append(unit)
            size += unit.size
        if group:
            yield group

    def _commit(self, group: list[Unit], *, undo: bool = False, strict: bool = False) -> list[Unit]:
        """One transaction. A unit whose claim condition fails is dropped (stored: the
        id is taken, so the first copy is kept; undo: it is no longer this call's) and
        the rest retried; conflicts and throttling are retried with backoff. Returns
        the units written. `strict`: any failed condition raises Stale instead (the
        batch was planned on what it read, and must be planned again)."""
        units = Members(group, lambda given: self._ops(given, undo=undo))
        if not strict:
            return self._transact(units, DROP_FAILED)
        try:
            return self._transact(units, RESEND)
        except Exception as error:
            reasons = cancellation(error)
            if reasons is not None and reasons.failed_checks:
                raise Stale() from error
            raise

    def _store_units(self, units: Sequence[Unit], *, strict: bool = False) -> list[Unit]:
        """Store units in as few transactions as DynamoDB's limits allow, all or nothing.

        When a later transaction fails, what the earlier ones stored in this call is
        removed again before the error is raised. Returns the units stored (those whose
        claim was already taken are not)."""
        stored: list[Unit] = []
        try:
            for group in self._groups([u for u in units if not u.big]):
                stored += self._commit(group, strict=strict)
            self._store_big([u for u in units if u.big], stored)
        except BaseException:
            self._undo(stored)
            raise
        return stored

    def _undo(self, units: Sequence[Unit]) -> None:
        """Best effort: remove what this call stored, and its counts on name items."""
        try:
            for group in self._groups([u for u in units if not u.big]):
                self._commit(group, undo=True)
            keys = [k for u in units if u.big for k in u.item_keys()]
            self._batch_write([{"DeleteRequest": {"Key": k}} for k in keys])
        except Exception:
            logger.exception("undoing a partly stored batch failed")

    def _store_big(self, units: Sequence[Unit], stored: list[Unit]) -> None:
        """Units too big for one transaction (long messages), all at once: which are
        claimed already (GetItem each), then every item and mark of the others
        (BatchWriteItem, in parallel, spread over their partitions), the index entries,
        then each claim as its unit's commit point (in parallel), appended to `stored`
        as it lands. A retry after a failure part-way rewrites the same items and then
        claims. A maximum-size batch (10 messages of 99,000 characters) is then a few
        waves of calls, not 500 calls in a row."""
        if not units:
            return
        keys = [item_key(u.claim["PK"]["S"], u.claim["SK"]["S"]) for u in units]
        held = parallel(lambda k: self._get(k, "PK") is not None, keys)
        todo = [u for u, h in zip(units, held, strict=True) if not h]
        items = [i for u in todo for i in (*u.items, *u.marks.values())]
        self._batch_write([{"PutRequest": {"Item": i}} for i in items], ordered=False)
        work = {sk: project for u in todo for sk, project in u.work.items()}
        parallel(
            lambda entry: self.client.update_item(TableName=self.table_name, **work_touch(*entry)),
            list(work.items()),
        )
        claimed = parallel(self._claim, todo)
        failed = [c for c in claimed if isinstance(c, BaseException)]
        stored += [u for u, c in zip(todo, claimed, strict=True) if c is True]
        if failed:
            raise failed[0]

    def _claim(self, unit: Unit) -> bool | BaseException:
        """Put a big unit's claim: True if it is this call's, False if another writer
        stored it meanwhile (the first copy stays), the error otherwise (returned, so
        that the claims that landed beside it are known and can be undone)."""
        try:
            self.client.put_item(
                TableName=self.table_name,
                Item=unit.claim,
                ConditionExpression="attribute_not_exists(PK)",
            )
        except Exception as error:
            if error_code(error) == "ConditionalCheckFailedException":
                return False
            return error
        return True
