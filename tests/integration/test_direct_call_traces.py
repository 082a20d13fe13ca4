"""The calls sent on urllib3 directly, each an X-Ray subsegment (api/direct_calls.py),
read from the segment documents X-Ray's SDK emits: the table's direct reads against
moto's server, and the OpenSearch collection's requests on opensearch-py's real
`Urllib3HttpConnection`, its pool answering a recorded exchange (429, then 503, then
hits: tests/recordings/opensearch/search-throttled.json). Neither a body, a query
string nor an error's message is recorded, nor is a failing span's message."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from aws_xray_sdk.core import AWSXRayRecorder
from opensearchpy import OpenSearch, Urllib3HttpConnection
from urllib3 import HTTPResponse
from urllib3._collections import HTTPHeaderDict

from taisce.adapters.dynamodb.reads import DirectReads
from taisce.adapters.opensearch.index import OpenSearchVectorIndex
from taisce.api import direct_calls
from taisce.api.observe import XRaySpans
from taisce.domain.model import PendingErasure
from tests.moto_server import shared_moto
from tests.unit.test_opensearch_index import DIMS, Player, Q

HOST = "abc123.us-east-1.aoss.amazonaws.com"


class Emitted:
    """X-Ray's emitter interface: keeps each document the SDK would send its daemon."""

    def __init__(self) -> None:
        self.documents: list[dict[str, Any]] = []

    def send_entity(self, entity: Any) -> None:
        self.documents.append(json.loads(entity.serialize()))

    def set_daemon_address(self, address: Any) -> None:
        pass


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[AWSXRayRecorder, Emitted]]:
    """A recorder with a segment open, the direct calls wrapped for it (unwrapped after)."""
    monkeypatch.setattr(DirectReads, "call", DirectReads.call)
    monkeypatch.setattr(
        Urllib3HttpConnection, "perform_request", Urllib3HttpConnection.perform_request
    )
    emitted = Emitted()
    recorder = AWSXRayRecorder()
    recorder.configure(sampling=False, context_missing="LOG_ERROR", emitter=emitted)
    direct_calls.patch(recorder)
    direct_calls.patch(recorder)  # twice is once
    recorder.begin_segment("test")
    yield recorder, emitted
    if recorder.current_segment() is not None:
        recorder.end_segment()


def calls(recorder: AWSXRayRecorder, emitted: Emitted) -> list[dict[str, Any]]:
    recorder.end_segment()
    (segment,) = emitted.documents
    return list(segment.get("subsegments", []))


def test_each_direct_read_is_a_dynamodb_subsegment(
    recorder: tuple[AWSXRayRecorder, Emitted],
) -> None:
    moto = shared_moto()
    store = moto.store()
    project = f"proj-{uuid.uuid4().hex[:8]}"
    store.begin_erasure(
        PendingErasure(
            id=f"era_{uuid.uuid4().hex}",
            project=project,
            subject_hash="0" * 64,
            names=("atlas",),
            requested_at="2026-01-01T00:00:00Z",
        )
    )
    assert len(store.pending_erasures(project)) == 1  # a direct, consistent Query
    (read,) = calls(*recorder)
    assert (read["name"], read["namespace"]) == ("dynamodb", "aws")
    assert read["aws"] == {"operation": "Query", "region": "us-east-1", "table_name": moto.table}
    assert read["end_time"] >= read["start_time"]
    assert "fault" not in read and "error" not in read
    assert project not in json.dumps(read)  # the key it read is not recorded


class PoolReplay:
    """The connection's urllib3 pool answering from a recording (the request checked)."""

    def __init__(self, player: Player) -> None:
        self.player = player

    def urlopen(self, method: str, url: str, body: Any, **kwargs: Any) -> HTTPResponse:
        path, _, query = url.partition("?")
        response = self.player.answer(method, path, dict(_pairs(query)), body)
        return HTTPResponse(
            body=json.dumps(response["body"]).encode(),
            status=response["status"],
            headers=HTTPHeaderDict(response["headers"]),
            preload_content=True,
        )

    def close(self) -> None:
        pass


def _pairs(query: str) -> Iterator[tuple[str, str]]:
    for pair in filter(None, query.split("&")):
        key, _, value = pair.partition("=")
        yield key, value


def test_each_opensearch_request_is_a_remote_subsegment_with_its_status(
    recorder: tuple[AWSXRayRecorder, Emitted],
) -> None:
    player = Player("search-throttled")
    client = OpenSearch(
        hosts=[{"host": HOST, "port": 443}],
        use_ssl=True,
        connection_class=Urllib3HttpConnection,
        max_retries=0,
    )
    connection = client.transport.get_connection()
    connection.pool = PoolReplay(player)
    index = OpenSearchVectorIndex(client, dimensions=DIMS, sleep=lambda seconds: None)
    assert [h.id for h in index.search("p", "passage", Q, 1)]
    assert player.done()
    requests = calls(*recorder)
    assert [(r["name"], r["namespace"]) for r in requests] == [(HOST, "remote")] * 3
    assert [r["http"]["response"]["status"] for r in requests] == [429, 503, 200]
    assert {r["http"]["request"]["method"] for r in requests} == {"POST"}
    url = f"https://{HOST}:443/taisce-vectors/_search"
    assert {r["http"]["request"]["url"] for r in requests} == {url}
    throttled, refused, answered = requests
    assert throttled.get("throttle") and throttled.get("error") and not throttled.get("fault")
    assert refused.get("fault") and not refused.get("throttle")
    assert not any(answered.get(flag) for flag in ("fault", "error", "throttle"))
    sent = json.dumps(requests)
    # No body (the question's vector, the filter's project), no error's message.
    assert "knn" not in sent and "Request rate exceeded" not in sent and "cause" not in sent


def test_a_failing_span_is_a_fault_without_its_message(
    recorder: tuple[AWSXRayRecorder, Emitted],
) -> None:
    """A store call or recall step that fails (XRaySpans, api/observe.py) is flagged a
    fault; its exception's message, which may quote a stored value, is not recorded."""
    spans = XRaySpans(SimpleNamespace(provider=recorder[0]))  # type: ignore[arg-type]
    with pytest.raises(ValueError), spans.span("store.put_facts"):
        raise ValueError("Atlas works at Acme Corp")
    with spans.span("store.facts_about"):
        pass
    failed, fine = calls(*recorder)
    assert (failed["name"], failed.get("fault")) == ("store.put_facts", True)
    assert (fine["name"], fine.get("fault")) == ("store.facts_about", None)
    assert "Atlas" not in json.dumps([failed, fine]) and "cause" not in failed
