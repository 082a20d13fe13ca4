"""GET /v1/entities/proposals on AWS, its calls counted: the entities function's
handler (its deadline from Lambda's remaining time) over a project holding more names
than one request compares, with Titan and OpenSearch answered by tests/vector_fakes.py
(the recorded answers' shapes, parsed by the real adapters) while every call is
recorded (tests/aws_calls.py). One request compared up to 2,000 names, each with a
model call and a k-NN search in a row: ~30 s against API Gateway's 29."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import boto3
import numpy as np
import pytest

from functions.entities import app as entities_function
from taisce.adapters.embedders.bedrock_titan import BedrockTitan
from taisce.adapters.opensearch.client import make_client
from taisce.adapters.opensearch.index import OpenSearchVectorIndex, index_for
from taisce.adapters.sqlite.store import SqliteStore
from taisce.adapters.sqlite.vectors import SqliteVectorIndex
from taisce.domain.aliases import PROPOSAL_CHUNK, PROPOSAL_NAMES
from taisce.domain.controls import Limits
from taisce.domain.ingest import FactsRequest
from taisce.domain.model import VectorItem
from taisce.domain.semantic import Semantic
from taisce.service.memory import Memory
from tests.aws_calls import AwsCalls
from tests.function_events import Context
from tests.lambda_events import EVENTS, PROJECT
from tests.moto_server import AWS_ENV
from tests.vector_fakes import Collection, titan_answer

# More people than a request compares; each fact names a person and the one company.
PEOPLE = PROPOSAL_NAMES + 20
DIMENSIONS = 1024
# The calls one request may make (model calls and searches), as docs/aws.md says.
CALL_BUDGET = 600
REGION = "eu-west-1"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    store = SqliteStore(tmp_path / "taisce.sqlite3")
    plain = Memory(store, Limits())
    facts = [
        {"subject": f"Person {i:04d}", "predicate": "works at", "object": "Acme Corp"}
        for i in range(PEOPLE)
    ]
    for start in range(0, len(facts), 100):
        batch = [{**f, "source_role": "user"} for f in facts[start : start + 100]]
        plain.store_facts(PROJECT, FactsRequest.model_validate({"facts": batch}))
    yield store
    store.close()


def _memory(store: SqliteStore, titan: Any, monkeypatch: pytest.MonkeyPatch) -> Memory:
    for name, value in AWS_ENV.items():
        monkeypatch.setenv(name, value)
    client = make_client(f"https://fake1234.{REGION}.aoss.amazonaws.com", REGION)
    index = OpenSearchVectorIndex(client, index_for(DIMENSIONS), DIMENSIONS)
    semantic = Semantic(BedrockTitan(titan, dimensions=DIMENSIONS), index, early_vector=True)
    memory = Memory(store, Limits(), semantic=semantic)
    monkeypatch.setattr(entities_function, "services", lambda: SimpleNamespace(memory=memory))
    return memory


def _ask(seconds_left: float) -> tuple[dict[str, Any], float]:
    context = Context("EntitiesFunction", timeout=29)
    context.get_remaining_time_in_millis = lambda: int(seconds_left * 1000)  # type: ignore[method-assign]
    _, event = EVENTS["entities-proposals.json"]
    started = time.monotonic()
    answer = entities_function.lambda_handler(event, context)
    return answer, time.monotonic() - started


def _unit(seed: int) -> list[float]:
    raw = np.random.default_rng(seed).standard_normal(DIMENSIONS)
    return (raw / np.linalg.norm(raw)).tolist()


def test_a_request_compares_a_bounded_number_of_names_in_parallel(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    titan = boto3.session.Session(region_name=REGION).client("bedrock-runtime")
    memory = _memory(store, titan, monkeypatch)
    assert memory.semantic is not None
    with AwsCalls(Collection()) as calls:
        with calls.as_function("Worker"):  # every person's name indexed, not the company's
            indexed = [
                VectorItem(f"user:person {i:04d}", _unit(i), "user", f"Person {i:04d}")
                for i in range(PEOPLE)
            ]
            memory.semantic.index.upsert(PROJECT, "entity", indexed)
        with calls.as_function("EntitiesFunction"):
            answer, _ = _ask(29.0)
    assert answer["statusCode"] == 200, answer
    assert json.loads(answer["body"])["degraded"] == []
    made = calls.operations["EntitiesFunction"]
    model_calls = made.count("bedrock-runtime:InvokeModel")
    searches = [m for m in made if m.endswith("/_search")]
    chunks = -(-PROPOSAL_NAMES // PROPOSAL_CHUNK)
    # No more names than the bound, whatever the project holds (PEOPLE + 1 names): per
    # chunk one read of the indexed vectors, per name one k-NN search; the model is
    # asked only for the one name not indexed yet ("Acme Corp").
    assert len(searches) == chunks + PROPOSAL_NAMES and model_calls == 1
    assert model_calls + len(searches) <= CALL_BUDGET
    assert set(searches) == {f"aoss:POST /{index_for(DIMENSIONS)}/_search"}
    assert len(made) == model_calls + len(searches)


class SlowTitan:
    """A bedrock-runtime client whose answers are held back far past any deadline."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0

    def invoke_model(self, **params: Any) -> dict[str, Any]:
        self.calls += 1
        self.release.wait(60)
        return titan_answer(params)


def test_a_slow_model_degrades_the_proposals_before_the_functions_time(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    titan = SlowTitan()
    _memory(store, titan, monkeypatch)
    left = entities_function.RESERVE_SECONDS + 0.5  # a 0.5 s deadline
    try:
        with AwsCalls(Collection()):
            answer, took = _ask(left)
    finally:
        titan.release.set()  # the abandoned calls finish and their threads end
    assert answer["statusCode"] == 200, answer
    assert json.loads(answer["body"])["degraded"] == ["proposals"]
    assert took < left, f"proposals took {took:.2f} s of the {left:.2f} s left"
    assert titan.calls >= 1


class OneHotNames:
    """A stand-in embedding model: "Person <n>" is the unit vector of axis n, so no two
    people look alike but the two in `same`, which share one; anything else the last."""

    name = "one-hot"
    dimensions = PEOPLE + 1

    def __init__(self, same: tuple[int, int]) -> None:
        self.same = same

    def embed(self, texts: list[str]) -> list[list[float]]:
        vectors = []
        for text in texts:
            digits = "".join(c for c in text if c.isdigit())
            axis = int(digits) if digits else PEOPLE
            axis = self.same[0] if axis == self.same[1] else axis
            vectors.append([1.0 if n == axis else 0.0 for n in range(self.dimensions)])
        return vectors


def test_successive_requests_compare_every_name(store: SqliteStore, tmp_path: Path) -> None:
    """Two names past the first window (by key) that look alike are proposed by the
    second request, where one request compared only the first 500 names for good; the
    window goes on from where the last left off, wrapping to the first names."""
    index = SqliteVectorIndex(tmp_path / "vectors.sqlite3", PEOPLE + 1)
    pair = (PEOPLE - 10, PEOPLE - 5)
    memory = Memory(store, Limits(), semantic=Semantic(OneHotNames(pair), index))
    assert memory.index_pending(PROJECT) == PEOPLE + PEOPLE + 1  # each fact and each name
    names = PEOPLE + 1
    expected = (f"Person {pair[0]:04d}", f"Person {pair[1]:04d}")
    runs = []
    for _ in range(3):
        answer = memory.merge_proposals(PROJECT)
        assert answer.degraded == []
        runs.append({tuple(sorted((p.alias, p.into))) for p in answer.proposals})
    assert runs[0] == set()  # acme corp, person 0000 ... 0498: neither of the pair
    assert runs[1] == {expected}  # person 0499 ... 0519, then from the start
    assert runs[2] == {expected}  # from 479 names later, again past the end
    assert store.proposal_offset(PROJECT) == (3 * PROPOSAL_NAMES) % names
