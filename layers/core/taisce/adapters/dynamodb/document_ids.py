"""OpenSearch's document ids (adapters/opensearch/documents.py, DocumentIdLedger):
P#<p>#VDOC#<kind> / <item id> holds `d`, the `_id`s OpenSearch assigned to the item's
documents, so a delete finds them by id before a search could.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping

from .client import TableClient
from .keys import document_key


class DynamoDbDocumentIds:
    """The document id ledger."""

    def __init__(self, table: TableClient) -> None:
        self.table = table

    def document_ids(
        self, project: str, kind: str, item_ids: Collection[str]
    ) -> dict[str, list[str]]:
        keys = [document_key(project, kind, i) for i in dict.fromkeys(item_ids)]
        return {i["i"]["S"]: json.loads(i["d"]["S"]) for i in self.table._batch_get(keys)}

    def set_document_ids(self, project: str, kind: str, ids: Mapping[str, list[str]]) -> None:
        self.table._batch_write(
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
        self.table._batch_write(
            [
                {"DeleteRequest": {"Key": document_key(project, kind, i)}}
                for i in dict.fromkeys(item_ids)
            ],
            ordered=False,
        )
