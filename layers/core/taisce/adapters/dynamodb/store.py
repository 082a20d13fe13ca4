"""The AWS store: one DynamoDB table, single-table design (see docs/dynamodb.md; the
key layout is in keys.py).

Writes go through TransactWriteItems, each fact (or message with its passages) guarded
by ``attribute_not_exists(PK)`` on its claim item, so a retried or duplicated request
never stores twice and a duplicate id keeps the first copy.

The client is built lazily (no network at import or construction) and may be injected,
so a test can count round trips with a botocore event hook on ``store.client``.
"""

from __future__ import annotations

import heapq
import json
import logging
import secrets
import threading
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain, islice
from typing import Any

from ...domain.aliases import (
    Alias,
    EntityName,
    MergePlan,
    MergeResult,
    NameState,
    plan_merge,
    rekeyed,
)
from ...domain.erasure import COUNTS, ErasurePlan, ErasureRecord, ErasureStatus, PendingErasure
from ...domain.errors import InvalidRequest
from ...domain.filters import FactFilter, MessageFilter
from ...domain.listing import EntityCounts
from ...domain.model import ROLES, Fact, FactPointer, Message, Passage, Role
from ...domain.names import normalize_name
from ...domain.reports import Report
from ...domain.validity import (
    Closing,
    contradiction_key,
    plan_closings,
    sortable,
    start_of,
    unsortable,
)
from ...ports import Credential, ExtractionFailure, PendingVector, VectorKind
from .client import (
    ATTEMPTS,
    BATCH_GET_KEYS,
    DROP_FAILED,
    DROP_FAILED_AT_ONCE,
    ONCE,
    PARALLEL,
    RESEND,
    TRANSACTION_BUDGET,
    TRANSACTION_ITEMS,
    Members,
    TableClient,
    backoff,
    cancellation,
    chunks,
    error_code,
    parallel,
)
from .codec import (
    ALIAS_OF,
    ITEM_BYTES,
    audit_item,
    count_attribute,
    credential_attributes,
    credential_of,
    erasure_record_of,
    extraction_failure_of,
    extraction_item,
    fact_attributes,
    fact_of,
    item_size,
    message_attributes,
    message_listing_item,
    message_of,
    number_value,
    passage_item,
    passage_of,
    pending_erasure_attributes,
    pending_erasure_of,
    pending_vector_of,
    text_of,
)
from .keys import (
    ALIAS_PREFIX,
    CREDENTIALS_PK,
    DIRTY,
    ERASING,
    ERASURES_PK,
    EXTRACTIONS_FAILED_PK,
    EXTRACTIONS_PENDING_PK,
    FACT_SK,
    FACTS_PREFIX,
    LIST_ENTITIES,
    LIST_FACTS,
    LIST_MESSAGES,
    MESSAGE_SK,
    NAME_SK,
    PASSAGES_PREFIX,
    REPORT_CHUNK_PREFIX,
    REPORT_MEMBER_PREFIX,
    REPORT_SK,
    TOMBSTONE_PREFIX,
    VECTORS,
    WORK_PK,
    Item,
    alias_sk,
    aliases_pk,
    chunk_sk,
    credential_key,
    credential_listing_key,
    dirty_sk,
    document_key,
    entity_pk,
    erased_vector_key,
    erased_vectors_pk,
    erasing_pk,
    erasure_pk,
    erasure_work_key,
    extraction_key,
    extraction_prefix,
    fact_claim_key,
    fact_pk,
    fact_sk,
    item_key,
    key_of,
    key_tail,
    listing_key,
    listing_pks,
    message_key,
    message_listing_sk,
    message_pk,
    name_key,
    passage_sk,
    positions_key,
    report_list_pk,
    report_listing_sk,
    report_member_sk,
    report_pk,
    report_pointer_sk,
    tombstone_key,
    vector_sk,
    work_entry_key,
    work_index_prefix,
    work_pk,
)

logger = logging.getLogger(__name__)

# facts_about asks each entity for as many facts as the caller may still take (up to
# MAX_PAGE) in its first page: its callers take every fact up to their limit (a
# recall's candidate pool), so a hub is read in the same wave as the entities beside it,
# not page after page (a wave more per page). A partition with few facts costs the same
# one Query either way; pages only grow on when a filter leaves a page short.
MIN_PAGE = 10
MAX_PAGE = 1000


def _work_ops(table: str, units: Sequence[Any]) -> list[Item]:
    """Put each mark of these units once, and touch each index entry once."""
    marks: dict[tuple[str, str], Item] = {}
    work: dict[str, str] = {}
    for unit in units:
        marks.update(unit.marks)
        marks.update(unit.listed)
        work.update(unit.work)
    ops: list[Item] = [{"Put": {"TableName": table, "Item": m}} for m in marks.values()]
    ops += [{"Update": {"TableName": table, **_work_touch(sk, p)}} for sk, p in work.items()]
    return ops


def _work_touch(prefix: str, project: str) -> Item:
    """One index entry of a project with work, with a new token: the worker removes
    it only if no writer touched it since it saw the partition empty."""
    return {
        "Key": work_entry_key(prefix),
        "UpdateExpression": "SET #p = :p, #t = :t",
        "ExpressionAttributeNames": {"#p": "project", "#t": "t"},
        "ExpressionAttributeValues": {":p": {"S": project}, ":t": {"S": secrets.token_hex(8)}},
    }


# Facts moved per transaction by a merge: each is at most 5 items (the alias's copy
# deleted, up to two copies and the listing copy put, the claim updated), plus the two
# name items and the work marks.
_MERGE_FACTS = 16
_REPOINT_ALIASES = 45


def _filter_conditions(filters: FactFilter, names: dict[str, str], values: Item) -> list[str]:
    """The recall filters (domain/filters.py) as FilterExpression conditions on fact
    copies, whose times are stored in sortable form."""
    conditions: list[str] = []
    if filters.valid_at is not None:
        names.update({"#vf": "vf", "#vt": "vt"})
        values[":at"] = {"S": sortable(filters.valid_at)}
        conditions.append("(attribute_not_exists(#vf) OR #vf <= :at)")
        conditions.append("(attribute_not_exists(#vt) OR #vt > :at)")
    if filters.recorded_after is not None:
        names["#ra"] = "ra"
        values[":ra"] = {"S": sortable(filters.recorded_after)}
        conditions.append("#ra >= :ra")
    if filters.recorded_before is not None:
        names["#ra"] = "ra"
        values[":rb"] = {"S": sortable(filters.recorded_before)}
        conditions.append("#ra < :rb")
    if filters.subjects is not None:
        names.update({"#sn": "sn", "#on": "on"})
        marks = [f":s{n}" for n in range(len(filters.subjects))]
        values.update({m: {"S": k} for m, k in zip(marks, sorted(filters.subjects), strict=True)})
        listed = ", ".join(marks)
        conditions.append(f"(#sn IN ({listed}) OR #on IN ({listed}))")
    return conditions


# -- writes ----------------------------------------------------------------------


@dataclass(eq=False)
class _Unit:
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

    def item_keys(self) -> list[Item]:
        return [key_of(i) for i in (self.claim, *self.items)]


def _name_update(pk: str, name: Item | None, counts: dict[str, int]) -> Item:
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


_CLOCK = _Clock()


class _Stale(Exception):
    """What a batch was planned on changed before it was written: plan it again."""


def _pointer(fact: Fact) -> FactPointer:
    return FactPointer._make(getattr(fact, name) for name in FactPointer._fields)


class DynamoDbStore(TableClient):
    """Store and CredentialStore over one DynamoDB table (see docs/dynamodb.md)."""

    # Each call is a round trip, safe from several threads: Memory reads beside a recall.
    parallel_reads = True
    # Erasures are accepted (202) and completed by the worker (docs/API.md, "Erasure").
    defers_erasure = True

    def __init__(
        self,
        table_name: str,
        client: Any | None = None,
        endpoint_url: str | None = None,
        *,
        consistent_reads: bool = True,
        mark_extractions: bool = False,
        mark_vectors: bool = True,
        direct_reads: bool = True,
    ) -> None:
        super().__init__(
            table_name,
            client,
            endpoint_url,
            consistent_reads=consistent_reads,
            direct_reads=direct_reads,
        )
        # With an extractor configured, a new message is stored with an extraction mark.
        self.mark_extractions = mark_extractions
        # Without an embedding model nothing would take pending-vector marks, so the
        # wiring turns them off (as for the embedded store).
        self.mark_vectors = mark_vectors

    # -- transactions -------------------------------------------------------------

    def _ops(
        self, units: Sequence[_Unit], *, undo: bool = False
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
                ops += [{"Put": {"TableName": table, "Item": i}} for i in unit.items]
                ops += [{"Update": {"TableName": table, **u}} for u in unit.updates]
            for pk, (name, counts) in unit.names.items():
                merged = names.setdefault(pk, (name, {}))[1]
                for role, count in counts.items():
                    merged[role] = merged.get(role, 0) + sign * count
        for pk, (name, counts) in names.items():
            update = _name_update(pk, None if undo else name, counts)
            ops.append({"Update": {"TableName": table, **update}})
        if not undo:
            # Undo leaves marks: a mark without its record only costs the worker a
            # rebuild or an embedding it did not need.
            ops += _work_ops(table, units)
        return ops, claims

    @staticmethod
    def _op_count(units: Sequence[_Unit]) -> int:
        names = {pk for u in units for pk in u.names}
        marks = {k for u in units for k in (*u.marks, *u.listed)}
        work = {k for u in units for k in u.work}
        return (
            sum(1 + len(u.items) + len(u.updates) for u in units)
            + len(names)
            + len(marks)
            + len(work)
        )

    def _groups(self, units: Sequence[_Unit]) -> Iterator[list[_Unit]]:
        """Units packed in order into transactions of at most 100 items and ~4 MB."""
        group: list[_Unit] = []
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

    def _commit(
        self, group: list[_Unit], *, undo: bool = False, strict: bool = False
    ) -> list[_Unit]:
        """One transaction. A unit whose claim condition fails is dropped (stored: the
        id is taken, so the first copy is kept; undo: it is no longer this call's) and
        the rest retried; conflicts and throttling are retried with backoff. Returns
        the units written. `strict`: any failed condition raises _Stale instead (the
        batch was planned on what it read, and must be planned again)."""
        units = Members(group, lambda given: self._ops(given, undo=undo))
        if not strict:
            return self._transact(units, DROP_FAILED)
        try:
            return self._transact(units, RESEND)
        except Exception as error:
            reasons = cancellation(error)
            if reasons is not None and reasons.failed_checks:
                raise _Stale() from error
            raise

    def _store_units(self, units: Sequence[_Unit], *, strict: bool = False) -> list[_Unit]:
        """Store units in as few transactions as DynamoDB's limits allow, all or nothing.

        When a later transaction fails, what the earlier ones stored in this call is
        removed again before the error is raised. Returns the units stored (those whose
        claim was already taken are not)."""
        stored: list[_Unit] = []
        try:
            for group in self._groups([u for u in units if not u.big]):
                stored += self._commit(group, strict=strict)
            for unit in units:
                if unit.big and self._store_big(unit):
                    stored.append(unit)
        except BaseException:
            self._undo(stored)
            raise
        return stored

    def _undo(self, units: Sequence[_Unit]) -> None:
        """Best effort: remove what this call stored, and its counts on name items."""
        try:
            for group in self._groups([u for u in units if not u.big]):
                self._commit(group, undo=True)
            keys = [k for u in units if u.big for k in u.item_keys()]
            self._batch_write([{"DeleteRequest": {"Key": k}} for k in keys])
        except Exception:
            logger.exception("undoing a partly stored batch failed")

    def _store_big(self, unit: _Unit) -> bool:
        """A unit too big for one transaction (a long message): its items first, then
        the claim as the commit point. A retry after a failure part-way rewrites the
        same items and then claims."""
        if self._get(item_key(unit.claim["PK"]["S"], unit.claim["SK"]["S"]), "PK") is not None:
            return False
        self._batch_write(
            [{"PutRequest": {"Item": i}} for i in (*unit.items, *unit.marks.values())]
        )
        for sk, project in unit.work.items():
            self.client.update_item(TableName=self.table_name, **_work_touch(sk, project))
        try:
            self.client.put_item(
                TableName=self.table_name,
                Item=unit.claim,
                ConditionExpression="attribute_not_exists(PK)",
            )
        except Exception as error:
            if error_code(error) == "ConditionalCheckFailedException":
                return False  # stored meanwhile by another writer: the first copy stays
            raise
        return True

    # -- facts and entities -----------------------------------------------------------

    def _fact_unit(self, project: str, f: Fact, seq: str, token: str) -> _Unit:
        copy = fact_attributes(f)
        sk = fact_sk(seq)
        subject_pk = entity_pk(project, f.subject_key)
        items = [{"PK": {"S": subject_pk}, "SK": {"S": sk}, "d": {"S": "S"}, **copy}]
        # Each end of the fact counts one live fact of its role for that entity (a
        # fact about itself counts twice), as the embedded store counts them.
        names: dict[str, tuple[Item, dict[str, int]]] = {
            subject_pk: ({"S": f.subject}, {f.source_role: 1})
        }
        claim: Item = {
            **fact_claim_key(project, f.id),
            "sq": {"S": seq},
            "sn": {"S": f.subject_key},
            "r": {"S": f.source_role},
            "w": {"S": token},
        }
        if f.object_key is not None:
            claim["on"] = {"S": f.object_key}
            object_pk = entity_pk(project, f.object_key)
            if object_pk == subject_pk:
                names[subject_pk][1][f.source_role] += 1
            else:
                names[object_pk] = ({"S": f.object}, {f.source_role: 1})
                items.append({"PK": {"S": object_pk}, "SK": {"S": sk}, "d": {"S": "O"}, **copy})
        items.append({**listing_key(project, LIST_FACTS, f.id), **copy})
        unit = _Unit(claim, items, names)
        unit.size = sum(item_size(i) for i in (claim, *items)) + 256 * len(names)
        for key in {f.subject_key, *([f.object_key] if f.object_key is not None else [])}:
            listed = {**listing_key(project, LIST_ENTITIES, key), "k": {"S": key}}
            unit.listed[(listed["PK"]["S"], listed["SK"]["S"])] = listed
            unit.size += item_size(listed) + 128
        return unit

    def put_facts(self, project: str, facts: Sequence[Fact]) -> None:
        # Aliases first: a contradiction is found under the entity's own key.
        facts = self._resolve_aliases(project, facts)
        if any(contradiction_key(f) is not None for f in facts):
            self._put_facts_closing(project, facts)
            return
        # Every record is checked and turned into items before anything is written:
        # a bad record fails the batch with nothing stored.
        token = secrets.token_hex(4)
        clock = _CLOCK.next()
        units: list[_Unit] = []
        seen: set[str] = set()
        for index, f in enumerate(facts):
            if f.id in seen:
                continue  # a repeated id in one batch: the first copy is kept
            seen.add(f.id)
            unit = self._fact_unit(project, f, f"{clock:020d}.{token}.{index:06d}", token)
            self._mark_fact(project, unit, f, token)
            units.append(unit)
        self._store_units(units)

    # -- validity: contradictions close stored facts -----------------------------

    def _put_facts_closing(self, project: str, facts: Sequence[Fact]) -> None:
        """put_facts for a batch with a single-valued predicate: read what it may
        contradict, plan (domain.validity.plan_closings), then write the batch with
        the closings, each guarded by a condition on the value read. If anything
        changed meanwhile (a claim taken, a fact closed or deleted), what this call
        stored is undone and the batch planned again."""
        # Storing order is fixed when the batch starts, also for a batch planned again.
        token = secrets.token_hex(4)
        clock = _CLOCK.next()
        attempt = 0
        while True:
            try:
                self._plan_and_store(project, facts, token, clock)
                return
            except _Stale:
                if attempt >= ATTEMPTS:
                    raise
                backoff(attempt)
                attempt += 1

    def _plan_and_store(self, project: str, facts: Sequence[Fact], token: str, clock: int) -> None:
        firsts: dict[str, Fact] = {}
        place: dict[str, int] = {}
        for index, f in enumerate(facts):
            if f.id not in firsts:  # a repeated id in one batch: the first copy
                firsts[f.id] = f
                place[f.id] = index
        # Every id already stored is left out (not only the keyed ones): a claim found
        # taken while writing would make the batch plan again.
        by_pk = {fact_pk(project, f.id): f.id for f in firsts.values()}
        claims = self._batch_get([item_key(pk, FACT_SK) for pk in by_pk], "PK")
        stored = {by_pk[i["PK"]["S"]] for i in claims}
        incoming = [f for f in firsts.values() if f.id not in stored]
        earliest: dict[tuple[str, str], str] = {}
        for f in incoming:
            if contradiction_key(f) is not None:
                at = sortable(start_of(f))
                group = (f.subject_key, f.source_role)
                earliest[group] = min(earliest.get(group, at), at)
        existing: list[Fact] = []
        sort_keys: dict[str, str] = {}
        for (subject_key, role), at in earliest.items():
            for item in self._query(
                KeyConditionExpression="PK = :pk AND begins_with(SK, :f)",
                FilterExpression="#d = :s AND #r = :r AND (attribute_not_exists(#vt) OR #vt > :at)",
                ExpressionAttributeNames={"#d": "d", "#r": "r", "#vt": "vt"},
                ExpressionAttributeValues={
                    ":pk": {"S": entity_pk(project, subject_key)},
                    ":f": {"S": FACTS_PREFIX},
                    ":s": {"S": "S"},
                    ":r": {"S": role},
                    ":at": {"S": at},
                },
            ):
                existing.append(fact_of(item))
                sort_keys[item["id"]["S"]] = item["SK"]["S"]
        planned, closings = plan_closings(existing, incoming)
        units: list[_Unit] = []
        by_id: dict[str, _Unit] = {}
        for f in planned:
            seq = f"{clock:020d}.{token}.{place[f.id]:06d}"
            unit = self._fact_unit(project, f, seq, token)
            self._mark_fact(project, unit, f, token)
            units.append(unit)
            by_id[f.id] = unit
        for closing in closings:
            self._add_closing(project, by_id[closing.by], closing, sort_keys[closing.fact.id])
        self._store_units(units, strict=True)

    def _add_closing(self, project: str, unit: _Unit, closing: Closing, sk: str) -> None:
        """Update ops that close a stored fact (both its copies), on what was read."""
        old = closing.fact
        ends = {entity_pk(project, old.subject_key)}
        if old.object_key is not None:
            ends.add(entity_pk(project, old.object_key))
        keys = [item_key(pk, sk) for pk in sorted(ends)]
        keys.append(listing_key(project, LIST_FACTS, old.id))  # the project's listing copy
        for key in keys:
            values: Item = {":new": {"S": sortable(closing.valid_to)}}
            if old.valid_to is None:
                condition = "attribute_exists(PK) AND attribute_not_exists(#vt)"
                restore: Item = {"UpdateExpression": "REMOVE #vt"}
            else:
                condition = "attribute_exists(PK) AND #vt = :old"
                values[":old"] = {"S": sortable(old.valid_to)}
                restore = {
                    "UpdateExpression": "SET #vt = :old",
                    "ExpressionAttributeValues": {":old": values[":old"]},
                }
            unit.updates.append(
                {
                    "Key": key,
                    "UpdateExpression": "SET #vt = :new",
                    "ConditionExpression": condition,
                    "ExpressionAttributeNames": {"#vt": "vt"},
                    "ExpressionAttributeValues": values,
                }
            )
            unit.restores.append({"Key": key, "ExpressionAttributeNames": {"#vt": "vt"}, **restore})
            unit.size += 512
        # A closed fact leaves the reports of its entities at their next rebuild.
        closed_ends = [old.subject_key] + ([old.object_key] if old.object_key else [])
        self._mark_dirty(project, unit, old.source_role, closed_ends, secrets.token_hex(4))

    def _facts_query(
        self,
        project: str,
        key: str,
        roles: Collection[Role],
        filters: FactFilter | None = None,
    ) -> dict[str, Any]:
        """The Query of one entity partition's facts, with the roles and filters."""
        params: dict[str, Any] = {
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :f)",
            "ExpressionAttributeValues": {
                ":pk": {"S": entity_pk(project, key)},
                ":f": {"S": FACTS_PREFIX},
            },
        }
        conditions: list[str] = []
        names: dict[str, str] = {}
        values = params["ExpressionAttributeValues"]
        wanted = [r for r in ROLES if r in roles]
        if len(wanted) < len(ROLES):
            marks = [f":r{n}" for n in range(len(wanted))]
            conditions.append(f"#r IN ({', '.join(marks)})")
            names["#r"] = "r"
            values.update({m: {"S": r} for m, r in zip(marks, wanted, strict=True)})
        if filters is not None:
            conditions += _filter_conditions(filters, names, values)
        if conditions:
            params["FilterExpression"] = " AND ".join(conditions)
            params["ExpressionAttributeNames"] = names
        return params

    def _facts_page(
        self, params: dict[str, Any], page: int, start: Item | None
    ) -> tuple[list[Fact], Item | None]:
        """One page (one Query) of an entity's facts, and where the next one starts."""
        extra: dict[str, Any] = {"Limit": page}
        if start is not None:
            extra["ExclusiveStartKey"] = start
        reply = self._read(
            "Query",
            {
                "TableName": self.table_name,
                "ConsistentRead": self.consistent_reads,
                "ReturnConsumedCapacity": "TOTAL",
                **params,
                **extra,
            },
        )
        return [fact_of(i) for i in reply.get("Items", [])], reply.get("LastEvaluatedKey")

    def facts_about(
        self,
        project: str,
        keys: Sequence[str],
        roles: Collection[Role],
        limit: int,
        exclude: Collection[str] = (),
        filters: FactFilter | None = None,
    ) -> Iterator[Fact]:
        """The facts of these entities, entity after entity, each in storing order.

        The first pages of up to PARALLEL entities go out at once (one wave), read
        when the caller asks for the first fact, each as large as what the caller may
        still take (so a hub needs no second page); an entity is read on page by page
        (pages growing fourfold, up to 1000) only when filters left its page short,
        and the next PARALLEL entities only if the limit is not reached."""
        if not roles or limit <= 0:
            return
        seen = set(exclude)
        count = 0
        order = list(dict.fromkeys(keys))
        for at in range(0, len(order), PARALLEL):
            chunk = order[at : at + PARALLEL]
            first = max(MIN_PAGE, min(MAX_PAGE, limit - count))
            queries = [self._facts_query(project, k, roles, filters) for k in chunk]
            pages = parallel(lambda q, first=first: self._facts_page(q, first, None), queries)
            for params, (facts, last) in zip(queries, pages, strict=True):
                page = first
                while True:
                    for fact in facts:
                        if fact.id not in seen:
                            seen.add(fact.id)
                            yield fact
                            count += 1
                            if count >= limit:
                                return
                    if not last:
                        break
                    page = min(page * 4, MAX_PAGE)
                    facts, last = self._facts_page(params, page, last)

    def facts_with_subject(self, project: str, key: str) -> list[Fact]:
        items = self._query(
            KeyConditionExpression="PK = :pk AND begins_with(SK, :f)",
            FilterExpression="#d = :s",
            ExpressionAttributeNames={"#d": "d"},
            ExpressionAttributeValues={
                ":pk": {"S": entity_pk(project, key)},
                ":f": {"S": FACTS_PREFIX},
                ":s": {"S": "S"},
            },
        )
        return [fact_of(i) for i in items]

    def delete_fact(self, project: str, fact_id: str) -> bool:
        claim_key = fact_claim_key(project, fact_id)
        claim = self._get(claim_key)
        if claim is None:
            return False
        sk = fact_sk(claim["sq"]["S"])
        role = claim["r"]["S"]
        token = secrets.token_hex(4)
        ends = [entity_pk(project, claim["sn"]["S"])]
        if "on" in claim:
            ends.append(entity_pk(project, claim["on"]["S"]))
        counts: dict[str, int] = {}
        for pk in ends:
            counts[pk] = counts.get(pk, 0) - 1
        ops = [
            {
                "Delete": {
                    "TableName": self.table_name,
                    "Key": claim_key,
                    # The claim read above: not a fact stored again meanwhile.
                    "ConditionExpression": "#w = :w",
                    "ExpressionAttributeNames": {"#w": "w"},
                    "ExpressionAttributeValues": {":w": claim["w"]},
                }
            },
            *({"Delete": {"TableName": self.table_name, "Key": item_key(pk, sk)}} for pk in counts),
            {
                "Delete": {
                    "TableName": self.table_name,
                    "Key": listing_key(project, LIST_FACTS, fact_id),
                }
            },
            *(
                {"Update": {"TableName": self.table_name, **_name_update(pk, None, {role: n})}}
                for pk, n in counts.items()
            ),
            # The reports of both ends are rebuilt without it.
            *_work_ops(self.table_name, [self._dirty_marks(project, role, claim, token)]),
        ]
        try:
            self._transact(ops, ONCE)
        except Exception as error:
            reasons = cancellation(error)
            if reasons is not None and 0 in reasons.failed_checks:
                return False  # deleted meanwhile by another request
            raise
        return True

    def held_facts(self, project: str, ids: Collection[str]) -> set[str]:
        """The facts' claim items, one BatchGetItem per 100 ids (keys only)."""
        by_pk = {fact_pk(project, i): i for i in ids}
        items = self._batch_get([item_key(pk, FACT_SK) for pk in by_pk], projection="PK")
        return {by_pk[i["PK"]["S"]] for i in items}

    def fact_pointers(self, project: str, ids: Sequence[str]) -> list[FactPointer]:
        """From the facts' listing copies (each holds the whole fact), one BatchGetItem
        per 100 ids, the calls in one wave."""
        wanted = list(dict.fromkeys(ids))
        items = self._batch_get([listing_key(project, LIST_FACTS, i) for i in wanted])
        found = {f.id: _pointer(f) for f in map(fact_of, items)}
        return [found[i] for i in wanted if i in found]

    def known_names(
        self, project: str, keys: Collection[str], roles: Collection[Role] | None = None
    ) -> set[str]:
        """Which of these names are entities of the project: named by a live fact of one
        of `roles`, or by any fact ever stored if roles is None. One BatchGetItem per
        100 names."""
        if roles is not None and not roles:
            return set()
        by_pk = {entity_pk(project, k): k for k in keys}
        items = self._batch_get([item_key(pk, NAME_SK) for pk in by_pk], direct=True)
        if roles is None:
            return {by_pk[i["PK"]["S"]] for i in items if ALIAS_OF not in i}
        counted = [count_attribute(r) for r in roles]
        return {
            by_pk[i["PK"]["S"]]
            for i in items
            if any(int(i.get(c, {}).get("N", "0")) > 0 for c in counted)
        }

    # -- messages and passages ---------------------------------------------------------

    def put_messages(
        self, project: str, messages: Sequence[Message], passages: Sequence[Passage]
    ) -> set[str]:
        """Store messages with their passages; returns the ids of messages new to the store."""
        token = secrets.token_hex(4)
        firsts: dict[str, Message] = {}
        for m in messages:
            firsts.setdefault(m.id, m)
        # An id repeated in the batch keeps the first copy and only passages of its text.
        by_message: dict[str, dict[str, Passage]] = {mid: {} for mid in firsts}
        for p in passages:
            m = firsts.get(p.message_id)
            if m is not None and m.content[p.start : p.end] == p.quote:
                by_message[m.id].setdefault(p.id, p)
        # Every message checked before positions are taken: bad input changes nothing.
        built = [
            self._message_unit(project, m, list(by_message[m.id].values()), token)
            for m in firsts.values()
        ]
        first = self._reserve_positions(project, len(built))
        units: list[_Unit] = []
        for n, (m, unit) in enumerate(zip(firsts.values(), built, strict=True)):
            # The claim and its passages share one position value (_message_unit).
            unit.claim["pos"]["N"] = str(first + n)
            # Passages first: _mark_passages reads unit.items as the message's passages.
            self._mark_passages(project, unit)
            listed = message_listing_item(project, m)
            unit.items.append(listed)
            unit.size += item_size(listed)
            if self.mark_extractions:
                mark = extraction_item(EXTRACTIONS_PENDING_PK, project, m.id)
                unit.items.append(mark)
                unit.size += item_size(mark)
            fits = self._op_count([unit]) <= TRANSACTION_ITEMS and unit.size <= TRANSACTION_BUDGET
            unit.big = not fits
            units.append(unit)
        try:
            stored = self._store_units(units)
        except BaseException:
            self._release_positions(project, first, len(units), 0)
            raise
        new = {u.claim["id"]["S"] for u in stored}
        # A retry or a duplicate stores nothing new: its range goes back if no request
        # took positions since (then the next batch follows on without a gap).
        taken = max((n + 1 for n, m in enumerate(firsts) if m in new), default=0)
        if taken < len(units):
            self._release_positions(project, first, len(units), taken)
        return new

    def _reserve_positions(self, project: str, count: int) -> int:
        """The first of `count` storing positions taken for this request: one write,
        whatever the batch's size. A message found already stored keeps its own
        position and leaves its reserved one unused (a gap: no neighbour there)."""
        if count <= 0:
            return 0
        answer = self.client.update_item(
            TableName=self.table_name,
            Key=positions_key(project),
            UpdateExpression="ADD #n :c",
            ExpressionAttributeNames={"#n": "n"},
            ExpressionAttributeValues={":c": {"N": str(count)}},
            ReturnValues="UPDATED_NEW",
        )
        return int(answer["Attributes"]["n"]["N"]) - count + 1

    def _release_positions(self, project: str, first: int, count: int, taken: int) -> None:
        """Give back the end of a reserved range that no message took (all of it after a
        failure), only if the counter still ends where this request left it: another
        request's later range is never handed out twice. Best effort: a gap left is
        only a lost neighbour."""
        if count <= 0:
            return
        try:
            self.client.update_item(
                TableName=self.table_name,
                Key=positions_key(project),
                UpdateExpression="SET #n = :keep",
                ConditionExpression="#n = :end",
                ExpressionAttributeNames={"#n": "n"},
                ExpressionAttributeValues={
                    ":keep": {"N": str(first + taken - 1)},
                    ":end": {"N": str(first + count - 1)},
                },
            )
        except Exception as error:
            if error_code(error) != "ConditionalCheckFailedException":
                logger.warning("giving back unused message positions failed", exc_info=True)

    def _message_unit(self, project: str, m: Message, passages: list[Passage], token: str) -> _Unit:
        owner = f"message {getattr(m, 'id', None)!r}"
        pk = message_pk(project, m.id)
        # The storing position, set by put_messages once reserved: one value shared by
        # the claim and every passage item, sized here as the widest it can be.
        pos = {"N": "9" * 15}
        claim: Item = {**item_key(pk, MESSAGE_SK), "w": {"S": token}, "pos": pos}
        claim.update(message_attributes(m))
        items: list[Item] = []
        starts: set[int] = set()
        for p in passages:
            number_value(f"passage {getattr(p, 'id', None)!r}", "start", p.start)
            if p.start in starts:
                continue  # one passage per place in the text
            starts.add(p.start)
            items.append(passage_item(pk, p, pos))
        sizes = [item_size(i) for i in (claim, *items)]
        if max(sizes) > ITEM_BYTES:
            raise ValueError(f"{owner}: too large for one DynamoDB item")
        return _Unit(claim, items, size=sum(sizes))

    def passages_of(self, project: str, message_id: str, *, direct: bool = False) -> list[Passage]:
        """The message's passages, by start (`direct`: one of the recall's reads)."""
        items = self._query(
            direct=direct,
            KeyConditionExpression="PK = :pk AND begins_with(SK, :s)",
            ExpressionAttributeValues={
                ":pk": {"S": message_pk(project, message_id)},
                ":s": {"S": PASSAGES_PREFIX},
            },
        )
        return [passage_of(i) for i in items]

    def passages_by_ids(
        self,
        project: str,
        ids: Sequence[str],
        messages: MessageFilter | None = None,
        times: bool = False,
    ) -> list[Passage]:
        """The passages with these ids, in the order given (unknown ids left out).

        A passage id is "<message id>#<n>": one Query per message they come from, and
        with a message filter, or when asked for `times` (a question naming a month), the
        messages' times by BatchGetItem (100 messages a call); all of them in parallel
        (one wave, however many messages the passages come from). These are the recall's
        reads: sent directly (see _read)."""
        wanted = set(ids)
        message_ids = list(dict.fromkeys(i.rpartition("#")[0] for i in ids if "#" in i))
        reads: list[tuple[str, Sequence[str]]] = [("passages", [m]) for m in message_ids]
        if messages is not None or times:
            reads += [
                ("times", message_ids[n : n + BATCH_GET_KEYS])
                for n in range(0, len(message_ids), BATCH_GET_KEYS)
            ]

        def read(what: tuple[str, Sequence[str]]) -> Any:
            kind, of = what
            if kind == "times":
                keys = [message_key(project, m) for m in of]
                return self._batch_get_chunk(keys, "PK, occurred_at, recorded_at", direct=True)
            return self.passages_of(project, of[0], direct=True)

        passages: dict[str, list[Passage]] = {}
        times_of: dict[str, Item] = {}
        for (kind, of), result in zip(reads, parallel(read, reads), strict=True):
            if kind == "passages":
                passages[of[0]] = result
            else:
                times_of.update((i["PK"]["S"], i) for i in result)
        found: dict[str, Passage] = {}
        for message_id in message_ids:
            times_item = times_of.get(message_pk(project, message_id))
            occurred = times_item["occurred_at"]["S"] if times_item is not None else None
            if messages is not None and (
                times_item is None
                or not messages.admits(
                    times_item["occurred_at"]["S"], times_item["recorded_at"]["S"]
                )
            ):
                continue
            for p in passages[message_id]:
                if p.id in wanted:
                    when = unsortable(occurred) if occurred is not None else None
                    found[p.id] = p._replace(occurred_at=when)
        return [found[i] for i in ids if i in found]

    # -- credentials ---------------------------------------------------------------------

    def add_credential(self, credential: Credential, secret_hash: str) -> None:
        owner = f"credential {credential.id!r}"
        attributes = credential_attributes(credential)
        by_hash = {**credential_key(secret_hash), **attributes}
        listed = {
            **credential_listing_key(credential.id),
            **attributes,
            "hash": {"S": secret_hash},
        }
        ops = [
            {
                "Put": {
                    "TableName": self.table_name,
                    "Item": item,
                    "ConditionExpression": "attribute_not_exists(PK)",
                }
            }
            for item in (by_hash, listed)
        ]
        try:
            self._transact(ops, ONCE, consumed=False)
        except Exception as error:
            if cancellation(error) is not None:
                raise ValueError(f"{owner}: its id or hash is already stored") from None
            raise

    def project_for(self, secret_hash: str) -> str | None:
        item = self._get(credential_key(secret_hash))
        if item is None or "revoked_at" in item:
            return None
        return item["project"]["S"]

    def list_credentials(self, project: str | None = None) -> list[Credential]:
        params: dict[str, Any] = {
            "KeyConditionExpression": "PK = :pk",
            "ExpressionAttributeValues": {":pk": {"S": CREDENTIALS_PK}},
        }
        if project is not None:
            params["FilterExpression"] = "#p = :p"
            params["ExpressionAttributeNames"] = {"#p": "project"}
            params["ExpressionAttributeValues"][":p"] = {"S": project}
        found = [credential_of(i) for i in self._query(**params)]
        return sorted(found, key=lambda c: (c.created_at, c.id))

    def revoke_credential(self, credential_id: str, revoked_at: str) -> bool:
        listed = self._get(credential_listing_key(credential_id))
        if listed is None or "revoked_at" in listed:
            return False
        update = {
            "UpdateExpression": "SET revoked_at = :t",
            "ConditionExpression": "attribute_exists(PK) AND attribute_not_exists(revoked_at)",
            "ExpressionAttributeValues": {":t": {"S": revoked_at}},
        }
        keys = (
            credential_listing_key(credential_id),
            credential_key(listed["hash"]["S"]),
        )
        ops = [{"Update": {"TableName": self.table_name, "Key": k, **update}} for k in keys]
        try:
            self._transact(ops, ONCE, consumed=False)
        except Exception as error:
            if cancellation(error) is not None:
                return False  # revoked meanwhile
            raise
        return True

    # -- extraction (messages -> facts) ----------------------------------------------------

    def _extraction_items(
        self, pk: str, project: str | None, limit: int | None = None
    ) -> Iterator[Item]:
        params: dict[str, Any] = {
            "KeyConditionExpression": "PK = :pk",
            "ExpressionAttributeValues": {":pk": {"S": pk}},
        }
        if project is not None:
            params["KeyConditionExpression"] += " AND begins_with(SK, :p)"
            params["ExpressionAttributeValues"][":p"] = {"S": extraction_prefix(project)}
        if limit is not None:
            params["Limit"] = limit
        # Stops at the limit without asking for the next page.
        for n, item in enumerate(self._query(**params), start=1):
            yield item
            if limit is not None and n >= limit:
                return

    def message(self, project: str, message_id: str) -> Message | None:
        item = self._get(message_key(project, message_id))
        if item is None:
            return None
        return message_of(item)

    def extraction_projects(self) -> list[str]:
        projects = {i["project"]["S"] for i in self._extraction_items(EXTRACTIONS_PENDING_PK, None)}
        return sorted(projects)

    def pending_extractions(self, project: str, limit: int) -> list[str]:
        items = self._extraction_items(EXTRACTIONS_PENDING_PK, project, limit)
        return [i["message_id"]["S"] for i in items]

    def extraction_pending(self, project: str, message_id: str) -> bool:
        key = extraction_key(EXTRACTIONS_PENDING_PK, project, message_id)
        return self._get(key, "PK") is not None

    def finish_extraction(
        self, project: str, message_id: str, failure: ExtractionFailure | None = None
    ) -> None:
        key = extraction_key(EXTRACTIONS_PENDING_PK, project, message_id)
        if failure is None:
            self.client.delete_item(TableName=self.table_name, Key=key)
            return
        delete = {"Delete": {"TableName": self.table_name, "Key": key}}
        record = {
            **extraction_item(EXTRACTIONS_FAILED_PK, project, message_id),
            "error": {"S": failure.error},
            "attempts": number_value("failure", "attempts", failure.attempts),
            "failed_at": {"S": failure.failed_at},
        }
        put = {"Put": {"TableName": self.table_name, "Item": record}}
        self._transact([delete, put], ONCE, consumed=False)

    def failed_extractions(self, project: str | None = None) -> list[ExtractionFailure]:
        found = [
            extraction_failure_of(i) for i in self._extraction_items(EXTRACTIONS_FAILED_PK, project)
        ]
        return sorted(found, key=lambda f: (f.project, f.message_id))

    def replay_extractions(
        self, project: str | None = None, message_ids: Collection[str] | None = None
    ) -> list[ExtractionFailure]:
        wanted = set(message_ids) if message_ids is not None else None
        replayed: list[ExtractionFailure] = []
        for failure in self.failed_extractions(project):
            if wanted is not None and failure.message_id not in wanted:
                continue
            failed = extraction_key(EXTRACTIONS_FAILED_PK, failure.project, failure.message_id)
            mark = extraction_item(EXTRACTIONS_PENDING_PK, failure.project, failure.message_id)
            ops = [
                {
                    "Delete": {
                        "TableName": self.table_name,
                        "Key": failed,
                        "ConditionExpression": "attribute_exists(PK)",
                    }
                },
                {"Put": {"TableName": self.table_name, "Item": mark}},
            ]
            try:
                self._transact(ops, ONCE, consumed=False)
            except Exception as error:
                if cancellation(error) is not None:
                    continue  # replayed meanwhile by another caller
                raise
            replayed.append(failure)
        return replayed

    # -- entities and aliases (domain/aliases.py) --------------------------------------
    # An alias's name item holds `a` (its entity's key) and no live counts; the listing
    # P#<p>#ALIAS / A#<alias key> holds `k` (alias key), `n` (alias name), `t` (entity key).

    def _alias_targets(self, project: str, keys: Collection[str]) -> dict[str, str]:
        by_pk = {entity_pk(project, k): k for k in keys}
        items = self._batch_get([item_key(pk, NAME_SK) for pk in by_pk])
        return {by_pk[i["PK"]["S"]]: i[ALIAS_OF]["S"] for i in items if ALIAS_OF in i}

    def _resolve_aliases(self, project: str, facts: Sequence[Fact]) -> Sequence[Fact]:
        """The facts with each alias key replaced by its entity's (the words stay):
        one BatchGetItem per 100 names of the batch."""
        keys = {k for f in facts for k in (getattr(f, "subject_key", None), f.object_key) if k}
        targets = self._alias_targets(project, keys) if keys else {}
        return rekeyed(facts, targets)

    def resolve_names(
        self, project: str, keys: Collection[str], roles: Collection[Role] | None = None
    ) -> dict[str, str]:
        """One BatchGetItem of the name items (as known_names), and a second one for the
        entities of the aliases found, only when the question names an alias."""
        if roles is not None and not roles:
            return {}
        by_pk = {entity_pk(project, k): k for k in keys}
        items = self._batch_get([item_key(pk, NAME_SK) for pk in by_pk], direct=True)
        counted = [count_attribute(r) for r in roles] if roles is not None else []
        found: dict[str, str] = {}
        aliased: dict[str, str] = {}
        for i in items:
            key = by_pk[i["PK"]["S"]]
            if ALIAS_OF in i:
                aliased[key] = i[ALIAS_OF]["S"]
            elif roles is None or any(int(i.get(c, {}).get("N", "0")) > 0 for c in counted):
                found[key] = key
        if aliased:
            live = self.known_names(project, set(aliased.values()), roles)
            found.update((k, t) for k, t in aliased.items() if t in live)
        return found

    def merge_entities(
        self, project: str, alias_key: str, alias_text: str, into_key: str, into_text: str
    ) -> MergeResult:
        """Three steps, each re-runnable: (1) one transaction marks the alias (the commit
        point: writes resolve it from then on) and lists it; (2) its own aliases are
        re-pointed; (3) its facts move, 20 a transaction, each with its name counts. A
        crash part-way leaves a state that the same merge, sent again, completes."""
        for attempt in range(ATTEMPTS):
            plan, alias_name, into_name = self._plan_merge(
                project, alias_key, alias_text, into_key, into_text
            )
            if self._mark_alias(project, plan.alias_key, alias_name, plan.target_key):
                break
            backoff(attempt)  # a concurrent merge changed one of the names: check again
        else:
            raise InvalidRequest("the names changed during the merge; send it again")
        repointed = self._repoint_aliases(project, plan.alias_key, plan.target_key)
        moved = self._move_facts(project, plan.alias_key, plan.target_key, into_name)
        return MergeResult(alias_name, into_name, moved, repointed)

    def _plan_merge(
        self, project: str, alias_key: str, alias_text: str, into_key: str, into_text: str
    ) -> tuple[MergePlan, str, str]:
        """The merge checked against both name items (one BatchGetItem), and the names
        to answer with: the alias and the entity as first written."""
        pks = {entity_pk(project, alias_key): alias_key, entity_pk(project, into_key): into_key}
        found = self._batch_get([item_key(pk, NAME_SK) for pk in pks])
        items = {pks[i["PK"]["S"]]: i for i in found}

        def state(key: str) -> NameState:
            item = items.get(key)
            alias_of = text_of(item, ALIAS_OF) if item else None
            return NameState(key, alias_of, item is not None and alias_of is None)

        plan = plan_merge(state(alias_key), state(into_key), alias_text, into_text)
        target = items.get(plan.target_key) or self._get(name_key(project, plan.target_key))
        alias_item = items.get(alias_key)
        alias_name = (text_of(alias_item, "n") if alias_item else None) or alias_text
        into_name = (text_of(target, "n") if target else None) or into_text
        return plan, alias_name, into_name

    def _mark_alias(self, project: str, alias: str, name: str, target: str) -> bool:
        """The commit point; False if a condition failed (a concurrent merge)."""
        table = self.table_name
        ops = [
            {
                "ConditionCheck": {
                    "TableName": table,
                    "Key": name_key(project, target),
                    "ConditionExpression": "attribute_exists(PK) AND attribute_not_exists(#a)",
                    "ExpressionAttributeNames": {"#a": ALIAS_OF},
                }
            },
            {
                "Update": {
                    "TableName": table,
                    "Key": name_key(project, alias),
                    "UpdateExpression": "SET #n = if_not_exists(#n, :n), #a = :t",
                    "ConditionExpression": "attribute_not_exists(#a) OR #a = :t",
                    "ExpressionAttributeNames": {"#n": "n", "#a": ALIAS_OF},
                    "ExpressionAttributeValues": {":n": {"S": name}, ":t": {"S": target}},
                }
            },
            {
                "Put": {
                    "TableName": table,
                    "Item": {
                        **item_key(aliases_pk(project), alias_sk(alias)),
                        "k": {"S": alias},
                        "n": {"S": name},
                        "t": {"S": target},
                    },
                }
            },
        ]
        try:
            self._transact(ops)
        except Exception as error:
            if cancellation(error) is None:
                raise
            return False
        return True

    def remove_aliases(self, project: str, keys: Collection[str]) -> int:
        wanted = set(keys)
        gone = [i for i in self._listed_aliases(project) if {i["k"]["S"], i["t"]["S"]} & wanted]
        requests: list[Item] = []
        for item in gone:
            requests.append({"DeleteRequest": {"Key": key_of(item)}})
            requests.append({"DeleteRequest": {"Key": name_key(project, item["k"]["S"])}})
            requests.append(
                {"DeleteRequest": {"Key": listing_key(project, LIST_ENTITIES, item["k"]["S"])}}
            )
        self._batch_write(requests)
        return len(gone)

    def _listed_aliases(self, project: str) -> list[Item]:
        return list(
            self._query(
                KeyConditionExpression="PK = :pk AND begins_with(SK, :a)",
                ExpressionAttributeValues={
                    ":pk": {"S": aliases_pk(project)},
                    ":a": {"S": ALIAS_PREFIX},
                },
            )
        )

    def _repoint_aliases(self, project: str, alias: str, target: str) -> int:
        """The aliases of the alias become the target's (aliases stay flat)."""
        mine = [i for i in self._listed_aliases(project) if i["t"]["S"] == alias]
        table = self.table_name
        for start in range(0, len(mine), _REPOINT_ALIASES):
            ops: list[Item] = []
            for item in mine[start : start + _REPOINT_ALIASES]:
                ops.append(
                    {
                        "Update": {
                            "TableName": table,
                            "Key": key_of(item),
                            "UpdateExpression": "SET t = :t",
                            "ExpressionAttributeValues": {":t": {"S": target}},
                        }
                    }
                )
                ops.append(
                    {
                        "Update": {
                            "TableName": table,
                            "Key": name_key(project, item["k"]["S"]),
                            "UpdateExpression": "SET #a = :t",
                            "ExpressionAttributeNames": {"#a": ALIAS_OF},
                            "ExpressionAttributeValues": {":t": {"S": target}},
                        }
                    }
                )
            self._transact(ops)
        return len(mine)

    def _move_facts(self, project: str, alias: str, target: str, target_name: str) -> int:
        """Move the alias partition's fact copies to the target's, a page at a time, until
        none is left. Each fact keeps its seq (its place in storing order) and words."""
        alias_pk = entity_pk(project, alias)
        moved = 0
        params: dict[str, Any] = {
            "TableName": self.table_name,
            "ConsistentRead": True,
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :f)",
            "ExpressionAttributeValues": {":pk": {"S": alias_pk}, ":f": {"S": FACTS_PREFIX}},
            "Limit": _MERGE_FACTS,
        }
        while True:
            copies = self.client.query(**params).get("Items", [])
            if not copies:
                return moved
            moved += self._move_copies(project, alias, target, target_name, copies)
            # On past this page: what it held has moved, or has no claim (not a stored
            # fact) and must not be read again forever. Writes racing the merge sort later.
            params["ExclusiveStartKey"] = item_key(alias_pk, copies[-1]["SK"]["S"])

    def _move_copies(
        self, project: str, alias: str, target: str, target_name: str, copies: list[Item]
    ) -> int:
        """One transaction moving these copies; a fact deleted meanwhile is left out."""
        moves = Members(
            copies, lambda given: self._move_ops(project, alias, target, target_name, given)
        )
        return len(self._transact(moves, DROP_FAILED_AT_ONCE))

    def _move_ops(
        self, project: str, alias: str, target: str, target_name: str, copies: Sequence[Item]
    ) -> tuple[list[Item], dict[int, int]]:
        """The ops that move these copies, and which op is whose claim update."""
        table = self.table_name
        alias_pk, target_pk = entity_pk(project, alias), entity_pk(project, target)
        ops: list[Item] = []
        claims: dict[int, int] = {}
        counts: dict[str, int] = {}
        for place, copy in enumerate(copies):
            sk = copy["SK"]["S"]
            fact = fact_of(copy)
            sn = target if fact.subject_key == alias else fact.subject_key
            on = target if fact.object_key == alias else fact.object_key
            ends = (fact.subject_key == alias) + (fact.object_key == alias)
            counts[fact.source_role] = counts.get(fact.source_role, 0) + ends
            attributes = {k: v for k, v in copy.items() if k not in ("PK", "SK", "d", "sn", "on")}
            attributes["sn"] = {"S": sn}
            if on is not None:
                attributes["on"] = {"S": on}
            ops.append({"Delete": {"TableName": table, "Key": item_key(alias_pk, sk)}})
            ends_pks = dict.fromkeys(
                [entity_pk(project, sn)] + ([entity_pk(project, on)] if on else [])
            )
            for n, pk in enumerate(ends_pks):
                side = {"S": "S" if n == 0 else "O"}
                item = {"PK": {"S": pk}, "SK": {"S": sk}, "d": side, **attributes}
                ops.append({"Put": {"TableName": table, "Item": item}})
            listed = {**listing_key(project, LIST_FACTS, fact.id), **attributes}
            ops.append({"Put": {"TableName": table, "Item": listed}})
            claim_update = "SET sn = :sn, w = :w" + (", #on = :on" if on else "")
            values: Item = {
                ":sn": {"S": sn},
                ":w": {"S": secrets.token_hex(4)},
                ":sq": {"S": sk.removeprefix(FACTS_PREFIX)},
            }
            names = {"#sq": "sq"}
            if on:
                values[":on"] = {"S": on}
                names["#on"] = "on"
            claims[len(ops)] = place
            # The claim names where the copies live; a new `w` makes a delete that
            # read the old claim retry rather than leave the moved copies behind.
            ops.append(
                {
                    "Update": {
                        "TableName": table,
                        "Key": fact_claim_key(project, fact.id),
                        "UpdateExpression": claim_update,
                        "ConditionExpression": "attribute_exists(PK) AND #sq = :sq",
                        "ExpressionAttributeNames": names,
                        "ExpressionAttributeValues": values,
                    }
                }
            )
        negative = {role: -n for role, n in counts.items() if n}
        positive = {role: n for role, n in counts.items() if n}
        if positive:
            ops.append({"Update": {"TableName": table, **_name_update(alias_pk, None, negative)}})
            ops.append({"Update": {"TableName": table, **_name_update(target_pk, None, positive)}})
            # Both ends' reports are rebuilt around the moved facts (the alias's are
            # dropped), and the entity's name is embedded for the roles it gained.
            marks = _Unit(claim={}, items=[])
            token = secrets.token_hex(4)
            for role in positive:
                self._mark_dirty(project, marks, role, [alias, target], token)
                if self.mark_vectors:
                    entity = f"{role}:{target}"
                    self._mark_vector(project, marks, "entity", entity, target_name, role)
            ops += _work_ops(table, [marks])
        return ops, claims

    def aliases(self, project: str) -> list[Alias]:
        listed = self._listed_aliases(project)
        pks = {entity_pk(project, i["t"]["S"]) for i in listed}
        names = {
            i["PK"]["S"]: i["n"]["S"]
            for i in self._batch_get([item_key(pk, NAME_SK) for pk in pks])
            if "n" in i
        }
        found = [
            Alias(
                alias=i["n"]["S"],
                alias_key=i["k"]["S"],
                into=names.get(entity_pk(project, i["t"]["S"]), i["t"]["S"]),
                into_key=i["t"]["S"],
            )
            for i in listed
        ]
        return sorted(found, key=lambda a: a.alias_key)

    def entity_keys(self, project: str, limit: int) -> list[str]:
        """The keys of the project's entity listing (recall step 2's spelling match): one
        Query per shard, in parallel, no name item read. A key listed whose entity is
        gone or an alias is confirmed or dropped by the caller's resolve_names."""
        keys = {i["k"]["S"] for i in self._listing(project, LIST_ENTITIES)}
        return sorted(keys)[:limit]

    def _listing(self, project: str, kind: str) -> list[Item]:
        """Every listing item of one kind: one Query per shard, the shards in parallel."""

        def shard(pk: str) -> list[Item]:
            return list(
                self._query(
                    KeyConditionExpression="PK = :pk",
                    ExpressionAttributeValues={":pk": {"S": pk}},
                )
            )

        return [i for items in parallel(shard, listing_pks(project, kind)) for i in items]

    def _name_items(self, project: str) -> list[tuple[str, Item]]:
        """(key, name item) of the project's entities (aliases too), from its listing;
        a listed key whose name item is gone (erased, undone) is left out."""
        by_pk = {
            entity_pk(project, i["k"]["S"]): i["k"]["S"]
            for i in self._listing(project, LIST_ENTITIES)
        }
        items = self._batch_get([item_key(pk, NAME_SK) for pk in by_pk])
        return [(by_pk[i["PK"]["S"]], i) for i in items]

    def entity_names(self, project: str, limit: int) -> list[EntityName]:
        """The project's live entities (not aliases): its listing, then the name items
        (BatchGetItem, in parallel chunks). Never a Scan of the table."""
        found: list[EntityName] = []
        for _, item in self._name_items(project):
            if ALIAS_OF in item:
                continue
            facts = sum(int(v["N"]) for k, v in item.items() if k.startswith("c_"))
            if facts > 0 and "n" in item:
                found.append(EntityName(normalize_name(item["n"]["S"]), item["n"]["S"], facts))
        return sorted(found, key=lambda e: e.key)[:limit]

    # -- listings for the memory explorer (domain/listing.py) ------------------------
    # Read from the project's listing shards (see "Project listings" in
    # docs/dynamodb.md): each shard is sorted, so one Query per shard (the first pages in
    # parallel) merged in order gives the project's order; then the records themselves
    # by BatchGetItem.

    def _listing_in_order(
        self,
        project: str,
        kind: str,
        *,
        after: str | None = None,
        before: str | None = None,
        filters: Sequence[tuple[str, str, str]] = (),
        descending: bool = False,
        page: int = MIN_PAGE,
    ) -> Iterator[Item]:
        """The listing items of one kind, merged across shards by sort key (ascending,
        or descending), those after/before the given sort key only, each filter a
        (attribute, function, value) with function "=" or "contains"."""
        condition = "PK = :pk"
        values: Item = {}
        if after is not None:
            condition += " AND SK > :a"
            values[":a"] = {"S": after}
        if before is not None:
            condition += " AND SK < :b"
            values[":b"] = {"S": before}
        names: dict[str, str] = {}
        tests: list[str] = []
        for n, (attribute, function, value) in enumerate(filters):
            names[f"#f{n}"] = attribute
            values[f":f{n}"] = {"S": value}
            if function == "contains":
                tests.append(f"contains(#f{n}, :f{n})")
            else:
                tests.append(f"#f{n} = :f{n}")

        def start(pk: str) -> Iterator[Item]:
            params: dict[str, Any] = {
                "KeyConditionExpression": condition,
                "ExpressionAttributeValues": {":pk": {"S": pk}, **values},
                "ScanIndexForward": not descending,
                "Limit": page,
            }
            if tests:
                params["FilterExpression"] = " AND ".join(tests)
                params["ExpressionAttributeNames"] = names
            items = self._query(**params)
            first = next(items, None)  # the first page, read in this wave
            return iter(()) if first is None else chain([first], items)

        shards = parallel(start, listing_pks(project, kind))
        return heapq.merge(*shards, key=lambda i: i["SK"]["S"], reverse=descending)

    def entity_page(
        self, project: str, after: str | None, limit: int, contains: str | None
    ) -> list[EntityCounts]:
        listed = self._listing_in_order(
            project,
            LIST_ENTITIES,
            after=None if after is None else key_tail(after),
            filters=[("k", "contains", contains)] if contains else (),
            page=max(limit, MIN_PAGE),
        )
        found: list[EntityCounts] = []
        for chunk in chunks(listed, max(limit, MIN_PAGE)):
            keys = [i["k"]["S"] for i in chunk]
            items = self._batch_get([name_key(project, k) for k in keys])
            by_pk = {i["PK"]["S"]: i for i in items}
            for k in keys:
                # An entity with no live fact (every fact deleted or erased, or merged
                # into another as an alias) is left out, as the embedded store leaves it.
                item = by_pk.get(entity_pk(project, k))
                if item is None or "n" not in item or ALIAS_OF in item:
                    continue
                counts = {
                    role: int(item[count_attribute(role)]["N"])
                    for role in ROLES
                    if count_attribute(role) in item
                }
                if any(n > 0 for n in counts.values()):
                    found.append(EntityCounts(k, item["n"]["S"], counts))  # type: ignore[arg-type]
                    if len(found) == limit:
                        return found
        return found

    def message_page(
        self,
        project: str,
        before: tuple[str, str] | None,
        limit: int,
        role: Role | None,
        source: str | None,
    ) -> list[Message]:
        filters = [("role", "=", role)] if role is not None else []
        if source is not None:
            filters.append(("source", "=", source))
        listed = self._listing_in_order(
            project,
            LIST_MESSAGES,
            before=None if before is None else message_listing_sk(*before),
            filters=filters,
            descending=True,
            page=max(limit, MIN_PAGE),
        )
        found: list[Message] = []
        for chunk in chunks(listed, max(limit, MIN_PAGE)):
            wanted = [(i["SK"]["S"].split("#", 1)[0], i["id"]["S"]) for i in chunk]
            items = self._batch_get([message_key(project, i) for _, i in wanted])
            by_id = {i["id"]["S"]: i for i in items}
            for recorded_at, message_id in wanted:
                item = by_id.get(message_id)
                # A listing item left by a write that never claimed its message (a
                # long message whose writer died) names another moment: skipped.
                if item is None or item["recorded_at"]["S"] != recorded_at:
                    continue
                found.append(message_of(item))
                if len(found) == limit:
                    return found
        return found

    # -- erasure -------------------------------------------------------------------------
    # Keys: P#<p>#ERASED / T#<subject hash> (tombstones), P#<p>#ERASED_VECTORS /
    # <kind>#<id> (vectors still to delete), ERASURES / <erased_at>#<id> (the audit
    # records of every project, as CREDS lists credentials). Finding what names an
    # entity reads the whole project from its listings (never a Scan of the table).
    # erase() runs in idempotent steps, each commit point last, so a retry of the same
    # erasure after a failure part-way finishes the job.

    def project_facts(self, project: str) -> Iterator[Fact]:
        for item in self._listing(project, LIST_FACTS):
            yield fact_of(item)

    def project_entities(self, project: str) -> Iterator[str]:
        for key, _ in self._name_items(project):
            yield key

    def project_messages(self, project: str) -> Iterator[Message]:
        ids = [i["id"]["S"] for i in self._listing(project, LIST_MESSAGES)]
        for item in self._batch_get([message_key(project, i) for i in ids]):
            yield message_of(item)

    def passages_of_messages(
        self, project: str, message_ids: Sequence[str]
    ) -> dict[str, list[Passage]]:
        """passages_of for several messages: their Queries in parallel."""
        ids = list(dict.fromkeys(message_ids))
        found = parallel(lambda m: self.passages_of(project, m), ids)
        return dict(zip(ids, found, strict=True))

    def erase(self, project: str, plan: ErasurePlan) -> int:
        self.client.put_item(TableName=self.table_name, Item=tombstone_key(project, plan.tombstone))
        erased = {entity_pk(project, k) for k in plan.entity_keys}
        # Vector ids first: recorded before the items go, so none is forgotten.
        vectors = [("entity", f"{role}:{k}") for k in plan.entity_keys for role in ROLES]
        vectors += [("passage", p.id) for r in plan.redactions for p in r.dropped]
        vectors += [("fact", i) for i in plan.fact_ids]
        self._batch_write(
            [{"PutRequest": {"Item": erased_vector_key(project, kind, i)}} for kind, i in vectors],
            ordered=False,
        )
        touched = set(plan.entity_keys) | self._fact_ends(project, plan.fact_ids)
        # Reports before facts: a retry after a failure part-way finds the facts again,
        # so it drops what is left of their reports too.
        dropped = self._erase_reports(project, touched)
        self._erase_facts(project, plan.fact_ids, erased)
        self._redact_all(project, plan.redactions)
        gone = [item_key(pk, NAME_SK) for pk in erased]
        gone += [listing_key(project, LIST_ENTITIES, k) for k in plan.entity_keys]
        # Their statements waiting to be embedded go with them.
        gone += [item_key(work_pk(project), vector_sk("fact", i)) for i in plan.fact_ids]
        self._batch_write([{"DeleteRequest": {"Key": k}} for k in gone], ordered=False)
        return dropped

    def _fact_ends(self, project: str, fact_ids: Sequence[str]) -> set[str]:
        claims = self._batch_get([fact_claim_key(project, i) for i in fact_ids])
        return {c[a]["S"] for c in claims for a in ("sn", "on") if a in c}

    def _erase_reports(self, project: str, keys: Collection[str]) -> int:
        """Drop every report of the components these entities belong to (their text may
        name the erased entity) and mark their members dirty, so the worker rebuilds
        them from the facts that remain. The erased keys are marked too: a rebuild that
        read the facts before the erasure and writes after it is redone."""
        if not keys:
            return 0
        dropped = 0
        token = secrets.token_hex(4)
        for role in ROLES:
            components = self.report_components(project, role, keys)
            members: set[str] = set(keys)
            listings = parallel(
                lambda c, r=role: self._listed_reports(project, r, c), sorted(components)
            )
            for listed in listings:
                for _, held in listed:
                    members.update(held)
            unit = _Unit(claim={}, items=[])
            self._mark_dirty(project, unit, role, sorted(members), token)
            self._batch_write(
                [{"PutRequest": {"Item": m}} for m in unit.marks.values()], ordered=False
            )
            for prefix, p in unit.work.items():
                self.client.update_item(TableName=self.table_name, **_work_touch(prefix, p))
            if components:
                dropped += len(self.replace_reports(project, role, components, []))
        return dropped

    def _erase_facts(self, project: str, fact_ids: Sequence[str], erased: set[str]) -> None:
        """Each fact's claim, copies and the counts of its ends that stay, removed in
        transactions as a failed batch is undone (a claim already gone is skipped)."""
        ids = {fact_pk(project, i): i for i in fact_ids}
        claims = self._batch_get([item_key(pk, FACT_SK) for pk in ids])
        units: list[_Unit] = []
        for claim in claims:
            sk = fact_sk(claim["sq"]["S"])
            role = claim["r"]["S"]
            ends = [entity_pk(project, claim["sn"]["S"])]
            if "on" in claim:
                ends.append(entity_pk(project, claim["on"]["S"]))
            names: dict[str, tuple[Item, dict[str, int]]] = {}
            for pk in ends:
                if pk not in erased:
                    counts = names.setdefault(pk, ({"S": ""}, {role: 0}))[1]
                    counts[role] += 1
            copies = [item_key(pk, sk) for pk in dict.fromkeys(ends)]
            copies.append(listing_key(project, LIST_FACTS, ids[claim["PK"]["S"]]))
            unit = _Unit(claim, copies, names)
            unit.size = sum(item_size(i) for i in (claim, *copies)) + 256 * len(names)
            units.append(unit)
        # Facts that share a name item go in the same transaction (fewer conflicts
        # between the transactions, which run in parallel).
        units.sort(key=lambda u: sorted(u.names))
        parallel(lambda group: self._commit(group, undo=True), list(self._groups(units)))

    def _redaction_writes(
        self, project: str, r: Any, stored: Message | None
    ) -> tuple[list[Item], Item]:
        """The passage writes (DeleteRequest/PutRequest) and the message's Update of
        one redaction (`stored`: the message as held, for its listing item)."""
        pk = message_pk(project, r.message_id)
        writes: list[Item] = [
            {"DeleteRequest": {"Key": item_key(pk, passage_sk(p.start))}} for p in r.dropped
        ]
        if stored is not None:
            # The explorer's listing names the source too: rewritten with it.
            listed = message_listing_item(project, replace(stored, source=r.source))
            writes.append({"PutRequest": {"Item": listed}})
        for p in r.kept:
            # Rewritten, it keeps its message's place.
            pos = {"N": str(p.position)} if p.position is not None else None
            writes.append({"PutRequest": {"Item": passage_item(pk, p, pos)}})
        update: dict[str, Any] = {
            "Key": item_key(pk, MESSAGE_SK),
            "ConditionExpression": "attribute_exists(PK)",
            "ExpressionAttributeNames": {"#s": "source"},
            "UpdateExpression": "SET content = :c",
            "ExpressionAttributeValues": {":c": {"S": r.content}},
        }
        if r.source is None:
            update["UpdateExpression"] += " REMOVE #s"
        else:
            update["UpdateExpression"] += ", #s = :s"
            update["ExpressionAttributeValues"][":s"] = {"S": r.source}
        return writes, update

    def _redact_all(self, project: str, redactions: Sequence[Any]) -> None:
        """Several messages per transaction (each message with its passage writes, up to
        100 items and ~4 MB), the transactions in parallel: all of a message or none.
        A message too large for that, or in a transaction that fails its condition (the
        message is gone), is redacted by itself (_redact)."""
        table = self.table_name
        groups: list[tuple[list[Any], list[Item]]] = []
        alone: list[Any] = []
        ops: list[Item] = []
        members: list[Any] = []
        size = 0
        # The messages as held, read at once (BatchGetItem, in parallel), not one
        # GetItem after another.
        keys = [message_key(project, r.message_id) for r in redactions]
        held = {i["id"]["S"]: message_of(i) for i in self._batch_get(keys)}
        for r in redactions:
            writes, update = self._redaction_writes(project, r, held.get(r.message_id))
            mine: list[Item] = [
                {"Delete": {"TableName": table, "Key": w["DeleteRequest"]["Key"]}}
                if "DeleteRequest" in w
                else {"Put": {"TableName": table, "Item": w["PutRequest"]["Item"]}}
                for w in writes
            ]
            mine.append({"Update": {"TableName": table, **update}})
            cost = sum(item_size(w["PutRequest"]["Item"]) for w in writes if "PutRequest" in w)
            cost += len(r.content.encode("utf-8")) + 512 * len(mine)
            if len(mine) > TRANSACTION_ITEMS or cost > TRANSACTION_BUDGET:
                alone.append(r)
                continue
            if len(ops) + len(mine) > TRANSACTION_ITEMS or size + cost > TRANSACTION_BUDGET:
                groups.append((members, ops))
                ops, members, size = [], [], 0
            ops += mine
            members.append(r)
            size += cost
        if members:
            groups.append((members, ops))

        def commit(group: tuple[list[Any], list[Item]]) -> None:
            try:
                self._transact(group[1])
            except Exception as error:
                if cancellation(error) is None:
                    raise
                for r in group[0]:  # one by one: the message that is gone raises
                    self._redact(project, r)

        parallel(commit, groups)
        parallel(lambda r: self._redact(project, r), alone)

    def _redact(self, project: str, r: Any) -> None:
        """Passages first, the message last: until the message is rewritten it still
        names the entity, so a retry finds it and finishes."""
        writes, update = self._redaction_writes(project, r, self.message(project, r.message_id))
        self._batch_write(writes)
        self.client.update_item(TableName=self.table_name, **update)

    def erasures(self, project: str | None = None) -> list[ErasureRecord]:
        params: dict[str, Any] = {
            "KeyConditionExpression": "PK = :pk",
            "ExpressionAttributeValues": {":pk": {"S": ERASURES_PK}},
        }
        if project is not None:
            params["FilterExpression"] = "#p = :p"
            params["ExpressionAttributeNames"] = {"#p": "project"}
            params["ExpressionAttributeValues"][":p"] = {"S": project}
        return [erasure_record_of(i) for i in self._query(**params)]

    def erased(self, project: str, hashes: Collection[str]) -> set[str]:
        items = self._batch_get([tombstone_key(project, h) for h in dict.fromkeys(hashes)])
        return {i["SK"]["S"].removeprefix(TOMBSTONE_PREFIX) for i in items}

    def clear_erased(self, project: str, hashes: Collection[str]) -> None:
        self._batch_write([{"DeleteRequest": {"Key": tombstone_key(project, h)}} for h in hashes])

    def erased_vectors(self, project: str) -> list[tuple[VectorKind, str]]:
        items = self._query(
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": erased_vectors_pk(project)}},
        )
        found: list[tuple[VectorKind, str]] = []
        for item in items:
            kind, _, item_id = item["SK"]["S"].partition("#")
            found.append((kind, item_id))  # type: ignore[arg-type]
        return found

    def clear_erased_vectors(self, project: str, items: Sequence[tuple[VectorKind, str]]) -> None:
        self._batch_write(
            [
                {"DeleteRequest": {"Key": erased_vector_key(project, k, i)}}
                for k, i in dict.fromkeys(items)
            ],
            ordered=False,
        )

    # -- erasure requests -------------------------------------------------------------
    # P#<p>#ERASING / <id>   a pending erasure: subject hash, names (needed for the work,
    #                        gone when it finishes), requested_at, counts so far
    # P#<p>#ERASURE / <id>   a finished erasure's status: counts, requested/finished at
    # WORK / ER#<p>#<id>     lists the project for the worker's sweep (no Scan)
    # finish_erasure deletes the first and the third, writes the second and the audit
    # record in one transaction, on the condition that the pending item is there.

    def begin_erasure(self, pending: PendingErasure) -> None:
        item: Item = {
            **item_key(erasing_pk(pending.project), pending.id),
            **pending_erasure_attributes(pending),
        }
        entry = {
            **erasure_work_key(pending.project, pending.id),
            "project": {"S": pending.project},
        }
        table = self.table_name
        self._transact([{"Put": {"TableName": table, "Item": i}} for i in (item, entry)])

    def pending_erasure(self, project: str, erasure_id: str) -> PendingErasure | None:
        item = self._get(item_key(erasing_pk(project), erasure_id))
        return pending_erasure_of(project, item) if item else None

    def pending_erasures(self, project: str) -> list[PendingErasure]:
        items = self._query(
            direct=True,
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": erasing_pk(project)}},
            ConsistentRead=True,
        )
        found = [pending_erasure_of(project, i) for i in items]
        return sorted(found, key=lambda p: (p.requested_at, p.id))

    def erasing_projects(self) -> list[str]:
        return self._work_projects(ERASING)

    def claim_erasure(
        self, project: str, erasure_id: str, holder: str, now: float, until: float
    ) -> bool:
        try:
            self.client.update_item(
                TableName=self.table_name,
                Key=item_key(erasing_pk(project), erasure_id),
                UpdateExpression="SET holder = :holder, held_until = :until",
                ConditionExpression=(
                    "attribute_exists(PK) AND (attribute_not_exists(holder) "
                    "OR holder = :holder OR held_until < :now)"
                ),
                ExpressionAttributeValues={
                    ":holder": {"S": holder},
                    ":until": {"N": repr(until)},
                    ":now": {"N": repr(now)},
                },
            )
        except Exception as error:
            if error_code(error) == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def add_erasure_counts(self, project: str, erasure_id: str, counts: dict[str, int]) -> None:
        names = {f"#{k}": k for k in COUNTS}
        values = {f":{k}": {"N": str(counts.get(k, 0))} for k in COUNTS}
        try:
            self.client.update_item(
                TableName=self.table_name,
                Key=item_key(erasing_pk(project), erasure_id),
                UpdateExpression="ADD " + ", ".join(f"#{k} :{k}" for k in COUNTS),
                ConditionExpression="attribute_exists(PK)",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
        except Exception as error:
            # Finished meanwhile (a duplicate message's pass): its counts are final.
            if error_code(error) != "ConditionalCheckFailedException":
                raise

    def finish_erasure(self, record: ErasureRecord, requested_at: str) -> bool:
        project = record.project
        counts = {k: {"N": str(v)} for k, v in record.counts().items()}
        status: Item = {
            **item_key(erasure_pk(project), record.id),
            "requested_at": {"S": requested_at},
            "finished_at": {"S": record.erased_at},
            **counts,
        }
        table = self.table_name
        ops: list[Item] = [
            {
                "Delete": {
                    "TableName": table,
                    "Key": item_key(erasing_pk(project), record.id),
                    "ConditionExpression": "attribute_exists(PK)",
                }
            },
            {"Delete": {"TableName": table, "Key": erasure_work_key(project, record.id)}},
            {"Put": {"TableName": table, "Item": status}},
            {"Put": {"TableName": table, "Item": audit_item(record)}},
        ]
        try:
            self._transact(ops)
        except Exception as error:
            reasons = cancellation(error)
            if reasons is not None and 0 in reasons.failed_checks:
                return False  # finished already: the audit record is written once
            raise
        return True

    def erasure_status(self, project: str, erasure_id: str) -> ErasureStatus | None:
        keys = [
            item_key(erasing_pk(project), erasure_id),
            item_key(erasure_pk(project), erasure_id),
        ]
        items = self._batch_get(keys)
        done = [i for i in items if i["PK"]["S"] == erasure_pk(project)]
        if done:
            item = done[0]
            counts = {k: int(item[k]["N"]) for k in COUNTS}
            return ErasureStatus(
                erasure_id, "done", counts, item["requested_at"]["S"], item["finished_at"]["S"]
            )
        if items:
            pending = pending_erasure_of(project, items[0])
            return ErasureStatus(erasure_id, "pending", pending.counts, pending.requested_at)
        return None

    # == work marks, pending vectors and reports ===========================================
    # Layout and reasons: docs/dynamodb.md, "Work marks" and "Reports".

    def _add_mark(self, project: str, unit: _Unit, kind: str, sk: str, attributes: Item) -> None:
        pk = work_pk(project)
        mark = {**item_key(pk, sk), **attributes}
        unit.marks[(pk, sk)] = mark
        unit.work[work_index_prefix(kind, project)] = project
        unit.size += item_size(mark) + 128

    def _mark_dirty(
        self, project: str, unit: _Unit, role: str, keys: Collection[str], token: str
    ) -> None:
        for key in keys:
            attributes = {"role": {"S": role}, "key": {"S": key}, "t": {"S": token}}
            self._add_mark(project, unit, DIRTY, dirty_sk(role, key), attributes)

    def _mark_vector(
        self,
        project: str,
        unit: _Unit,
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
        self._add_mark(project, unit, VECTORS, vector_sk(kind, item_id), attributes)

    def _mark_fact(self, project: str, unit: _Unit, f: Fact, token: str) -> None:
        """A stored fact marks both its entities dirty for its role, and (with a model)
        their names pending for its role. Unlike the embedded store, which marks a name
        only when it is new to the role, every batch naming it marks it again: a write
        here cannot read the count it adds to (the worker embeds the name again)."""
        ends = [(f.subject_key, f.subject)]
        if f.object_key is not None:
            ends.append((f.object_key, f.object))
        self._mark_dirty(project, unit, f.source_role, [k for k, _ in ends], token)
        if self.mark_vectors:
            for key, name in ends:
                entity = f"{f.source_role}:{key}"
                self._mark_vector(project, unit, "entity", entity, name, f.source_role)
            # Its statement is embedded for recall's fact ranking.
            self._mark_vector(project, unit, "fact", f.id, f.statement, f.source_role)

    def _mark_passages(self, project: str, unit: _Unit) -> None:
        if self.mark_vectors:
            occurred = unit.claim.get("occurred_at")
            at = unsortable(occurred["S"]) if occurred is not None else ""
            for p in unit.items:
                self._mark_vector(
                    project,
                    unit,
                    "passage",
                    p["id"]["S"],
                    p["quote"]["S"],
                    p["role"]["S"],
                    int(p["pos"]["N"]),
                    at,
                )

    def _dirty_marks(self, project: str, role: str, claim: Item, token: str) -> _Unit:
        """The marks a deleted fact leaves: both its entities, for its role."""
        unit = _Unit(claim={}, items=[])
        keys = [claim["sn"]["S"]] + ([claim["on"]["S"]] if "on" in claim else [])
        self._mark_dirty(project, unit, role, dict.fromkeys(keys), token)
        return unit

    def _work_projects(self, kind: str) -> list[str]:
        items = self._query(
            KeyConditionExpression="PK = :pk AND begins_with(SK, :k)",
            ExpressionAttributeValues={":pk": {"S": WORK_PK}, ":k": {"S": f"{kind}#"}},
            ProjectionExpression="#p",
            ExpressionAttributeNames={"#p": "project"},
        )
        return sorted({i["project"]["S"] for i in items})

    def _marks(self, project: str, kind: str, page: int | None = None) -> Iterator[Item]:
        params: dict[str, Any] = {
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :k)",
            "ExpressionAttributeValues": {
                ":pk": {"S": work_pk(project)},
                ":k": {"S": f"{kind}#"},
            },
            # The worker must see every mark written before it looks.
            "ConsistentRead": True,
        }
        if page is not None:
            params["Limit"] = page
        return self._query(**params)

    def _delete_marks(self, project: str, marks: Sequence[tuple[str, str, str]]) -> None:
        """Delete marks (sort key, attribute, value read) whose attribute still holds the
        value read: a mark rewritten since stays. 100 per transaction; a mark whose
        condition fails is left and the rest sent again."""
        pk = work_pk(project)
        wanted = list({sk: (sk, a, v) for sk, a, v in marks}.values())

        def deletes(group: Sequence[tuple[str, str, str]]) -> tuple[list[Item], dict[int, int]]:
            ops = [
                {
                    "Delete": {
                        "TableName": self.table_name,
                        "Key": item_key(pk, sk),
                        "ConditionExpression": "#a = :v",
                        "ExpressionAttributeNames": {"#a": attribute},
                        "ExpressionAttributeValues": {":v": {"S": value}},
                    }
                }
                for sk, attribute, value in group
            ]
            return ops, {n: n for n in range(len(group))}

        for start in range(0, len(wanted), TRANSACTION_ITEMS):
            group = Members(wanted[start : start + TRANSACTION_ITEMS], deletes)
            self._transact(group, DROP_FAILED, consumed=False)

    def _retire(self, project: str, kind: str) -> None:
        """Remove the project's index entries for this kind once it has no marks left,
        each unless a writer touched it since it was read: that writer's marks were
        then either seen by the emptiness check, or keep the entry it touched."""
        entries = list(
            self._query(
                KeyConditionExpression="PK = :pk AND begins_with(SK, :k)",
                ExpressionAttributeValues={
                    ":pk": {"S": WORK_PK},
                    ":k": {"S": work_index_prefix(kind, project)},
                },
                ConsistentRead=True,
            )
        )
        if not entries or next(self._marks(project, kind, 1), None) is not None:
            return
        for entry in entries:
            try:
                self.client.delete_item(
                    TableName=self.table_name,
                    Key=item_key(WORK_PK, entry["SK"]["S"]),
                    ConditionExpression="#t = :t",
                    ExpressionAttributeNames={"#t": "t"},
                    ExpressionAttributeValues={":t": entry["t"]},
                )
            except Exception as error:
                if error_code(error) != "ConditionalCheckFailedException":
                    raise

    # -- OpenSearch document ids (adapters/opensearch_index.py, DocumentIds) ------------
    # P#<p>#VDOC#<kind> / <item id>: `d`, the `_id`s OpenSearch assigned to the item's
    # documents, so a delete finds them by id before a search could.

    def document_ids(
        self, project: str, kind: str, item_ids: Collection[str]
    ) -> dict[str, list[str]]:
        keys = [document_key(project, kind, i) for i in dict.fromkeys(item_ids)]
        return {i["i"]["S"]: json.loads(i["d"]["S"]) for i in self._batch_get(keys)}

    def set_document_ids(self, project: str, kind: str, ids: Mapping[str, list[str]]) -> None:
        self._batch_write(
            [
                {
                    "PutRequest": {
                        "Item": {
                            **document_key(project, kind, item_id),
                            "i": {"S": item_id},
                            "d": {"S": json.dumps(doc_ids)},
                        }
                    }
                }
                for item_id, doc_ids in ids.items()
            ],
            ordered=False,
        )

    def drop_document_ids(self, project: str, kind: str, item_ids: Collection[str]) -> None:
        self._batch_write(
            [
                {"DeleteRequest": {"Key": document_key(project, kind, i)}}
                for i in dict.fromkeys(item_ids)
            ],
            ordered=False,
        )

    # -- reindexing (the `taisce reindex` command) -------------------------------------

    def mark_everything(self, project: str | None = None) -> int:
        """Mark every passage, fact and live name for indexing, and every entity for a
        report rebuild (to index what was stored while no model was configured, or to
        rebuild a lost vector collection). Reads the projects' listings, never a Scan;
        without a project, every project that holds a credential. Returns how many
        vector marks were written."""
        if project is None:
            projects = sorted({c.project for c in self.list_credentials()})
        else:
            projects = [project]
        return sum(self._mark_project(p) for p in projects)

    def _mark_project(self, project: str) -> int:
        unit = _Unit(claim={}, items=[])
        token = secrets.token_hex(4)
        for key, item in self._name_items(project):
            if ALIAS_OF in item or "n" not in item:
                continue
            for role in ROLES:
                if int(item.get(count_attribute(role), {}).get("N", "0")) > 0:
                    self._mark_dirty(project, unit, role, [key], token)
                    entity = f"{role}:{key}"
                    self._mark_vector(project, unit, "entity", entity, item["n"]["S"], role)
        ids = [i["id"]["S"] for i in self._listing(project, LIST_MESSAGES)]
        # Each message's time, carried by its passages' marks (as put_messages writes them).
        claims = self._batch_get([message_key(project, m) for m in ids], "PK, occurred_at")
        times = {
            c["PK"]["S"]: unsortable(c["occurred_at"]["S"]) for c in claims if "occurred_at" in c
        }
        for message_id, passages in self.passages_of_messages(project, ids).items():
            at = times.get(message_pk(project, message_id), "")
            for p in passages:
                self._mark_vector(project, unit, "passage", p.id, p.quote, p.role, p.position, at)
        # Every stored fact's statement, for recall's fact ranking (as the embedded store).
        for f in self.project_facts(project):
            self._mark_vector(project, unit, "fact", f.id, f.statement, f.source_role)
        self._batch_write([{"PutRequest": {"Item": m}} for m in unit.marks.values()], ordered=False)
        for prefix, p in unit.work.items():
            self.client.update_item(TableName=self.table_name, **_work_touch(prefix, p))
        return sum(1 for sk in unit.marks if sk[1].startswith(f"{VECTORS}#"))

    # -- pending vectors ---------------------------------------------------------------

    def vector_projects(self) -> list[str]:
        return self._work_projects(VECTORS)

    def pending_vectors(self, project: str, limit: int) -> list[PendingVector]:
        if limit <= 0:
            return []
        return [pending_vector_of(i) for i in islice(self._marks(project, VECTORS, limit), limit)]

    def clear_pending_vectors(self, project: str, items: Sequence[PendingVector]) -> None:
        self._delete_marks(project, [(vector_sk(i.kind, i.id), "text", i.text) for i in items])
        self._retire(project, VECTORS)

    # -- dirty marks -------------------------------------------------------------------

    def dirty_projects(self) -> list[str]:
        return self._work_projects(DIRTY)

    def dirty_entities(self, project: str) -> list[tuple[Role, str, str]]:
        marks = [(i["role"]["S"], i["key"]["S"], i["t"]["S"]) for i in self._marks(project, DIRTY)]
        return sorted(marks)

    def clear_dirty(self, project: str, marks: Sequence[tuple[Role, str, str]]) -> None:
        self._delete_marks(project, [(dirty_sk(r, k), "t", t) for r, k, t in marks])
        self._retire(project, DIRTY)

    # -- reports -----------------------------------------------------------------------

    def report_components(self, project: str, role: Role, keys: Collection[str]) -> set[str]:
        """The components whose reports hold any of these keys: one pointer item per
        entity and role (BatchGetItem, 100 keys a call)."""
        pointers = self._batch_get(
            [item_key(entity_pk(project, k), report_pointer_sk(role)) for k in keys]
        )
        return {i["component"]["S"] for i in pointers}

    def _listed_reports(
        self, project: str, role: str, component: str
    ) -> list[tuple[Item, tuple[str, ...]]]:
        """(listing item, entity keys) of a component's reports: one Query of its
        listing partition, which holds the listing items and their key chunks."""
        items = list(
            self._query(
                KeyConditionExpression="PK = :pk",
                ExpressionAttributeValues={":pk": {"S": report_list_pk(project, role, component)}},
                ConsistentRead=True,
            )
        )
        chunks = _key_chunks(items)
        return [
            (i, _keys_of(i, chunks.get(i["SK"]["S"], [])))
            for i in items
            if "id" in i  # not a key chunk
        ]

    def replace_reports(
        self, project: str, role: Role, components: Collection[str], reports: Sequence[Report]
    ) -> list[str]:
        """Drop the reports of `components` and store `reports`; returns the ids dropped.

        Not one transaction (a component's reports can be thousands of items). Every
        item is built and checked against DynamoDB's item limit before the first write
        (a component's entity keys are split over items of at most ~100 KB). New items
        are written before old ones are deleted, so a failure part-way leaves the old
        reports readable, and the pass that follows (its dirty marks are cleared only
        after this returns) finds the same components and finishes: (1) new listings,
        reports and member copies; (2) old items not rewritten: reports and member
        copies, then listings; (3) pointers, new ones put and old ones not rewritten
        deleted, last (the next pass finds components through the pointers)."""
        old = [
            entry
            for listed in parallel(
                lambda c: self._listed_reports(project, role, c), list(dict.fromkeys(components))
            )
            for entry in listed
        ]
        new_items = _report_items(project, role, reports)
        rewritten = {(i["PK"]["S"], i["SK"]["S"]) for _, i in new_items}

        def delete(keys: Sequence[tuple[str, str]]) -> None:
            gone = [k for k in dict.fromkeys(keys) if k not in rewritten]
            self._batch_write(
                [{"DeleteRequest": {"Key": item_key(pk, sk)}} for pk, sk in gone], ordered=False
            )

        self._batch_write(
            [{"PutRequest": {"Item": i}} for s, i in new_items if s == "report"], ordered=False
        )
        old_keys: set[str] = set()
        reports_gone: list[tuple[str, str]] = []
        listings_gone: list[tuple[str, str]] = []
        for listing, keys in old:
            old_keys.update(keys)
            report = listing["id"]["S"]
            members = keys if listing["level"]["N"] == "0" else ()
            reports_gone.append((report_pk(project, report), REPORT_SK))
            reports_gone += [
                (report_pk(project, report), chunk_sk("", n)) for n in range(_chunk_count(listing))
            ]
            reports_gone += [
                (entity_pk(project, k), report_member_sk(role, report)) for k in members
            ]
            pk, sk = listing["PK"]["S"], listing["SK"]["S"]
            listings_gone.append((pk, sk))
            listings_gone += [(pk, chunk_sk(sk, n)) for n in range(_chunk_count(listing))]
        delete(reports_gone)
        delete(listings_gone)
        self._batch_write(
            [{"PutRequest": {"Item": i}} for s, i in new_items if s == "pointer"], ordered=False
        )
        delete([(entity_pk(project, k), report_pointer_sk(role)) for k in sorted(old_keys)])
        kept = {r.id for r in reports}
        return [i["id"]["S"] for i, _ in old if i["id"]["S"] not in kept]

    def reports_by_ids(self, project: str, ids: Sequence[str]) -> list[Report]:
        """BatchGetItem of the report items; a report whose keys did not fit its item
        reads them from its chunks (a Query of its partition, in parallel)."""
        keys = [item_key(report_pk(project, i), REPORT_SK) for i in dict.fromkeys(ids)]
        items = self._batch_get(keys)
        split = [i for i in items if _chunk_count(i)]

        def chunks(item: Item) -> list[Item]:
            return list(
                self._query(
                    KeyConditionExpression="PK = :pk AND begins_with(SK, :k)",
                    ExpressionAttributeValues={
                        ":pk": item["PK"],
                        ":k": {"S": REPORT_CHUNK_PREFIX},
                    },
                )
            )

        keys_of = {
            i["PK"]["S"]: _keys_of(i, c)
            for i, c in zip(split, parallel(chunks, split), strict=True)
        }
        found = {r.id: r for r in (_report(i, keys_of.get(i["PK"]["S"])) for i in items)}
        return [found[i] for i in ids if i in found]

    def reports_of_entity(self, project: str, key: str, roles: Collection[Role]) -> list[Report]:
        """The level-0 reports that hold this entity, for the roles given: one Query of
        the member copies kept in the entity's partition."""
        items = self._query(
            KeyConditionExpression="PK = :pk AND begins_with(SK, :m)",
            ExpressionAttributeValues={
                ":pk": {"S": entity_pk(project, key)},
                ":m": {"S": REPORT_MEMBER_PREFIX},
            },
        )
        found = [r for r in map(_report, items) if r.role in roles]
        return sorted(found, key=lambda r: (r.role, r.id))


# A report's entity keys are held in its items as JSON up to this size, and beyond it
# in chunk items of this size ("K#<n>" beside the report, "<listing SK>#K#<n>" beside
# its listing item): a component reaches tens of thousands of entities, and DynamoDB
# refuses items over 400 KB.
KEYS_INLINE_BYTES = 64 * 1024
KEYS_CHUNK_BYTES = 100 * 1024


def _chunk_count(item: Item) -> int:
    return int(item["kc"]["N"]) if "kc" in item else 0


def _split_keys(keys: Sequence[str]) -> list[list[str]]:
    """Keys in runs whose JSON stays within KEYS_CHUNK_BYTES."""
    runs: list[list[str]] = [[]]
    size = 2
    for k in keys:
        cost = len(json.dumps(k, ensure_ascii=False).encode("utf-8")) + 1
        if runs[-1] and size + cost > KEYS_CHUNK_BYTES:
            runs.append([])
            size = 2
        runs[-1].append(k)
        size += cost
    return runs


def _with_keys(item: Item, keys: Sequence[str], owner_sk: str) -> list[Item]:
    """The item with its keys inline, or with `kc` and the chunk items that hold them."""
    encoded = json.dumps(list(keys), ensure_ascii=False)
    if len(encoded.encode("utf-8")) <= KEYS_INLINE_BYTES:
        return [{**item, "entity_keys": {"S": encoded}}]
    runs = _split_keys(keys)
    chunks = [
        {
            "PK": item["PK"],
            "SK": {"S": chunk_sk(owner_sk, n)},
            "keys": {"S": json.dumps(run, ensure_ascii=False)},
        }
        for n, run in enumerate(runs)
    ]
    return [{**item, "kc": {"N": str(len(runs))}}, *chunks]


def _key_chunks(items: Sequence[Item]) -> dict[str, list[Item]]:
    """Chunk items of a listing partition, by the sort key of the item they belong to."""
    found: dict[str, list[Item]] = {}
    for i in items:
        owner, marker, _ = i["SK"]["S"].rpartition(f"#{REPORT_CHUNK_PREFIX}")
        if marker and "keys" in i:
            found.setdefault(owner, []).append(i)
    return found


def _keys_of(item: Item, chunks: Sequence[Item]) -> tuple[str, ...]:
    """A report's or listing's entity keys: inline, or from all its chunks in order."""
    inline = text_of(item, "entity_keys")
    if inline is not None:
        return tuple(json.loads(inline))
    ordered = sorted(chunks, key=lambda c: c["SK"]["S"])
    if len(ordered) != _chunk_count(item):
        raise RuntimeError(f"report keys incomplete for {item['SK']['S']}")
    return tuple(k for c in ordered for k in json.loads(c["keys"]["S"]))


def _report_attributes(r: Report) -> Item:
    item: Item = {
        "id": {"S": r.id},
        "role": {"S": r.role},
        "level": {"N": str(r.level)},
        "title": {"S": r.title},
        "summary": {"S": r.summary},
        "path": {"S": json.dumps(list(r.path), ensure_ascii=False)},
        "source_messages": {"S": json.dumps(list(r.source_messages), ensure_ascii=False)},
        "component": {"S": r.component},
    }
    if r.parent_id is not None:
        item["parent_id"] = {"S": r.parent_id}
    return item


def _report(item: Item, keys_read: tuple[str, ...] | None = None) -> Report:
    keys = text_of(item, "entity_keys")
    return Report(
        id=item["id"]["S"],
        role=item["role"]["S"],  # type: ignore[arg-type]
        level=int(item["level"]["N"]),
        parent_id=text_of(item, "parent_id"),
        title=item["title"]["S"],
        summary=item["summary"]["S"],
        path=tuple(json.loads(item["path"]["S"])),
        source_messages=tuple(json.loads(item["source_messages"]["S"])),
        # Member copies leave the keys out (a recall never reads them; a community can
        # be large): such a report comes back with none.
        entity_keys=keys_read
        if keys_read is not None
        else (tuple(json.loads(keys)) if keys is not None else ()),
        component=item["component"]["S"],
    )


def _report_items(project: str, role: str, reports: Sequence[Report]) -> list[tuple[str, Item]]:
    """(stage, item) for each item that stores these reports: a pointer per entity and
    role to its component ("pointer"); a listing per report in its component's
    partition, the report by id (each with its keys inline or in chunks), and a copy in
    the partition of each member of a level-0 report ("report"). Raises before anything
    is written if an item would pass DynamoDB's item limit."""
    staged: list[tuple[str, Item]] = []
    pointers: dict[str, str] = {}
    for r in reports:
        for k in r.entity_keys:
            pointers.setdefault(k, r.component)
    for r in reports:
        listing_sk = report_listing_sk(r.id)
        listing = {
            **item_key(report_list_pk(project, role, r.component), listing_sk),
            "id": {"S": r.id},
            "level": {"N": str(r.level)},
        }
        staged += [("report", i) for i in _with_keys(listing, r.entity_keys, listing_sk)]
        report = {**item_key(report_pk(project, r.id), REPORT_SK), **_report_attributes(r)}
        staged += [("report", i) for i in _with_keys(report, r.entity_keys, "")]
        if r.level == 0:
            copy = _report_attributes(r)
            for k in r.entity_keys:
                staged.append(
                    (
                        "report",
                        {**item_key(entity_pk(project, k), report_member_sk(role, r.id)), **copy},
                    )
                )
    for k, component in pointers.items():
        pointer = {
            **item_key(entity_pk(project, k), report_pointer_sk(role)),
            "component": {"S": component},
        }
        staged.append(("pointer", pointer))
    for _, item in staged:
        if item_size(item) > ITEM_BYTES:
            raise ValueError(f"report item {item['SK']['S']!r} over DynamoDB's item limit")
    return staged
