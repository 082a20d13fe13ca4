"""Erasure (domain/erasure.py, plan_erasure) applied to the table: tombstones
(P#<p>#ERASED), the vectors still to delete (P#<p>#ERASED_VECTORS), the audit records
of every project (ERASURES), the aliases it forgets. erase() runs in idempotent steps,
each commit point last, so a retry of the same erasure after a failure part-way
finishes the job.

Erasure requests, completed by the worker:

    P#<p>#ERASING / <id>   a pending erasure: subject hash, names (needed for the work,
                           gone when it finishes), requested_at, counts so far
    P#<p>#ERASURE / <id>   a finished erasure's status: counts, requested/finished at
    WORK / ER#<p>#<id>     lists the project for the worker's sweep (no Scan)

finish_erasure deletes the first and the third, writes the second and the audit
record in one transaction, on the condition that the pending item is there.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

from ...domain.erasure_reports import report_marks, touched_by_erasure
from ...domain.erasure_status import erasure_status
from ...domain.model import (
    COUNTS,
    ROLES,
    ErasurePlan,
    ErasureRecord,
    ErasureStatus,
    Message,
    PendingErasure,
    Role,
    VectorKind,
)
from ...domain.scope import partitions
from ...domain.validity import sortable
from .aliases import listed_aliases
from .client import TRANSACTION_BUDGET, TRANSACTION_ITEMS, cancellation, error_code, parallel
from .codec import (
    PAGED,
    audit_item,
    erasure_record_of,
    is_page,
    item_size,
    message_listing_item,
    message_of,
    page_item,
    page_mark_id,
    page_mark_passages,
    passage_item,
    passages_in_item,
    pending_erasure_attributes,
    pending_erasure_of,
)
from .fact_identities import identity_marker
from .keys import (
    ERASING,
    ERASURES_PK,
    FACT_SK,
    LIST_ENTITIES,
    LIST_FACTS,
    MESSAGE_SK,
    NAME_SK,
    TOMBSTONE_AT,
    TOMBSTONE_PREFIX,
    Item,
    entity_pk,
    erased_vector_key,
    erased_vectors_pk,
    erasing_pk,
    erasure_pk,
    erasure_work_key,
    fact_claim_key,
    fact_pk,
    fact_sk,
    item_key,
    key_of,
    listing_key,
    mark_pk,
    message_key,
    message_pk,
    name_key,
    passage_sk,
    tombstone_key,
    vector_mark_pks,
    vector_sk,
)
from .messages import DynamoDbMessageStore
from .reports import DynamoDbReportStore, listed_reports
from .units import Unit, UnitWrites, claim_ends, mark_dirty, work_touch
from .work import work_projects


class DynamoDbErasureStore:
    """erase, the tombstones and audit records it leaves, and the erasure requests.
    Dropping reports and rewriting messages go through their own parts."""

    def __init__(
        self, table: UnitWrites, reports: DynamoDbReportStore, messages: DynamoDbMessageStore
    ) -> None:
        self.table = table
        self.reports = reports
        self.messages = messages

    def erase(self, project: str, plan: ErasurePlan) -> int:
        self.table.client.put_item(
            TableName=self.table.table_name, Item=tombstone_key(project, plan.tombstone)
        )
        erased = {entity_pk(project, k) for k in plan.entity_keys}
        # Vector ids first: recorded before the items go, so none is forgotten.
        vectors = [("entity", f"{role}:{k}") for k in plan.entity_keys for role in ROLES]
        vectors += [("passage", p.id) for r in plan.redactions for p in r.dropped]
        vectors += [("fact", i) for i in plan.fact_ids]
        self.table._batch_write(
            [{"PutRequest": {"Item": erased_vector_key(project, kind, i)}} for kind, i in vectors],
            ordered=False,
        )
        # The messages to redact as held (their claims; a paged message's pages), and
        # the vector marks of what goes: a mark holds its text until the worker clears it.
        held, paged = self._held(project, plan.redactions)
        self._clear_passage_marks(project, plan.redactions, paged)
        touched = touched_by_erasure(plan.entity_keys, self._fact_ends(project, plan.fact_ids))
        # Reports before facts: a retry after a failure part-way finds the facts again,
        # so it drops what is left of their reports too.
        dropped = self._erase_reports(project, touched, plan.entity_keys)
        self._erase_facts(project, plan.fact_ids, erased)
        self._redact_all(project, plan.redactions, held, paged)
        gone = [item_key(pk, NAME_SK) for pk in erased]
        gone += [listing_key(project, LIST_ENTITIES, k) for k in plan.entity_keys]
        # Their statements and names waiting to be embedded go with them.
        sks = [vector_sk("fact", i) for i in plan.fact_ids]
        sks += [vector_sk("entity", f"{role}:{k}") for k in plan.entity_keys for role in ROLES]
        gone += [k for sk in sks for k in _mark_keys(project, sk)]
        self.table._batch_write([{"DeleteRequest": {"Key": k}} for k in gone], ordered=False)
        return dropped

    def _fact_ends(
        self, project: str, fact_ids: Sequence[str]
    ) -> list[tuple[Role, str, str | None]]:
        """(role, subject key, object key) of these facts, from their claims."""
        claims = self.table._batch_get([fact_claim_key(project, i) for i in fact_ids])
        return [(c["r"]["S"], c["sn"]["S"], c["on"]["S"] if "on" in c else None) for c in claims]

    def _erase_reports(
        self, project: str, touched: dict[Role, set[str]], erased: Collection[str]
    ) -> int:
        """Drop, per role, every report of the components the touched entities belong
        to and mark their members dirty (domain/erasure_reports.py)."""
        dropped = 0
        token = secrets.token_hex(4)
        for role, keys in touched.items():
            if not keys:
                continue
            components = self.reports.report_components(project, role, keys)
            members: set[str] = set()
            listings = parallel(
                lambda c, r=role: listed_reports(self.table, project, r, c), sorted(components)
            )
            for listed in listings:
                for _, held in listed:
                    members.update(held)
            # The erased names are marked too: reports are written here without a check
            # of the tombstones, so a rebuild that read the facts before the erasure and
            # writes after it is only undone by the worker's pass over these marks.
            marks = report_marks(keys, members, erased, mark_erased=True)
            unit = Unit(claim={}, items=[])
            mark_dirty(project, unit, role, marks.mark, token)
            self.table._batch_write(
                [{"PutRequest": {"Item": m}} for m in unit.marks.values()], ordered=False
            )
            for prefix, p in unit.work.items():
                self.table.client.update_item(
                    TableName=self.table.table_name, **work_touch(prefix, p)
                )
            if components:
                dropped += len(self.reports.replace_reports(project, role, components, []))
        return dropped

    def _erase_facts(self, project: str, fact_ids: Sequence[str], erased: set[str]) -> None:
        """Each fact's claim, copies and the counts of its ends that stay, removed in
        transactions as a failed batch is undone (a claim already gone is skipped)."""
        ids = {fact_pk(project, i): i for i in fact_ids}
        claims = self.table._batch_get([item_key(pk, FACT_SK) for pk in ids])
        units: list[Unit] = []
        for claim in claims:
            sk = fact_sk(claim["sq"]["S"])
            role = claim["r"]["S"]
            ends = {entity_pk(project, k): n for k, n in claim_ends(claim).items()}
            names: dict[str, tuple[Item, dict[str, int]]] = {
                pk: ({"S": ""}, {role: n}) for pk, n in ends.items() if pk not in erased
            }
            copies = [item_key(pk, sk) for pk in ends]
            copies.append(listing_key(project, LIST_FACTS, ids[claim["PK"]["S"]]))
            copies += identity_marker(project, claim)  # its content's marker, if it holds one
            unit = Unit(claim, copies, names)
            unit.size = sum(item_size(i) for i in (claim, *copies)) + 256 * len(names)
            units.append(unit)
        # Facts that share a name item go in the same transaction (fewer conflicts
        # between the transactions, which run in parallel).
        units.sort(key=lambda u: sorted(u.names))
        parallel(
            lambda group: self.table._commit(group, undo=True), list(self.table._groups(units))
        )

    def _redaction_writes(
        self, project: str, r: Any, stored: Message | None, paged: list[Item] | None = None
    ) -> tuple[list[Item], Item]:
        """The passage writes (DeleteRequest/PutRequest) and the message's Update of
        one redaction (`stored`: the message as held, for its listing item; `paged`:
        the page items of a message stored in pages)."""
        pk = message_pk(project, r.message_id)
        writes: list[Item] = []
        if paged is None:
            writes += [
                {"DeleteRequest": {"Key": item_key(pk, passage_sk(p.start))}} for p in r.dropped
            ]
        if stored is not None:
            # The explorer's listing names the source too: rewritten with it.
            listed = message_listing_item(project, replace(stored, source=r.source))
            writes.append({"PutRequest": {"Item": listed}})
        if paged is not None:
            writes += _page_writes(pk, r, paged)
            return writes, _message_update(pk, r)
        for p in r.kept:
            # Rewritten, it keeps its message's place.
            pos = {"N": str(p.position)} if p.position is not None else None
            writes.append({"PutRequest": {"Item": passage_item(pk, p, pos)}})
        return writes, _message_update(pk, r)

    def _pages_of(self, project: str, message_id: str) -> list[Item]:
        """The page items of a message stored in pages."""
        items = self.messages._message_items(project, message_id, False)
        return [i for i in items if is_page(i)]

    def _held(
        self, project: str, redactions: Sequence[Any]
    ) -> tuple[dict[str, Message], dict[str, list[Item]]]:
        """The messages to redact as held, read at once (BatchGetItem, in parallel), not
        one GetItem after another, and the pages of those stored in pages (a Query each,
        in parallel)."""
        keys = [message_key(project, r.message_id) for r in redactions]
        claims = self.table._batch_get(keys)
        held = {i["id"]["S"]: message_of(i) for i in claims}
        paged_ids = [i["id"]["S"] for i in claims if PAGED in i]
        found = parallel(lambda m: self._pages_of(project, m), paged_ids)
        return held, dict(zip(paged_ids, found, strict=True))

    def _clear_passage_marks(
        self, project: str, redactions: Sequence[Any], paged: dict[str, list[Item]]
    ) -> None:
        """The vector marks of the passages an erasure drops, before the passages go (a
        retry finds a redacted message no more): a passage's mark deleted; a page's
        rewritten with the passages it keeps (if the worker has not cleared it yet), or
        deleted when it keeps none."""
        deletes: list[Item] = []
        rewrites: list[tuple[Item, Item]] = []
        for r in redactions:
            dropped = {p.id for p in r.dropped}
            # A passage's own mark (a paged message's passages have one too once
            # `taisce reindex` marked them).
            sks = [vector_sk("passage", i) for i in sorted(dropped)]
            deletes += [k for sk in sks for k in _mark_keys(project, sk)]
            for page in paged.get(r.message_id, []):
                entries = page["ps"]["L"]
                kept = [e for e in entries if e["M"]["i"]["S"] not in dropped]
                if len(kept) == len(entries):
                    continue
                sk = vector_sk("page", page_mark_id(r.message_id, page["SK"]["S"]))
                key = item_key(mark_pk(project, sk), sk)
                if not kept:
                    deletes.append(key)
                    continue
                rewrites.append((key, page_mark_passages(kept)))
        self.table._batch_write([{"DeleteRequest": {"Key": k}} for k in deletes], ordered=False)

        def rewrite(change: tuple[Item, Item]) -> None:
            try:
                self.table.client.update_item(
                    TableName=self.table.table_name,
                    Key=change[0],
                    ConditionExpression="attribute_exists(PK)",
                    UpdateExpression="SET ps = :ps",
                    ExpressionAttributeValues={":ps": change[1]},
                )
            except Exception as error:
                if error_code(error) != "ConditionalCheckFailedException":
                    raise

        parallel(rewrite, rewrites)

    def _redact_all(
        self,
        project: str,
        redactions: Sequence[Any],
        held: dict[str, Message],
        paged: dict[str, list[Item]],
    ) -> None:
        """Several messages per transaction (each message with its passage writes, up to
        100 items and ~4 MB), the transactions in parallel: all of a message or none.
        A message too large for that, or in a transaction that fails its condition (the
        message is gone), is redacted by itself (_redact)."""
        table = self.table.table_name
        groups: list[tuple[list[Any], list[Item]]] = []
        alone: list[Any] = []
        ops: list[Item] = []
        members: list[Any] = []
        size = 0
        for r in redactions:
            writes, update = self._redaction_writes(
                project, r, held.get(r.message_id), paged.get(r.message_id)
            )
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
                self.table._transact(group[1])
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
        claim = self.table._get(message_key(project, r.message_id))
        paged = self._pages_of(project, r.message_id) if claim and PAGED in claim else None
        stored = message_of(claim) if claim is not None else None
        writes, update = self._redaction_writes(project, r, stored, paged)
        self.table._batch_write(writes)
        self.table.client.update_item(TableName=self.table.table_name, **update)

    # -- what an erasure leaves: tombstones, vectors to delete, audit records, aliases

    def erasures(self, project: str | None = None) -> list[ErasureRecord]:
        params: dict[str, Any] = {
            "KeyConditionExpression": "PK = :pk",
            "ExpressionAttributeValues": {":pk": {"S": ERASURES_PK}},
        }
        if project is not None:
            params["FilterExpression"] = "#p = :p"
            params["ExpressionAttributeNames"] = {"#p": "project"}
            params["ExpressionAttributeValues"][":p"] = {"S": project}
        return [erasure_record_of(i) for i in self.table._query(**params)]

    def add_tombstones(self, project: str, hashes: Collection[str], at: str | None = None) -> None:
        # `at` (sortable): a guarded write of what was recorded before it is refused
        # by its ConditionCheck on this item (facts.py, _guard_check).
        when = {} if at is None else {TOMBSTONE_AT: {"S": sortable(at)}}
        for h in dict.fromkeys(hashes):
            self.table.client.put_item(
                TableName=self.table.table_name, Item={**tombstone_key(project, h), **when}
            )

    def erased(self, project: str, hashes: Collection[str]) -> set[str]:
        items = self.table._batch_get([tombstone_key(project, h) for h in dict.fromkeys(hashes)])
        return {i["SK"]["S"].removeprefix(TOMBSTONE_PREFIX) for i in items}

    def clear_erased(self, project: str, hashes: Collection[str]) -> None:
        self.table._batch_write(
            [{"DeleteRequest": {"Key": tombstone_key(project, h)}} for h in hashes]
        )

    def erased_vectors(self, project: str) -> list[tuple[VectorKind, str]]:
        items = self.table._query(
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": erased_vectors_pk(project)}},
        )
        found: list[tuple[VectorKind, str]] = []
        for item in items:
            kind, _, item_id = item["SK"]["S"].partition("#")
            found.append((kind, item_id))  # type: ignore[arg-type]
        return found

    def clear_erased_vectors(self, project: str, items: Sequence[tuple[VectorKind, str]]) -> None:
        self.table._batch_write(
            [
                {"DeleteRequest": {"Key": erased_vector_key(project, k, i)}}
                for k, i in dict.fromkeys(items)
            ],
            ordered=False,
        )

    def remove_aliases(self, project: str, keys: Collection[str]) -> int:
        wanted = set(keys)
        gone = [
            i for i in listed_aliases(self.table, project) if {i["k"]["S"], i["t"]["S"]} & wanted
        ]
        requests: list[Item] = []
        for item in gone:
            requests.append({"DeleteRequest": {"Key": key_of(item)}})
            requests.append({"DeleteRequest": {"Key": name_key(project, item["k"]["S"])}})
            requests.append(
                {"DeleteRequest": {"Key": listing_key(project, LIST_ENTITIES, item["k"]["S"])}}
            )
        self.table._batch_write(requests)
        return len(gone)

    # -- erasure requests ------------------------------------------------------------

    def begin_erasure(self, pending: PendingErasure) -> None:
        item: Item = {
            **item_key(erasing_pk(pending.project), pending.id),
            **pending_erasure_attributes(pending),
        }
        entry = {
            **erasure_work_key(pending.project, pending.id),
            "project": {"S": pending.project},
        }
        table = self.table.table_name
        self.table._transact([{"Put": {"TableName": table, "Item": i}} for i in (item, entry)])

    def pending_erasure(self, project: str, erasure_id: str) -> PendingErasure | None:
        item = self.table._get(item_key(erasing_pk(project), erasure_id))
        return pending_erasure_of(project, item) if item else None

    def pending_erasures(self, project: str) -> list[PendingErasure]:
        """The pending erasures of each partition the request sees: a user's request is
        also hidden what a pending shared erasure will remove."""

        def pending(partition: str) -> list[PendingErasure]:
            items = self.table._query(
                direct=True,
                KeyConditionExpression="PK = :pk",
                ExpressionAttributeValues={":pk": {"S": erasing_pk(partition)}},
                ConsistentRead=True,
            )
            # The request's own partition keeps its name (a Scope, domain/scope.py).
            owner = project if partition == project else partition
            return [pending_erasure_of(owner, i) for i in items]

        found = [p for each in parallel(pending, partitions(project)) for p in each]
        return sorted(found, key=lambda p: (p.requested_at, p.id))

    def erasing_projects(self) -> list[str]:
        return work_projects(self.table, ERASING)

    def claim_erasure(
        self, project: str, erasure_id: str, holder: str, now: float, until: float
    ) -> bool:
        try:
            self.table.client.update_item(
                TableName=self.table.table_name,
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

    def add_erasure_counts(
        self, project: str, erasure_id: str, counts: dict[str, int], cursor: str | None = None
    ) -> None:
        names = {f"#{k}": k for k in COUNTS}
        values = {f":{k}": {"N": str(counts.get(k, 0))} for k in COUNTS}
        update = "ADD " + ", ".join(f"#{k} :{k}" for k in COUNTS)
        if cursor is not None:
            names["#cursor"] = "cursor"
            values[":cursor"] = {"S": cursor}
            update += " SET #cursor = :cursor"
        try:
            self.table.client.update_item(
                TableName=self.table.table_name,
                Key=item_key(erasing_pk(project), erasure_id),
                UpdateExpression=update,
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
        table = self.table.table_name
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
            self.table._transact(ops)
        except Exception as error:
            reasons = cancellation(error)
            if reasons is not None and 0 in reasons.failed_checks:
                return False  # finished already: the audit record is written once
            raise
        return True

    def erasure_status(self, project: str, erasure_id: str) -> ErasureStatus | None:
        """The erasure's status in the partitions the request sees: a user's erasure is
        recorded under the project, so a request with the user reads it too."""
        keys = [
            item_key(pk, erasure_id)
            for p in partitions(project)
            for pk in (erasing_pk(p), erasure_pk(p))
        ]
        items = {i["PK"]["S"]: i for i in self.table._batch_get(keys)}
        pending = finished = None
        for p in partitions(project):
            if (item := items.get(erasing_pk(p))) is not None:
                pending = pending_erasure_of(project if p == project else p, item)
            if (item := items.get(erasure_pk(p))) is not None:
                counts = {k: int(item[k]["N"]) for k in COUNTS}
                finished = ErasureStatus(
                    erasure_id, "done", counts, item["requested_at"]["S"], item["finished_at"]["S"]
                )
        return erasure_status(erasure_id, pending, finished)


def _mark_keys(project: str, sk: str) -> list[Item]:
    """Where a vector mark may be: the partition its sort key picks, and the project's
    WORK partition, where every mark was written before they were spread."""
    first = vector_mark_pks(project)[0]
    at = mark_pk(project, sk)
    return [item_key(at, sk)] + ([item_key(first, sk)] if at != first else [])


def _message_update(pk: str, r: Any) -> Item:
    """The Update that rewrites a redacted message (its content, its source)."""
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
    return update


def _page_writes(pk: str, r: Any, paged: list[Item]) -> list[Item]:
    """A paged message's redaction: each page holding a passage dropped, or whose
    passages change (their source), rewritten in its place with what it keeps, or
    deleted if it keeps none."""
    kept = {p.id: p for p in r.kept}
    writes: list[Item] = []
    for page in paged:
        held = passages_in_item(page)
        now = [kept[p.id] for p in held if p.id in kept]
        if now == held:
            continue
        if not now:
            writes.append({"DeleteRequest": {"Key": key_of(page)}})
            continue
        item = {**page_item(pk, now, page.get("pos")), **key_of(page)}
        writes.append({"PutRequest": {"Item": item}})
    return writes
