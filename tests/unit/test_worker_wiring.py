"""What the wiring hands the worker function (api/wiring.py): the setup to settle
before its first pass and the memory table's client for idempotency records, so the
handler never reaches into an adapter. Clients are built, nothing is sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.adapters.opensearch.index import OpenSearchVectorIndex
from taisce.api.wiring import build_services
from taisce.settings import load_settings
from tests.moto_server import AWS_ENV


def test_the_embedded_store_has_nothing_to_settle_and_no_table(tmp_path: Path) -> None:
    built = build_services(load_settings({"TAISCE_DATA_DIR": str(tmp_path)}))
    assert built.prepare_worker() is None
    assert built.table_client is None


def test_on_aws_the_worker_creates_the_index_and_shares_the_store_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in AWS_ENV.items():
        monkeypatch.setenv(name, value)
    built = build_services(
        load_settings(
            {
                "TAISCE_STORE": "dynamodb",
                "TAISCE_DYNAMODB_TABLE": "memory",
                "TAISCE_EMBEDDINGS": "bedrock",
                "TAISCE_OPENSEARCH_ENDPOINT": "https://collection.example",
                "TAISCE_REGION": "us-east-1",
            }
        )
    )
    semantic = built.memory.semantic
    assert semantic is not None and isinstance(semantic.index, OpenSearchVectorIndex)
    assert built.prepare_worker == semantic.index.ensure_index
    store = built.memory.store
    assert isinstance(store, DynamoDbStore)
    assert built.table_client is not None and built.table_client() is store.client


@pytest.mark.parametrize(
    ("given", "embeddings", "index"),
    [
        ("", "bedrock", "taisce-vectors-1024"),  # the template's default: empty
        (None, "local", "taisce-vectors-384"),
        (None, "multilingual", "taisce-vectors-multilingual-384"),
        ("memory-vectors", "bedrock", "memory-vectors"),
    ],
)
def test_the_vector_index_is_named_for_the_model_dimensions_unless_named(
    monkeypatch: pytest.MonkeyPatch, given: str | None, embeddings: str, index: str
) -> None:
    """Bedrock's 1,024 and the local model's 384 dimensions never share an index: a
    switch of model meets a new, empty index, not one every write would fail on."""
    for name, value in AWS_ENV.items():
        monkeypatch.setenv(name, value)
    settings = {
        "TAISCE_STORE": "dynamodb",
        "TAISCE_DYNAMODB_TABLE": "memory",
        "TAISCE_EMBEDDINGS": embeddings,
        "TAISCE_OPENSEARCH_ENDPOINT": "https://collection.example",
        "TAISCE_REGION": "us-east-1",
    }
    if given is not None:
        settings["TAISCE_OPENSEARCH_INDEX"] = given
    semantic = build_services(load_settings(settings)).memory.semantic
    assert semantic is not None and isinstance(semantic.index, OpenSearchVectorIndex)
    assert semantic.index.index_name == index
