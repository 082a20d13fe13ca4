"""The OpenSearch Serverless vector index against recorded HTTP exchanges, with no network.

The adapter runs on a real opensearch-py client whose connection class is `Recorded`
below: opensearch-py builds every request (URL, serialised body, NDJSON bulk body) and
hands it to `Recorded.perform_request`, which checks it against the next exchange of a
file in tests/recordings/opensearch/ (see its README) and answers with the recorded
status and body. Error statuses go through opensearch-py's own error mapping, so the
adapter sees the exceptions a live collection would raise.

The `e2e` test runs the contract behaviour against a real collection and is skipped
unless TAISCE_E2E_OPENSEARCH_ENDPOINT is set.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from botocore.credentials import Credentials
from opensearchpy import OpenSearch, Urllib3AWSV4SignerAuth, Urllib3HttpConnection
from opensearchpy.connection import Connection

from taisce.adapters.opensearch.client import make_client
from taisce.adapters.opensearch.documents import index_body
from taisce.adapters.opensearch.index import OpenSearchVectorIndex, index_for
from taisce.domain.model import Hit, VectorItem
from taisce.domain.ports.vectors import VectorIndex, VectorIndexError, VectorIndexMismatch

RECORDINGS = Path(__file__).parent.parent / "recordings" / "opensearch"
DIMS = 4
WRITTEN_AT_NS = 1_767_225_600_000_000_000
A = [1.0, 0.0, 0.0, 0.0]
B = [0.6, 0.8, 0.0, 0.0]
C = [0.0, 1.0, 0.0, 0.0]
Q = [0.8, 0.6, 0.0, 0.0]


class Player:
    """Replays one recording: each request must be the next recorded one."""

    def __init__(self, name: str) -> None:
        data = json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))
        self.exchanges: list[dict[str, Any]] = data["exchanges"]
        self.served = 0

    def answer(self, method: str, url: str, params: Any, body: bytes | None) -> dict[str, Any]:
        assert self.served < len(self.exchanges), f"unrecorded request {method} {url}"
        request = self.exchanges[self.served]["request"]
        self.served += 1
        assert (method, url) == (request["method"], request["url"])
        assert dict(params or {}) == request.get("params", {})
        text = body.decode() if isinstance(body, bytes) else body
        if "ndjson" in request:
            assert text is not None and text.endswith("\n"), "a bulk body ends with a newline"
            lines = text[:-1].split("\n")
            assert [json.loads(line) for line in lines] == request["ndjson"]
        elif "body" in request:
            assert text is not None and json.loads(text) == request["body"]
        else:
            assert text is None
        return self.exchanges[self.served - 1]["response"]

    def done(self) -> bool:
        return self.served == len(self.exchanges)


class Recorded(Connection):
    """An opensearch-py connection that answers from a Player instead of the network."""

    def __init__(self, player: Player, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.player = player

    def perform_request(
        self,
        method: str,
        url: str,
        params: Any = None,
        body: bytes | None = None,
        timeout: Any = None,
        ignore: Any = (),
        headers: Any = None,
    ) -> Any:
        response = self.player.answer(method, url, params, body)
        raw = json.dumps(response["body"])
        status = response["status"]
        if not (200 <= status < 300) and status not in ignore:
            self._raise_error(status, raw, response["headers"].get("content-type"))
        return status, response["headers"], raw


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def replay(sleeps: Sleeps) -> Iterator[Callable[[str], OpenSearchVectorIndex]]:
    players: list[Player] = []

    def make(name: str) -> OpenSearchVectorIndex:
        player = Player(name)
        players.append(player)
        client = OpenSearch(
            hosts=[{"host": "abc123.us-east-1.aoss.amazonaws.com", "port": 443}],
            connection_class=Recorded,
            player=player,
            max_retries=0,
        )
        return OpenSearchVectorIndex(
            client,
            dimensions=DIMS,
            sleep=sleeps,
            jitter=lambda low, high: high,  # the longest delay, so it can be asserted
            clock=lambda: WRITTEN_AT_NS,
        )

    yield make
    for player in players:
        assert player.done(), "a recorded exchange was not requested"


def test_it_is_a_vector_index(replay: Callable[[str], OpenSearchVectorIndex]) -> None:
    index: VectorIndex = replay("create-index")
    assert isinstance(index, OpenSearchVectorIndex)
    assert index.ensure_index() is True


def test_ensure_index_creates_the_knn_mapping(
    replay: Callable[[str], OpenSearchVectorIndex],
) -> None:
    body = index_body(DIMS)
    assert body["settings"] == {"index": {"knn": True}}
    fields = body["mappings"]["properties"]
    assert {f: fields[f]["type"] for f in ("project", "kind", "role", "item_id")} == dict.fromkeys(
        ("project", "kind", "role", "item_id"), "keyword"
    )
    assert fields["text"]["type"] == "text"
    assert fields["vector"] == {
        "type": "knn_vector",
        "dimension": DIMS,
        "method": {"name": "hnsw", "engine": "faiss", "space_type": "innerproduct"},
    }
    assert replay("create-index-exists").ensure_index() is False


def test_an_existing_index_of_other_dimensions_is_refused_by_name(
    replay: Callable[[str], OpenSearchVectorIndex],
) -> None:
    """An index made by a model of 1,024 dimensions (Bedrock) met by one of another
    (here 4, as the local model's 384) is refused before any write or search, saying
    which index, both dimensions and what to do."""
    index = replay("create-index-other-dimensions")
    with pytest.raises(VectorIndexMismatch) as refused:
        index.ensure_index()
    said = str(refused.value)
    assert "'taisce-vectors'" in said and "1024 dimensions" in said and "makes 4" in said
    assert "TAISCE_OPENSEARCH_INDEX" in said and "'taisce-vectors-4'" in said


def test_stored_vectors_are_read_newest_copy_first_and_missing_ones_left_out(
    replay: Callable[[str], OpenSearchVectorIndex],
) -> None:
    index = replay("vectors")
    found = index.vectors("p", "entity", ["user:c", "user:b", "user:a", "user:a"])
    assert found == {"user:a": A, "user:b": B}


def test_the_default_index_is_named_for_the_model_dimensions() -> None:
    assert index_for(384) == "taisce-vectors-384" and index_for(1024) == "taisce-vectors-1024"
    assert index_for(1024, "bedrock") == "taisce-vectors-1024"
    # The multilingual model has MiniLM's dimensions: an index of its own, so a switch
    # between the two never mixes their vectors.
    assert index_for(384, "multilingual") == "taisce-vectors-multilingual-384"


def test_upsert_replaces_stored_copies_in_one_bulk(
    replay: Callable[[str], OpenSearchVectorIndex],
) -> None:
    index = replay("upsert-replaces")
    index.upsert(
        "p",
        "passage",
        [
            VectorItem("a", [0.0, 1.0, 0.0, 0.0], "user", "an earlier version in this batch"),
            VectorItem(
                "a",
                A,
                "user",
                "Dana moved to Galway in March.",
                position=6,
                occurred_at="2023-03-14T09:00:00Z",
            ),
            VectorItem(
                "b",
                np.asarray(B, np.float32).tolist(),
                "user",
                "The Galway office opened in 2019.",
                position=7,
                occurred_at="",  # its message holds no time
            ),
            VectorItem("c", C, "tool"),
        ],
    )


def test_bulk_item_errors_name_the_items_but_never_the_text(
    replay: Callable[[str], OpenSearchVectorIndex],
) -> None:
    index = replay("upsert-item-errors")
    with pytest.raises(VectorIndexError) as raised:
        index.upsert(
            "p",
            "passage",
            [
                VectorItem("x", A, "user", "Fine text"),
                VectorItem("y", B, "user", "Secret note about Dana"),
            ],
        )
    message = str(raised.value)
    assert "y" in message and "mapper_parsing_exception" in message
    assert "Secret" not in message and "Fine" not in message and "0.6" not in message
    assert raised.value.__cause__ is None and raised.value.__context__ is None


def test_throttled_bulk_items_are_sent_again(
    replay: Callable[[str], OpenSearchVectorIndex], sleeps: Sleeps
) -> None:
    replay("upsert-throttled-items").upsert(
        "p", "passage", [VectorItem("a", A, "user"), VectorItem("b", B, "user")]
    )
    assert sleeps.delays == [0.2]


def test_delete_removes_every_stored_copy(replay: Callable[[str], OpenSearchVectorIndex]) -> None:
    replay("delete").delete("p", "passage", ["a", "missing", "a"])


class Ledger:
    """The DocumentIdLedger port in memory (the DynamoDB store's is tested on moto)."""

    def __init__(self) -> None:
        self.ids: dict[tuple[str, str, str], list[str]] = {}

    def document_ids(self, project: str, kind: str, item_ids: Any) -> dict[str, list[str]]:
        return {i: self.ids[project, kind, i] for i in item_ids if (project, kind, i) in self.ids}

    def set_document_ids(self, project: str, kind: str, ids: Any) -> None:
        self.ids.update({(project, kind, i): list(d) for i, d in ids.items()})

    def drop_document_ids(self, project: str, kind: str, item_ids: Any) -> None:
        for i in item_ids:
            self.ids.pop((project, kind, i), None)


def test_a_delete_right_after_indexing_finds_the_documents_by_their_ids(
    replay: Callable[[str], OpenSearchVectorIndex],
) -> None:
    """Within the refresh interval a search cannot see new documents: the ids the
    service assigned, recorded from the _bulk answer, are deleted instead."""
    ledger = Ledger()
    upsert = replay("upsert-replaces")
    upsert.ledger = ledger
    upsert.upsert(  # the items of test_upsert_replaces_stored_copies_in_one_bulk
        "p",
        "passage",
        [
            VectorItem(
                "a",
                A,
                "user",
                "Dana moved to Galway in March.",
                position=6,
                occurred_at="2023-03-14T09:00:00Z",
            ),
            VectorItem(
                "b",
                np.asarray(B, np.float32).tolist(),
                "user",
                "The Galway office opened in 2019.",
                position=7,
                occurred_at="",  # its message holds no time
            ),
            VectorItem("c", C, "tool"),
        ],
    )
    assert ledger.ids == {
        ("p", "passage", "a"): ["1%3A0%3AnD3kYJQBq1vQ2L0xF9bG"],
        ("p", "passage", "b"): ["1%3A0%3AnT3kYJQBq1vQ2L0xG1cH"],
        ("p", "passage", "c"): ["1%3A0%3AoD3kYJQBq1vQ2L0xH3dI"],
    }
    delete = replay("delete-by-recorded-ids")  # its lookup search finds nothing
    delete.ledger = ledger
    delete.delete("p", "passage", ["a", "b"])
    assert ledger.ids == {("p", "passage", "c"): ["1%3A0%3AoD3kYJQBq1vQ2L0xH3dI"]}


def test_nothing_to_write_or_find_sends_nothing(
    replay: Callable[[str], OpenSearchVectorIndex],
) -> None:
    index = replay("create-index")
    index.upsert("p", "passage", [])
    index.delete("p", "passage", [])
    assert index.search("p", "passage", Q, 0) == []
    assert index.search("p", "passage", Q, 3, roles=[]) == []
    assert index.search_text("p", "passage", "?! ...", 3) == []
    index.ensure_index()  # the recording's one exchange


def test_wrong_dimensions_are_an_index_error(
    replay: Callable[[str], OpenSearchVectorIndex],
) -> None:
    index = replay("create-index")
    with pytest.raises(VectorIndexError):
        index.upsert("p", "passage", [VectorItem("a", [1.0, 0.0], "user")])
    with pytest.raises(VectorIndexError):
        index.search("p", "passage", [1.0], 3)
    index.ensure_index()


def test_knn_search_filters_in_the_graph_and_ranks_by_cosine(
    replay: Callable[[str], OpenSearchVectorIndex],
) -> None:
    index = replay("search-knn")
    hits = index.search("p", "passage", Q, 4, roles=["user", "tool", "user"])
    # The stale copy of a (older written_at) is dropped; e and c tie and go by id.
    assert [h.id for h in hits] == ["b", "a", "c", "e"]
    assert [h.score for h in hits] == pytest.approx([0.96, 0.8, 0.6, 0.6])
    # Each passage hit carries its message's storing position (the newest copy's).
    assert [h.position for h in hits] == [7, 6, None, 9]
    # And its message's time: "" where the message holds none, None where the document
    # carries none (indexed before times were kept).
    assert [h.occurred_at for h in hits] == [
        "2023-05-08T13:56:00Z",
        "2023-03-14T09:00:00Z",
        None,
        "",
    ]
    assert index.search("q", "entity", Q, 1) == []


def test_cosine_is_recovered_from_faiss_innerproduct_scores() -> None:
    from taisce.adapters.opensearch.documents import cosine as _cosine

    for cos in (1.0, 0.5, 0.0, -0.25, -1.0):
        score = 1 + cos if cos > 0 else 1 / (1 - cos)
        assert _cosine(score) == pytest.approx(cos)


def test_text_search_is_bm25_with_the_same_filters(
    replay: Callable[[str], OpenSearchVectorIndex],
) -> None:
    index = replay("search-text")
    hits = index.search_text("p", "passage", "Who is moving to Galway?", 5, roles=["user"])
    assert hits == [
        Hit("a", pytest.approx(1.2039728), 6, "2023-03-14T09:00:00Z"),
        Hit("f", pytest.approx(1.2039728), 11, "2023-06-01T10:00:00Z"),
        Hit("b", pytest.approx(0.5753642)),
    ]
    assert index.search_text("p", "report", "Galway", 1) == []


def test_text_goes_to_the_index_and_to_a_search_in_the_form_words_are_read(
    replay: Callable[[str], OpenSearchVectorIndex],
) -> None:
    # Korean stems and Han written apart, as the embedded index reads them
    # (domain/search_text.py); the recording holds the formed texts, as sent.
    index = replay("text-formed")
    index.upsert(
        "p",
        "passage",
        [
            VectorItem("k", A, "user", "어제 친구랑 새로운 라멘집에 갔어요.", position=3),
            VectorItem("j", C, "user", "来週、大阪で歯医者の予約があります。", position=4),
        ],
    )
    assert index.search_text("p", "passage", "라멘집은 어땠어요?", 5) == [
        Hit("k", pytest.approx(0.9808292), 3)
    ]


def test_text_in_latin_letters_goes_with_its_language_s_stems(
    replay: Callable[[str], OpenSearchVectorIndex],
) -> None:
    # A Spanish note with its Spanish stems; a Spanish question without its Spanish
    # function words ("cómo", "se", "mis"), which the english analyzer would keep.
    index = replay("text-formed-latin")
    index.upsert(
        "p",
        "passage",
        [
            VectorItem("g", A, "user", "Tengo un gato negro que se llama Max.", position=5),
            VectorItem("h", C, "user", "Mi hermana vive en Sevilla con sus amigos.", position=6),
        ],
    )
    assert index.search_text("p", "passage", "¿Cómo se llaman mis gatos?", 5) == [
        Hit("g", pytest.approx(1.3862944), 5)
    ]


def test_throttling_and_unavailability_are_retried_with_backoff(
    replay: Callable[[str], OpenSearchVectorIndex], sleeps: Sleeps
) -> None:
    hits = replay("search-throttled").search("p", "passage", Q, 1)
    assert [h.id for h in hits] == ["a"]
    assert sleeps.delays == [0.2, 0.4]


def test_retries_are_bounded(
    replay: Callable[[str], OpenSearchVectorIndex], sleeps: Sleeps
) -> None:
    with pytest.raises(VectorIndexError, match=r"after 4 attempts: HTTP 503"):
        replay("search-unavailable").search("p", "passage", Q, 1)
    assert sleeps.delays == [0.2, 0.4, 0.8]


def test_client_errors_are_not_retried_and_do_not_echo_the_request(
    replay: Callable[[str], OpenSearchVectorIndex], sleeps: Sleeps
) -> None:
    with pytest.raises(VectorIndexError) as raised:
        replay("search-bad-request").search_text("p", "passage", "Galway secret plans", 1)
    assert str(raised.value) == (
        "OpenSearch text search failed: HTTP 400 search_phase_execution_exception"
    )
    # Nothing of the answer rides along in a chained exception either.
    assert raised.value.__cause__ is None and raised.value.__suppress_context__
    with pytest.raises(VectorIndexError, match=r"HTTP 404 index_not_found_exception"):
        replay("search-index-missing").search("p", "passage", Q, 1)
    assert sleeps.delays == []


def test_make_client_signs_for_aoss_over_tls() -> None:
    client = make_client(
        "https://abc123.us-east-1.aoss.amazonaws.com/",
        "us-east-1",
        credentials=Credentials("AKIDEXAMPLE", "secret"),
        pool_maxsize=8,
    )
    (connection,) = client.transport.connection_pool.connections
    assert isinstance(connection, Urllib3HttpConnection)
    assert connection.host == "https://abc123.us-east-1.aoss.amazonaws.com:443"
    assert connection.pool.pool.maxsize == 8
    assert client.transport.max_retries == 0
    auth = client.transport.kwargs["http_auth"]
    assert isinstance(auth, Urllib3AWSV4SignerAuth) and auth.service == "aoss"
    signed = auth("POST", connection.host + "/taisce-vectors/_search", b"{}")
    assert "/us-east-1/aoss/aws4_request" in signed["Authorization"]
    assert "x-amz-content-sha256" in signed["Authorization"].lower()
    with pytest.raises(ValueError):
        make_client("https://abc123.us-east-1.aoss.amazonaws.com/some/path", "us-east-1")


# -- a real collection -------------------------------------------------------------


def unit(*values: float) -> list[float]:
    v = np.zeros(DIMS, np.float32)
    v[: len(values)] = values
    return list(map(float, v / np.linalg.norm(v)))


def eventually(check: Callable[[], Any], timeout: float = 90.0) -> Any:
    """aoss makes writes searchable after its refresh interval, which cannot be forced."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return check()
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(3)


@pytest.mark.e2e
@pytest.mark.skipif(
    not os.environ.get("TAISCE_E2E_OPENSEARCH_ENDPOINT"),
    reason="set TAISCE_E2E_OPENSEARCH_ENDPOINT (and AWS credentials) to run against aoss",
)
def test_contract_against_a_real_collection() -> None:
    client = make_client(
        os.environ["TAISCE_E2E_OPENSEARCH_ENDPOINT"],
        os.environ.get("TAISCE_E2E_OPENSEARCH_REGION") or os.environ.get("AWS_REGION", "us-east-1"),
    )
    name = f"taisce-e2e-{uuid.uuid4().hex[:12]}"
    index = OpenSearchVectorIndex(client, name, DIMS)
    assert index.ensure_index() is True
    try:
        assert index.ensure_index() is False
        index.upsert(
            "p",
            "passage",
            [
                VectorItem("a", unit(1, 0), "user", "Dana moved to Galway in March."),
                VectorItem("b", unit(1, 1), "user", "The Galway office opened in 2019."),
                VectorItem("c", unit(0, 1), "tool", "Nothing to see here."),
            ],
        )
        index.upsert("q", "passage", [VectorItem("z", unit(1), "user", "Galway Galway")])

        def ranked() -> None:
            hits = index.search("p", "passage", unit(1, 0.1), 3)
            assert [h.id for h in hits] == ["a", "b", "c"]
            assert hits[0].score == pytest.approx(float(np.dot(unit(1), unit(1, 0.1))), abs=1e-4)
            assert [h.id for h in index.search("q", "passage", unit(1), 5)] == ["z"]

        eventually(ranked)
        assert [h.id for h in index.search("p", "passage", unit(1), 5, roles=["tool"])] == ["c"]
        assert [h.id for h in index.search_text("p", "passage", "moving", 5)] == ["a"]
        assert {h.id for h in index.search_text("p", "passage", "Galway", 5)} == {"a", "b"}
        assert index.search_text("p", "passage", "the of and", 5) == []

        index.upsert("p", "passage", [VectorItem("a", unit(0, 0, 1), "user", "Now in Cork.")])

        def replaced() -> None:
            assert index.search("p", "passage", unit(0, 0, 1), 1)[0].id == "a"
            assert [h.id for h in index.search_text("p", "passage", "Cork", 5)] == ["a"]
            assert [h.id for h in index.search_text("p", "passage", "Dana", 5)] == []

        eventually(replaced)
        index.delete("p", "passage", ["a", "missing"])
        eventually(lambda: _assert_ids(index.search("p", "passage", unit(1), 5), {"b", "c"}))
    finally:
        client.indices.delete(index=name)


def _assert_ids(hits: list[Hit], expected: set[str]) -> None:
    assert {h.id for h in hits} == expected


def test_similarities_score_exactly_the_items_asked(
    replay: Callable[[str], OpenSearchVectorIndex],
) -> None:
    index = replay("similarities")
    got = index.similarities("p", "fact", Q, ["missing", "b", "a", "b"])
    # The newest copy of b counts; a's score 0.8 is 1 / (1 - cos), so cos = -0.25.
    assert got == pytest.approx({"b": 0.9, "a": -0.25})
    assert index.similarities("p", "fact", Q, []) == {}


def test_a_users_search_filters_on_the_shared_partition_and_theirs_only() -> None:
    from taisce.domain.scope import Scope

    # The read filter of k-NN, text search and similarities (the write side keeps the
    # one partition: _scope); a plain project's filter is what the recordings hold.
    seen = OpenSearchVectorIndex._seen(Scope("p", "u1"), "passage")
    assert seen == [{"terms": {"project": ["p", "p\x1fu1"]}}, {"term": {"kind": "passage"}}]
    assert OpenSearchVectorIndex._seen("p", "passage") == OpenSearchVectorIndex._scope(
        "p", "passage"
    )
