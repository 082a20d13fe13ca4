"""Erasure requests, completed by the worker:

    P#<p>#ERASING / <id>   a pending erasure: subject hash, names (needed for the work,
                           gone when it finishes), requested_at, counts so far
    P#<p>#ERASURE / <id>   a finished erasure's status: counts, requested/finished at
    WORK / ER#<p>#<id>     lists the project for the worker's sweep (no Scan)

finish_erasure deletes the first and the third, writes the second and the audit
record in one transaction, on the condition that the pending item is there.
"""

from __future__ import annotations

from ...domain.erasure_status import erasure_status
from ...domain.model import COUNTS, ErasureRecord, ErasureStatus, PendingErasure
from .client import cancellation, error_code
from .codec import audit_item, pending_erasure_attributes, pending_erasure_of
from .keys import ERASING, Item, erasing_pk, erasure_pk, erasure_work_key, item_key
from .work import WorkMarks


class ErasureRequests(WorkMarks):
    """Pending erasures, their holders and counts, and their statuses."""

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
        items = {i["PK"]["S"]: i for i in self._batch_get(keys)}
        pending_item = items.get(erasing_pk(project))
        pending = pending_erasure_of(project, pending_item) if pending_item else None
        finished = None
        if (item := items.get(erasure_pk(project))) is not None:
            counts = {k: int(item[k]["N"]) for k in COUNTS}
            finished = ErasureStatus(
                erasure_id, "done", counts, item["requested_at"]["S"], item["finished_at"]["S"]
            )
        return erasure_status(erasure_id, pending, finished)
