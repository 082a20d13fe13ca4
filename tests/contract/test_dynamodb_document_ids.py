"""The DynamoDB store keeps the OpenSearch adapter's ledger of assigned document ids
(adapters/opensearch/documents.py, DocumentIdLedger): read back at once (strongly consistent),
replaced per item, dropped per item, and kept apart per project and kind."""

from __future__ import annotations

from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.adapters.opensearch.documents import DocumentIdLedger
from tests.contract.factories import unique


def test_document_ids_are_recorded_replaced_and_dropped(dynamo: DynamoDbStore) -> None:
    ledger: DocumentIdLedger = dynamo
    project, other = unique("docids"), unique("docids")
    ledger.set_document_ids(project, "passage", {"m1#0": ["x1"], "m1#1": ["x2", "x3"]})
    ledger.set_document_ids(project, "entity", {"m1#0": ["e1"]})
    ledger.set_document_ids(other, "passage", {"m1#0": ["o1"]})
    assert ledger.document_ids(project, "passage", ["m1#0", "m1#1", "none"]) == {
        "m1#0": ["x1"],
        "m1#1": ["x2", "x3"],
    }
    ledger.set_document_ids(project, "passage", {"m1#0": ["x4"]})
    assert ledger.document_ids(project, "passage", ["m1#0"]) == {"m1#0": ["x4"]}
    ledger.drop_document_ids(project, "passage", ["m1#0", "m1#1"])
    assert ledger.document_ids(project, "passage", ["m1#0", "m1#1"]) == {}
    assert ledger.document_ids(project, "entity", ["m1#0"]) == {"m1#0": ["e1"]}
    assert ledger.document_ids(other, "passage", ["m1#0"]) == {"m1#0": ["o1"]}
