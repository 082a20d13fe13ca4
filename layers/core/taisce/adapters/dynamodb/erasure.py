"""Erasure (domain/erasure.py, plan_erasure) applied to the table: tombstones
(P#<p>#ERASED), the vectors still to delete (P#<p>#ERASED_VECTORS), the audit records
of every project (ERASURES). erase() runs in idempotent steps, each commit point
last, so a retry of the same erasure after a failure part-way finishes the job.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

from ...domain.erasure_reports import report_marks, touched_by_erasure
from ...domain.model import ROLES, ErasurePlan, ErasureRecord, Message, Role, VectorKind
from .client import TRANSACTION_BUDGET, TRANSACTION_ITEMS, cancellation, parallel
from .codec import erasure_record_of, item_size, message_listing_item, message_of, passage_item
from .keys import (
    ERASURES_PK,
    FACT_SK,
    LIST_ENTITIES,
    LIST_FACTS,
    MESSAGE_SK,
    NAME_SK,
    TOMBSTONE_PREFIX,
    Item,
    entity_pk,
    erased_vector_key,
    erased_vectors_pk,
    fact_claim_key,
    fact_pk,
    fact_sk,
    item_key,
    listing_key,
    message_key,
    message_pk,
    passage_sk,
    tombstone_key,
    vector_sk,
    work_pk,
)
from .messages import Messages
from .reports import Reports
from .units import Unit, claim_ends, mark_dirty, work_touch


class Erasure(Reports, Messages):
    """erase and the tombstones and audit records it leaves."""

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
        touched = touched_by_erasure(plan.entity_keys, self._fact_ends(project, plan.fact_ids))
        # Reports before facts: a retry after a failure part-way finds the facts again,
        # so it drops what is left of their reports too.
        dropped = self._erase_reports(project, touched, plan.entity_keys)
        self._erase_facts(project, plan.fact_ids, erased)
        self._redact_all(project, plan.redactions)
        gone = [item_key(pk, NAME_SK) for pk in erased]
        gone += [listing_key(project, LIST_ENTITIES, k) for k in plan.entity_keys]
        # Their statements waiting to be embedded go with them.
        gone += [item_key(work_pk(project), vector_sk("fact", i)) for i in plan.fact_ids]
        self._batch_write([{"DeleteRequest": {"Key": k}} for k in gone], ordered=False)
        return dropped

    def _fact_ends(
        self, project: str, fact_ids: Sequence[str]
    ) -> list[tuple[Role, str, str | None]]:
        """(role, subject key, object key) of these facts, from their claims."""
        claims = self._batch_get([fact_claim_key(project, i) for i in fact_ids])
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
            components = self.report_components(project, role, keys)
            members: set[str] = set()
            listings = parallel(
                lambda c, r=role: self._listed_reports(project, r, c), sorted(components)
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
            self._batch_write(
                [{"PutRequest": {"Item": m}} for m in unit.marks.values()], ordered=False
            )
            for prefix, p in unit.work.items():
                self.client.update_item(TableName=self.table_name, **work_touch(prefix, p))
            if components:
                dropped += len(self.replace_reports(project, role, components, []))
        return dropped

    def _erase_facts(self, project: str, fact_ids: Sequence[str], erased: set[str]) -> None:
        """Each fact's claim, copies and the counts of its ends that stay, removed in
        transactions as a failed batch is undone (a claim already gone is skipped)."""
        ids = {fact_pk(project, i): i for i in fact_ids}
        claims = self._batch_get([item_key(pk, FACT_SK) for pk in ids])
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
            unit = Unit(claim, copies, names)
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

    def add_tombstones(self, project: str, hashes: Collection[str]) -> None:
        for h in dict.fromkeys(hashes):
            self.client.put_item(TableName=self.table_name, Item=tombstone_key(project, h))

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
