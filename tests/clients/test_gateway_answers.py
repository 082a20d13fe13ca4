"""The client against the answers API Gateway writes itself, before any function runs
({"message": "..."}, not the API's error shape), served over real HTTP by a stand-in
that answers exactly as API Gateway does: each becomes the API's typed error."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from taisce_client import Client
from taisce_client.errors import NotFound, PayloadTooLarge, RateLimited, ServerError, Unauthorized

# path -> (status, body) as API Gateway's HTTP API sends them.
ANSWERS = {
    "/v1/health": (401, {"message": "Unauthorized"}),
    "/v1/facts": (403, {"message": "Forbidden"}),
    "/v1/recalls": (429, {"message": "Too Many Requests"}),
    "/v1/messages": (413, {"message": "Request Entity Too Large"}),
    "/v1/erasures": (503, {"message": "Service Unavailable"}),
    "/v1/facts/f-1": (404, {"message": "Not Found"}),
}


class Gateway(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        status, body = ANSWERS[self.path.split("?")[0]]
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    do_GET = do_POST = do_DELETE = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Gateway)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def client(url: str) -> Iterator[Client]:
    with Client(url, "tsk_refused", retries=0) as client:
        yield client


def test_a_refused_credential_is_unauthorized_whether_401_or_403(client: Client) -> None:
    with pytest.raises(Unauthorized) as refused:
        client.health()
    assert (refused.value.status, refused.value.code) == (401, "unauthorized")
    assert "Unauthorized" in str(refused.value)
    with pytest.raises(Unauthorized) as forbidden:
        client.store_facts(
            [{"subject": "A", "predicate": "p", "object": "B", "source_role": "user"}]
        )
    assert (forbidden.value.status, forbidden.value.code) == (403, "unauthorized")


def test_throttling_size_routes_and_failures_become_their_errors(client: Client) -> None:
    with pytest.raises(RateLimited):
        client.recall("Where does Atlas work?")
    with pytest.raises(PayloadTooLarge):
        client.store_messages([{"role": "user", "content": "hello"}])
    with pytest.raises(ServerError) as failed:
        client.erase("Atlas")
    assert failed.value.code == "internal"
    with pytest.raises(NotFound):
        client.delete_fact("f-1")
