"""Extraction marks and failure records (messages -> facts): every project's in two
partitions (keys.EXTRACTIONS_PENDING_PK, EXTRACTIONS_FAILED_PK), so a worker finds
pending work with one Query.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

from ...domain.extraction import failures_to_replay
from ...domain.model import ExtractionFailure
from .client import RESEND, TableClient, cancellation
from .codec import extraction_failure_of, extraction_item, number_value
from .keys import (
    EXTRACTIONS_FAILED_PK,
    EXTRACTIONS_PENDING_PK,
    Item,
    extraction_key,
    extraction_prefix,
)


class Extractions(TableClient):
    """The extraction marks the worker takes and the failures it records."""

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
        self._transact([delete, put], RESEND, consumed=False)

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
                        "TableName": self.table_name,
                        "Key": failed,
                        "ConditionExpression": "attribute_exists(PK)",
                    }
                },
                {"Put": {"TableName": self.table_name, "Item": mark}},
            ]
            try:
                self._transact(ops, RESEND, consumed=False)
            except Exception as error:
                reasons = cancellation(error)
                if reasons is not None and reasons.failed_checks:
                    continue  # replayed meanwhile by another caller
                raise
            replayed.append(failure)
        return replayed
