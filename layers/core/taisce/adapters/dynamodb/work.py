"""The worker's side of the work marks (docs/dynamodb.md, "Work marks"): which
projects have work, their marks, and clearing them (a mark rewritten since it was read
stays), retiring a project's index entries once its marks are gone. Also the
extraction marks and failure records (messages -> facts): every project's in two
partitions (keys.EXTRACTIONS_PENDING_PK, EXTRACTIONS_FAILED_PK), so a worker finds
pending work with one Query.

The marks are written with the records they are about (units.py).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from itertools import chain
from typing import Any

from ...domain.extraction import failures_to_replay
from ...domain.model import ExtractionFailure, PendingVector, Role, VectorKind
from .client import (
    DROP_FAILED,
    RESEND,
    TRANSACTION_ITEMS,
    Members,
    TableClient,
    cancellation,
    error_code,
    parallel,
)
from .codec import (
    extraction_failure_of,
    extraction_item,
    number_value,
    pending_vector_of,
    pending_vectors_of,
)
from .keys import (
    DIRTY,
    EXTRACTIONS_FAILED_PK,
    EXTRACTIONS_PENDING_PK,
    VECTORS,
    WORK_PK,
    Item,
    dirty_sk,
    extraction_key,
    extraction_prefix,
    item_key,
    mark_pk,
    vector_mark_pks,
    vector_sk,
    work_index_prefix,
    work_pk,
)


def work_projects(table: TableClient, kind: str) -> list[str]:
    """The projects listed in the index of projects with work of this kind (the erasure
    requests' sweep reads it too)."""
    items = table._query(
        KeyConditionExpression="PK = :pk AND begins_with(SK, :k)",
        ExpressionAttributeValues={":pk": {"S": WORK_PK}, ":k": {"S": f"{kind}#"}},
        ProjectionExpression="#p",
        ExpressionAttributeNames={"#p": "project"},
    )
    return sorted({i["project"]["S"] for i in items})


class DynamoDbWorkMarks:
    """Dirty entities and pending vectors, as the worker reads and clears them, and
    the extraction marks the worker takes and the failures it records."""

    def __init__(self, table: TableClient) -> None:
        self.table = table
        # Vector marks read where they were written before the marks were spread
        # (keys.py, VECTOR_MARK_SHARDS): (project, sort key) -> partition, to clear them.
        self._read_at: dict[tuple[str, str], str] = {}
        # Passages read from a page's mark: (project, passage id) -> the mark's sort
        # key, its token, and all the page's passage ids (cleared with the last).
        self._pages: dict[tuple[str, str], tuple[str, str, frozenset[str]]] = {}

    def _marks(self, project: str, kind: str, page: int | None = None) -> Iterator[Item]:
        """The project's marks of one kind; vector marks from every partition they are
        spread over (the first page of each in one wave, then each partition in turn)."""
        pks = vector_mark_pks(project) if kind == VECTORS else [work_pk(project)]

        def start(pk: str) -> Iterator[Item]:
            params: dict[str, Any] = {
                "KeyConditionExpression": "PK = :pk AND begins_with(SK, :k)",
                "ExpressionAttributeValues": {":pk": {"S": pk}, ":k": {"S": f"{kind}#"}},
                # The worker must see every mark written before it looks.
                "ConsistentRead": True,
            }
            if page is not None:
                params["Limit"] = page
            items = self.table._query(**params)
            first = next(items, None)
            return iter(()) if first is None else chain([first], items)

        return chain.from_iterable(parallel(start, pks))

    def _delete_marks(self, project: str, marks: Sequence[tuple[str, str, str]]) -> None:
        """Delete marks (sort key, attribute, value read) whose attribute still holds the
        value read: a mark rewritten since stays. 100 per transaction; a mark whose
        condition fails is left and the rest sent again."""
        wanted = list({sk: (sk, a, v) for sk, a, v in marks}.values())

        def at(sk: str) -> str:
            return self._read_at.pop((project, sk), None) or mark_pk(project, sk)

        def deletes(group: Sequence[tuple[str, str, str]]) -> tuple[list[Item], dict[int, int]]:
            ops = [
                {
                    "Delete": {
                        "TableName": self.table.table_name,
                        "Key": item_key(at(sk), sk),
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
            self.table._transact(group, DROP_FAILED, consumed=False)

    def _retire(self, project: str, kind: str) -> None:
        """Remove the project's index entries for this kind once it has no marks left,
        each unless a writer touched it since it was read: that writer's marks were
        then either seen by the emptiness check, or keep the entry it touched."""
        entries = list(
            self.table._query(
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
                self.table.client.delete_item(
                    TableName=self.table.table_name,
                    Key=item_key(WORK_PK, entry["SK"]["S"]),
                    ConditionExpression="#t = :t",
                    ExpressionAttributeNames={"#t": "t"},
                    ExpressionAttributeValues={":t": entry["t"]},
                )
            except Exception as error:
                if error_code(error) != "ConditionalCheckFailedException":
                    raise

    def vector_projects(self) -> list[str]:
        return work_projects(self.table, VECTORS)

    def pending_vectors(self, project: str, limit: int) -> list[PendingVector]:
        if limit <= 0:
            return []
        found: list[PendingVector] = []
        # A page's mark asks for each of its passages (codec.pending_vectors_of): taken
        # whole, so a batch may pass the limit by less than a page.
        for i in self._marks(project, VECTORS, limit):
            sk, pk = i["SK"]["S"], i["PK"]["S"]
            if pk != mark_pk(project, sk):
                self._read_at[(project, sk)] = pk
            vectors = pending_vectors_of(i)
            if i["kind"]["S"] == "page":
                ids = frozenset(v.id for v in vectors)
                self._pages.update(((project, v.id), (sk, i["t"]["S"], ids)) for v in vectors)
            found += vectors
            if len(found) >= limit:
                break
        return found

    def clear_pending_vectors(self, project: str, items: Sequence[PendingVector]) -> None:
        """Each item's mark, unless rewritten since; a page's once all its passages are
        among the items (the worker clears what it read, whole)."""
        marks: list[tuple[str, str, str]] = []
        cleared = {i.id for i in items if i.kind == "passage"}
        for i in items:
            page = self._pages.pop((project, i.id), None) if i.kind == "passage" else None
            if page is None:
                marks.append((vector_sk(i.kind, i.id), "text", i.text))
            elif page[2] <= cleared:
                marks.append((page[0], "t", page[1]))
        self._delete_marks(project, marks)
        self._retire(project, VECTORS)

    def vector_marks(
        self, project: str, items: Sequence[tuple[VectorKind, str]]
    ) -> list[PendingVector]:
        sks = [vector_sk(kind, item_id) for kind, item_id in items]
        # Each mark in the partition its sort key picks (keys.mark_pk).
        keys = [item_key(mark_pk(project, sk), sk) for sk in sks]
        # Strongly consistent (the table client's default): the marks were just written.
        return [pending_vector_of(i) for i in self.table._batch_get(keys)] if keys else []

    def dirty_projects(self) -> list[str]:
        return work_projects(self.table, DIRTY)

    def dirty_entities(self, project: str) -> list[tuple[Role, str, str]]:
        marks = [(i["role"]["S"], i["key"]["S"], i["t"]["S"]) for i in self._marks(project, DIRTY)]
        return sorted(marks)

    def clear_dirty(self, project: str, marks: Sequence[tuple[Role, str, str]]) -> None:
        self._delete_marks(project, [(dirty_sk(r, k), "t", t) for r, k, t in marks])
        self._retire(project, DIRTY)

    # -- extraction (messages -> facts) ------------------------------------------------

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
        for n, item in enumerate(self.table._query(**params), start=1):
            yield item
            if limit is not None and n >= limit:
                return

    def extraction_projects(self) -> list[str]:
        projects = {i["project"]["S"] for i in self._extraction_items(EXTRACTIONS_PENDING_PK, None)}
        return sorted(projects)

    def pending_extractions(self, project: str, limit: int) -> list[str]:
        items = self._extraction_items(EXTRACTIONS_PENDING_PK, project, limit)
        return [i["message_id"]["S"] for i in items]

    def extraction_pending(self, project: str, message_id: str) -> bool:
        key = extraction_key(EXTRACTIONS_PENDING_PK, project, message_id)
        return self.table._get(key, "PK") is not None

    def finish_extraction(
        self, project: str, message_id: str, failure: ExtractionFailure | None = None
    ) -> None:
        key = extraction_key(EXTRACTIONS_PENDING_PK, project, message_id)
        if failure is None:
            self.table.client.delete_item(TableName=self.table.table_name, Key=key)
            return
        delete = {"Delete": {"TableName": self.table.table_name, "Key": key}}
        record = {
            **extraction_item(EXTRACTIONS_FAILED_PK, project, message_id),
            "error": {"S": failure.error},
            "attempts": number_value("failure", "attempts", failure.attempts),
            "failed_at": {"S": failure.failed_at},
        }
        put = {"Put": {"TableName": self.table.table_name, "Item": record}}
        self.table._transact([delete, put], RESEND, consumed=False)

    def failed_extractions(self, project: str | None = None) -> list[ExtractionFailure]:
        found = [
            extraction_failure_of(i) for i in self._extraction_items(EXTRACTIONS_FAILED_PK, project)
        ]
        return sorted(found, key=lambda f: (f.project, f.message_id))

    def replay_extractions(
        self, project: str | None = None, message_ids: Collection[str] | None = None
    ) -> list[ExtractionFailure]:
        replayed: list[ExtractionFailure] = []
        for failure in failures_to_replay(self.failed_extractions(project), message_ids):
            failed = extraction_key(EXTRACTIONS_FAILED_PK, failure.project, failure.message_id)
            mark = extraction_item(EXTRACTIONS_PENDING_PK, failure.project, failure.message_id)
            ops = [
                {
                    "Delete": {
                        "TableName": self.table.table_name,
                        "Key": failed,
                        "ConditionExpression": "attribute_exists(PK)",
                    }
                },
                {"Put": {"TableName": self.table.table_name, "Item": mark}},
            ]
            try:
                self.table._transact(ops, RESEND, consumed=False)
            except Exception as error:
                reasons = cancellation(error)
                if reasons is not None and reasons.failed_checks:
                    continue  # replayed meanwhile by another caller
                raise
            replayed.append(failure)
        return replayed
