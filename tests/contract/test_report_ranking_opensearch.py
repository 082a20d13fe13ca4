"""Recall step 3 as it runs on AWS: the DynamoDB store (moto's server, over HTTP) and the
OpenSearch index answering from recorded exchanges (tests/recordings/opensearch/
recall-reports.json), through the same domain code as the embedded store. The recorded
k-NN answers put the gardening report nearer by vector; the question's words put the
music report first, with and without `themes`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from opensearchpy import OpenSearch

from taisce.adapters.opensearch.index import OpenSearchVectorIndex
from taisce.api import bodies
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.ingest import FactsRequest
from taisce.domain.recall import Semantic
from taisce.domain.reports import report_id
from taisce.service.memory import Memory
from tests.moto_server import shared_moto
from tests.unit.test_opensearch_index import DIMS, WRITTEN_AT_NS, Player, Q, Recorded

PROJECT = "p"  # the recording's project, on a table of this test's own
MUSIC = report_id("user", 0, ["galway concert hall", "galway symphony orchestra", "maya okafor"])
GARDEN = report_id("user", 0, ["kilkenny allotment", "river nore", "tobias wren"])
FACTS = [
    ("Maya Okafor", "plays the violin in", "Galway Symphony Orchestra"),
    ("Galway Symphony Orchestra", "performs concerts at", "Galway Concert Hall"),
    ("Tobias Wren", "grows tomatoes in", "Kilkenny Allotment"),
    ("Kilkenny Allotment", "is watered from", "River Nore"),
]


class Embedder:
    """The question's vector as the recording has it (Bedrock cannot run here)."""

    name = "recorded"
    dimensions = DIMS

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [list(Q) for _ in texts]


@pytest.fixture
def aws() -> Iterator[tuple[Memory, Player]]:
    store = shared_moto().table_named("taisce-report-ranking").store()
    writer = Memory(store, Limits())
    facts = [
        {"id": f"rr{n}", "subject": s, "predicate": p, "object": o, "source_role": "user"}
        for n, (s, p, o) in enumerate(FACTS)
    ]
    writer.store_facts(PROJECT, FactsRequest.model_validate({"facts": facts}))
    writer.rebuild_reports(PROJECT)
    assert {r.id for r in store.reports_by_ids(PROJECT, [MUSIC, GARDEN])} == {MUSIC, GARDEN}
    player = Player("recall-reports")
    client = OpenSearch(
        hosts=[{"host": "abc123.us-east-1.aoss.amazonaws.com", "port": 443}],
        connection_class=Recorded,
        player=player,
        max_retries=0,
    )
    index = OpenSearchVectorIndex(client, dimensions=DIMS, clock=lambda: WRITTEN_AT_NS)
    yield Memory(store, Limits(), semantic=Semantic(Embedder(), index)), player
    assert player.done(), "a recorded exchange was not requested"


def ask(memory: Memory, question: str, **controls: object) -> dict[str, Any]:
    body = {"question": question, "surfaces": ["reports"], "explain": True, **controls}
    answer = bodies.recall(memory.recall(PROJECT, RecallRequest.model_validate(body)))
    assert answer["degraded"] == []
    return answer


def test_reports_by_meaning_and_words_on_dynamodb_and_opensearch(
    aws: tuple[Memory, Player],
) -> None:
    memory, _ = aws
    unmatched = ask(memory, "who plays music in an orchestra?")
    assert [r["id"] for r in unmatched["reports"]] == [MUSIC, GARDEN]
    music, garden = (r["why"] for r in unmatched["reports"])
    assert music["similarity"] == pytest.approx(0.5) and garden["similarity"] == pytest.approx(0.6)
    assert music["words"] > 0 and garden["words"] == 0
    assert music["score"] > garden["score"]

    # Tobias is named first and his report is nearer by vector; the question asks about
    # the orchestra.
    themed = ask(memory, "Which orchestra do Tobias Wren or Maya Okafor play in?", themes=True)
    assert [r["id"] for r in themed["reports"]] == [MUSIC, GARDEN]
    assert [r["why"]["matched"] for r in themed["reports"]] == ["maya okafor", "tobias wren"]
    assert themed["reports"][1]["why"]["similarity"] == pytest.approx(0.7)
