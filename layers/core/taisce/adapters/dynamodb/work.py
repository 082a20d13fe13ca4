"""The worker's side of the work marks (docs/dynamodb.md, "Work marks"): which
projects have work, their marks, and clearing them (a mark rewritten since it was read
stays), retiring a project's index entries once its marks are gone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Any

from ...domain.model import PendingVector, Role
from .client import DROP_FAILED, TRANSACTION_ITEMS, Members, TableClient, error_code
from .codec import pending_vector_of
from .keys import (
    DIRTY,
    VECTORS,
    WORK_PK,
    Item,
    dirty_sk,
    item_key,
    vector_sk,
    work_index_prefix,
    work_pk,
)


class WorkMarks(TableClient):
    """Dirty entities and pending vectors, as the worker reads and clears them."""

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

    def vector_projects(self) -> list[str]:
        return self._work_projects(VECTORS)

    def pending_vectors(self, project: str, limit: int) -> list[PendingVector]:
        if limit <= 0:
            return []
        return [pending_vector_of(i) for i in islice(self._marks(project, VECTORS, limit), limit)]

    def clear_pending_vectors(self, project: str, items: Sequence[PendingVector]) -> None:
        self._delete_marks(project, [(vector_sk(i.kind, i.id), "text", i.text) for i in items])
        self._retire(project, VECTORS)

    def dirty_projects(self) -> list[str]:
        return self._work_projects(DIRTY)

    def dirty_entities(self, project: str) -> list[tuple[Role, str, str]]:
        marks = [(i["role"]["S"], i["key"]["S"], i["t"]["S"]) for i in self._marks(project, DIRTY)]
        return sorted(marks)

    def clear_dirty(self, project: str, marks: Sequence[tuple[Role, str, str]]) -> None:
        self._delete_marks(project, [(dirty_sk(r, k), "t", t) for r, k, t in marks])
        self._retire(project, DIRTY)
