"""The Bedrock Titan v2 embedder against recorded InvokeModel exchanges, with no network.

Two ways of replaying tests/recordings/bedrock/ (see its README):

- botocore's Stubber checks every request's parameters (modelId, contentType, accept and
  the JSON body) and answers with the recorded response. It answers in the order the
  responses were queued, so tests that use it embed one text at a time (`max_workers=1`).
- An event hook on `before-send` answers the real, signed HTTP request with the recorded
  HTTP response, so botocore's own parser reads it. It looks the answer up by the request's
  text, so it serves concurrent calls in any order: the batch test uses the default pool of
  8 and makes the first texts answer last, to show order is kept by the adapter.
"""

from __future__ import annotations

import io
import json
import math
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.config import Config
from botocore.exceptions import EndpointConnectionError
from botocore.response import StreamingBody
from botocore.stub import Stubber

from taisce.adapters.embedders.bedrock_titan import MAX_CHARACTERS, BedrockTitan
from taisce.domain.ports.vectors import Embedder, EmbeddingError

RECORDINGS = Path(__file__).parent.parent / "recordings" / "bedrock"


def exchanges(name: str) -> list[dict[str, Any]]:
    return json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))["exchanges"]


def body_bytes(response: dict[str, Any]) -> bytes:
    if "body_text" in response:
        return response["body_text"].encode()
    return json.dumps(response["body"]).encode()


def recorded_vector(exchange: dict[str, Any]) -> list[float]:
    vector = exchange["response"]["body"]["embedding"]
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


class JsonBody:
    """Equal to a request body (str or bytes) that parses to the expected JSON value."""

    def __init__(self, expected: Any) -> None:
        self.expected = expected

    def __eq__(self, other: object) -> bool:
        if isinstance(other, bytes | bytearray):
            other = other.decode()
        if not isinstance(other, str):
            return False
        try:
            return json.loads(other) == self.expected
        except ValueError:
            return False

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"JsonBody({self.expected!r})"


@pytest.fixture
def client() -> Any:
    # Explicit dummy credentials: nothing is looked up, and requests are signed (the hook
    # sees the real request) but never sent. One attempt, so errors are not retried.
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(retries={"total_max_attempts": 1}),
    )


@pytest.fixture
def stubber(client: Any) -> Any:
    with Stubber(client) as stub:
        yield stub
        stub.assert_no_pending_responses()


def queue(
    stubber: Stubber, exchange: dict[str, Any], request: dict[str, Any] | None = None
) -> None:
    """Queue the recorded answer, expecting the recorded request (or `request`)."""
    request = request or exchange["request"]
    expected = {**request, "body": JsonBody(request["body"])}
    response = exchange["response"]
    if response["status"] == 200:
        body = body_bytes(response)
        stubber.add_response(
            "invoke_model",
            {
                "body": StreamingBody(io.BytesIO(body), len(body)),
                "contentType": response["headers"]["content-type"],
            },
            expected,
        )
    else:
        stubber.add_client_error(
            "invoke_model",
            service_error_code=response["headers"]["x-amzn-errortype"].split(":")[0],
            service_message=response["body"]["message"],
            http_status_code=response["status"],
            expected_params=expected,
            response_meta={"RequestId": response["headers"]["x-amzn-requestid"]},
        )


class RawBody(io.BytesIO):
    """What botocore reads an HTTP answer from (urllib3's response has `stream`)."""

    def stream(self, **_: Any):
        yield self.read()


class Replayer:
    """Answers signed InvokeModel requests with recorded HTTP responses, by input text."""

    def __init__(self, client: Any, recorded: list[dict[str, Any]]) -> None:
        self.by_text = {e["request"]["body"]["inputText"]: e for e in recorded}
        self.delays: dict[str, float] = {}
        self.in_flight = 0
        self.most_in_flight = 0
        self.answered: list[str] = []
        self._lock = threading.Lock()
        client.meta.events.register("before-send.bedrock-runtime.InvokeModel", self)

    def __call__(self, request: Any, **_: Any) -> AWSResponse:
        body = json.loads(request.body)
        exchange = self.by_text[body["inputText"]]
        recorded = exchange["request"]
        assert body == recorded["body"]
        assert request.method == "POST"
        assert request.url == (
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
            f"{recorded['modelId'].replace(':', '%3A')}/invoke"
        )
        assert request.headers["Content-Type"] == recorded["contentType"].encode()
        assert request.headers["Accept"] == recorded["accept"].encode()
        assert request.headers["Authorization"].startswith(b"AWS4-HMAC-SHA256")
        with self._lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        time.sleep(self.delays.get(body["inputText"], 0.0))
        with self._lock:
            self.in_flight -= 1
            self.answered.append(body["inputText"])
        response = exchange["response"]
        raw = body_bytes(response)
        headers = {**response["headers"], "content-length": str(len(raw))}
        return AWSResponse(request.url, response["status"], headers, RawBody(raw))


# -- requests and answers ------------------------------------------------------------


def test_it_is_an_embedder(client: Any) -> None:
    embedder: Embedder = BedrockTitan(client)
    assert embedder.name == "bedrock-titan"
    assert embedder.dimensions == 1024
    assert BedrockTitan(client, dimensions=256).dimensions == 256


@pytest.mark.parametrize("dimensions", [0, 384, 1536])
def test_dimensions_titan_v2_does_not_offer_are_refused(client: Any, dimensions: int) -> None:
    with pytest.raises(ValueError):
        BedrockTitan(client, dimensions=dimensions)


def test_one_text_is_one_call_with_the_titan_body(client: Any, stubber: Stubber) -> None:
    (exchange,) = exchanges("titan-v2-batch-256")[:1]
    queue(stubber, exchange)
    (vector,) = BedrockTitan(client, dimensions=256).embed(
        [exchange["request"]["body"]["inputText"]]
    )
    assert len(vector) == 256
    assert vector == pytest.approx(recorded_vector(exchange), abs=1e-9)
    assert math.fsum(x * x for x in vector) == pytest.approx(1.0, abs=1e-12)


def test_a_batch_in_one_worker_keeps_order(client: Any, stubber: Stubber) -> None:
    recorded = exchanges("titan-v2-batch-256")
    for exchange in recorded:
        queue(stubber, exchange)
    texts = [e["request"]["body"]["inputText"] for e in recorded]
    vectors = BedrockTitan(client, dimensions=256, max_workers=1).embed(texts)
    assert len(vectors) == len(texts)
    for vector, exchange in zip(vectors, recorded, strict=True):
        assert vector == pytest.approx(recorded_vector(exchange), abs=1e-9)


def test_a_batch_in_the_pool_keeps_order_when_answers_come_back_reversed(client: Any) -> None:
    recorded = exchanges("titan-v2-batch-256")
    replay = Replayer(client, recorded)
    texts = [e["request"]["body"]["inputText"] for e in recorded]
    replay.delays = {text: 0.05 * (len(texts) - i) for i, text in enumerate(texts)}
    vectors = BedrockTitan(client, dimensions=256).embed(texts)
    assert replay.most_in_flight > 1  # the calls did run at once
    assert replay.answered == texts[::-1]
    for vector, exchange in zip(vectors, recorded, strict=True):
        assert vector == pytest.approx(recorded_vector(exchange), abs=1e-9)


def test_the_pool_is_bounded(client: Any) -> None:
    recorded = exchanges("titan-v2-batch-256")
    replay = Replayer(client, recorded)
    texts = [e["request"]["body"]["inputText"] for e in recorded] * 4
    replay.delays = dict.fromkeys(texts, 0.02)
    vectors = BedrockTitan(client, dimensions=256, max_workers=3).embed(texts)
    assert len(vectors) == 20
    assert 1 < replay.most_in_flight <= 3


def test_an_empty_list_makes_no_call(client: Any, stubber: Stubber) -> None:
    assert BedrockTitan(client).embed([]) == []


def test_text_is_cut_to_the_invoke_model_character_limit(client: Any, stubber: Stubber) -> None:
    exchange = exchanges("titan-v2-batch-256")[0]
    text = "é" * (MAX_CHARACTERS - 1) + "Z" + "tail that is never sent"
    assert MAX_CHARACTERS == 50_000
    request = {**exchange["request"]}
    request["body"] = {**request["body"], "inputText": "é" * (MAX_CHARACTERS - 1) + "Z"}
    queue(stubber, exchange, request)
    (vector,) = BedrockTitan(client, dimensions=256).embed([text])
    assert len(vector) == 256


# -- failures ------------------------------------------------------------------------


def embed_error(embedder: BedrockTitan, texts: list[str]) -> EmbeddingError:
    with pytest.raises(EmbeddingError) as caught:
        embedder.embed(texts)
    return caught.value


def shows(error: BaseException) -> str:
    """All a log line with the traceback would show of the error."""
    return "".join(traceback.format_exception(error))


@pytest.mark.parametrize(
    ("recording", "says"),
    [
        ("titan-v2-throttled", "ThrottlingException (HTTP 429, request "),
        ("titan-v2-empty-text", "ValidationException (HTTP 400, request "),
        ("titan-v2-validation-quotes-input", "ValidationException (HTTP 400, request "),
        ("titan-v2-malformed-body", "without a JSON 'embedding'"),
        ("titan-v2-no-embedding", "without a JSON 'embedding'"),
        ("titan-v2-wrong-dimensions", "a vector of 512, not 256 dimensions"),
    ],
)
def test_failures_are_embedding_errors_that_never_show_the_text(
    client: Any, stubber: Stubber, recording: str, says: str
) -> None:
    (exchange,) = exchanges(recording)
    queue(stubber, exchange)
    text = exchange["request"]["body"]["inputText"]
    error = embed_error(BedrockTitan(client, dimensions=256), [text])
    assert says in str(error)
    assert "amazon.titan-embed-text-v2:0" in str(error)
    if exchange["response"]["status"] != 200:
        assert exchange["response"]["headers"]["x-amzn-requestid"] in str(error)
    if text:
        assert text not in shows(error)
        assert "4111" not in shows(error)


def test_a_throttled_http_answer_is_parsed_by_botocore(client: Any) -> None:
    recorded = exchanges("titan-v2-batch-256") + exchanges("titan-v2-throttled")
    Replayer(client, recorded)
    texts = [e["request"]["body"]["inputText"] for e in recorded]
    assert texts.count("Who manages Atlas?") == 2  # the throttled one wins the lookup
    error = embed_error(BedrockTitan(client, dimensions=256), texts)
    assert "ThrottlingException (HTTP 429, request bc087a02-" in str(error)
    assert all(text not in shows(error) for text in texts)


def test_an_unreachable_endpoint_is_an_embedding_error(client: Any) -> None:
    def refuse(request: Any, **_: Any) -> None:
        raise EndpointConnectionError(endpoint_url=request.url)

    client.meta.events.register("before-send.bedrock-runtime.InvokeModel", refuse)
    error = embed_error(BedrockTitan(client, dimensions=256), ["Who manages Atlas?"])
    assert "could not be called: EndpointConnectionError" in str(error)
    assert "Who manages Atlas?" not in shows(error)


def test_one_string_is_refused(client: Any) -> None:
    with pytest.raises(TypeError):
        BedrockTitan(client).embed("not a list")  # type: ignore[arg-type]
