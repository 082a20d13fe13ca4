"""A recall on AWS when Bedrock and OpenSearch are slow: the recall function's handler
(its deadline from Lambda's remaining time) on the DynamoDB store (moto's server), with
Titan's and OpenSearch's recorded answers held back far past the function's timeout.
The recall answers 200 with what the store gave and the lost surfaces in `degraded`,
before the deadline; it never waits for the slow calls."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from opensearchpy import OpenSearch
from opensearchpy.connection import Connection

from functions.recall import app as recall_function
from taisce.adapters.embedders.bedrock_titan import BedrockTitan
from taisce.adapters.opensearch.index import OpenSearchVectorIndex
from taisce.domain.controls import Limits
from taisce.domain.ingest import FactsRequest
from taisce.domain.semantic import Semantic
from taisce.service.memory import Memory
from tests.function_events import Context
from tests.lambda_events import EVENTS, FACT, PROJECT
from tests.moto_server import shared_moto

RECORDINGS = Path(__file__).parents[1] / "recordings"
# How long the slow services hold each answer: far past any Lambda timeout.
HELD = 60.0


def _recorded(path: str, exchange: int = 0) -> dict[str, Any]:
    data = json.loads((RECORDINGS / path).read_text(encoding="utf-8"))
    return dict(data["exchanges"][exchange]["response"])


class SlowTitan:
    """A bedrock-runtime client answering Titan's recorded answer, held back."""

    def __init__(self, release: threading.Event) -> None:
        self.release = release
        self.calls = 0

    def invoke_model(self, **_: Any) -> dict[str, Any]:
        self.calls += 1
        self.release.wait(HELD)
        body = json.dumps(_recorded("bedrock/titan-v2-batch-256.json")["body"]).encode()
        return {"body": SimpleNamespace(read=lambda: body)}


class SlowCollection(Connection):
    """An opensearch-py connection answering a recorded empty k-NN search, held back."""

    def __init__(self, release: threading.Event, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.release = release

    def perform_request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        self.release.wait(HELD)
        response = _recorded("opensearch/search-knn.json", 1)
        return response["status"], response["headers"], json.dumps(response["body"])


@pytest.fixture
def slow() -> Iterator[tuple[threading.Event, SlowTitan]]:
    release = threading.Event()
    titan = SlowTitan(release)
    yield release, titan
    release.set()  # the abandoned calls finish and their threads end


def _memory(titan: SlowTitan, release: threading.Event, table: str) -> Memory:
    store = shared_moto().table_named(table).store()
    memory = Memory(store, Limits())
    memory.store_facts(PROJECT, FactsRequest.model_validate({"facts": [FACT]}))
    client = OpenSearch(
        hosts=[{"host": "abc123.eu-west-1.aoss.amazonaws.com", "port": 443}],
        connection_class=SlowCollection,
        release=release,
        max_retries=0,
    )
    index = OpenSearchVectorIndex(client, dimensions=256)
    semantic = Semantic(BedrockTitan(titan, dimensions=256), index, early_vector=True)
    return Memory(store, Limits(), semantic=semantic)


@pytest.mark.parametrize("slow_part", ["bedrock", "opensearch"])
def test_a_slow_model_or_index_degrades_the_recall_within_the_functions_time(
    slow: tuple[threading.Event, SlowTitan],
    slow_part: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    release, titan = slow
    memory = _memory(titan, release, f"taisce-recall-deadline-{slow_part}")
    if slow_part == "opensearch":  # the model answers at once; only the index is slow
        titan.release = threading.Event()
        titan.release.set()
    monkeypatch.setattr(recall_function, "services", lambda: SimpleNamespace(memory=memory))
    left = recall_function.RESERVE_SECONDS + 0.5  # Lambda's time left: a 0.5 s deadline
    context = Context("RecallFunction", timeout=1)
    context.get_remaining_time_in_millis = lambda: int(left * 1000)  # type: ignore[method-assign]
    _, event = EVENTS["recall.json"]
    started = time.monotonic()
    answer = recall_function.lambda_handler(event, context)
    took = time.monotonic() - started
    assert answer["statusCode"] == 200, answer
    body = json.loads(answer["body"])
    assert set(body["degraded"]) >= {"passages"}
    assert [f["object"] for f in body["facts"]] == ["Acme Corp"]  # step 1, from the store
    assert took < left, f"the recall took {took:.2f} s of the {left:.2f} s left"
    assert titan.calls >= 1
