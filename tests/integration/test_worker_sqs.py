"""The SQS worker on moto's server (SQS FIFO + DynamoDB over HTTP), with the events
Lambda would build from the messages the API really sent.

The API functions run through the local gateway (authorizer, then the handler), the
worker's lambda_handler gets SQS events made from `ReceiveMessage` answers, as
Lambda's poller makes them.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from functions.worker import app as worker
from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.adapters.sqlite.vectors import SqliteVectorIndex
from taisce.api import services
from taisce.credentials import new_secret, secret_hash
from taisce.domain.controls import Limits
from taisce.domain.ports.vectors import EmbeddingError
from taisce.domain.recall import Semantic
from taisce.local.gateway import Gateway
from taisce.local.routes import read_api
from taisce.service.memory import Memory
from taisce.service.work import WorkLeft, WorkMessage, work_on
from tests.contract.factories import credential, fact
from tests.moto_server import AWS_ENV, TEMPLATE, MotoDynamoDb, shared_moto
from tests.openai_replay import ChatReplay

REGION = AWS_ENV["AWS_DEFAULT_REGION"]


def _reset() -> None:
    services.cache_clear()
    worker._once.cache_clear()
    worker._ready.cache_clear()


@pytest.fixture(scope="module")
def moto() -> MotoDynamoDb:
    # A table of its own: the sweep lists every project with marks in its table.
    return shared_moto().table_named("taisce-worker")


@pytest.fixture(scope="module")
def sqs(moto: MotoDynamoDb) -> Any:
    import boto3

    session = boto3.session.Session(
        aws_access_key_id=AWS_ENV["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=AWS_ENV["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=AWS_ENV["AWS_SESSION_TOKEN"],
        region_name=REGION,
    )
    client = session.client("sqs", endpoint_url=moto.endpoint)
    yield client
    client.close()


@pytest.fixture
def queue(sqs: Any) -> dict[str, str]:
    url = sqs.create_queue(
        QueueName=f"work-{uuid.uuid4().hex[:8]}.fifo",
        Attributes={"FifoQueue": "true", "VisibilityTimeout": "0"},
    )["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
    return {"url": url, "arn": arn["QueueArn"]}


@pytest.fixture
def aws(
    moto: MotoDynamoDb, queue: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """The functions' environment as the template sets it, against moto."""
    for name, value in {
        **moto.env,
        "TAISCE_EMBEDDINGS": "none",
        "TAISCE_WORK_QUEUE_URL": queue["url"],
        "TAISCE_SQS_ENDPOINT": moto.endpoint,
    }.items():
        monkeypatch.setenv(name, value)
    _reset()
    yield
    _reset()


@pytest.fixture
def project() -> str:
    return f"proj-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def api(aws: None, moto: MotoDynamoDb, project: str) -> Gateway:
    return Gateway(read_api(TEMPLATE))


def bearer(moto: MotoDynamoDb, project: str) -> dict[str, str]:
    secret = new_secret()
    moto.store().add_credential(credential(project), secret_hash(secret))
    return {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}


def post(api: Gateway, headers: dict[str, str], path: str, body: dict[str, Any]) -> Any:
    reply = api.handle("POST", path, headers, json.dumps(body).encode(), "127.0.0.1")
    assert reply.status in (201, 202), reply.body
    return json.loads(reply.body)


def receive(sqs: Any, queue: dict[str, str], count: int) -> list[dict[str, Any]]:
    """`count` messages as Lambda's SQS poller hands them to the function."""
    records: list[dict[str, Any]] = []
    while len(records) < count:
        reply = sqs.receive_message(
            QueueUrl=queue["url"],
            MaxNumberOfMessages=min(10, count - len(records)),
            MessageSystemAttributeNames=["All"],
            WaitTimeSeconds=1,
        )
        got = reply.get("Messages", [])
        assert got, f"expected {count} messages, got {len(records)}"
        for m in got:
            records.append(
                {
                    "messageId": m["MessageId"],
                    "receiptHandle": m["ReceiptHandle"],
                    "body": m["Body"],
                    "attributes": m["Attributes"],
                    "messageAttributes": {},
                    "md5OfBody": m["MD5OfBody"],
                    "eventSource": "aws:sqs",
                    "eventSourceARN": queue["arn"],
                    "awsRegion": REGION,
                }
            )
    return records


class Context:
    """What the worker reads of Lambda's context."""

    function_name = "WorkerFunction"
    aws_request_id = "req-1"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:000000000000:function:WorkerFunction"

    def __init__(self, seconds_left: float = 120) -> None:
        self.seconds_left = seconds_left

    def get_remaining_time_in_millis(self) -> int:
        return int(self.seconds_left * 1000)


def run(
    records: Sequence[dict[str, Any]],
    sqs: Any = None,
    queue: Any = None,
    context: Context | None = None,
) -> list[str]:
    """The worker on one batch; the ids of the records it reports as failed. Like
    Lambda's poller, deletes the others from the queue (when given)."""
    result = worker.lambda_handler({"Records": list(records)}, context or Context())
    failed = [f["itemIdentifier"] for f in result["batchItemFailures"]]
    for r in records:
        if sqs is not None and r["messageId"] not in failed:
            sqs.delete_message(QueueUrl=queue["url"], ReceiptHandle=r["receiptHandle"])
    return failed


FACTS = {
    "facts": [
        {"subject": "Atlas", "predicate": "works at", "object": "Acme Corp", "source_role": "user"},
        {
            "subject": "Acme Corp",
            "predicate": "is based in",
            "object": "Dublin",
            "source_role": "user",
        },
    ]
}


def test_stored_facts_are_announced_and_become_reports(
    api: Gateway, moto: MotoDynamoDb, sqs: Any, queue: dict[str, str], project: str
) -> None:
    stored = post(api, bearer(moto, project), "/v1/facts", FACTS)
    (record,) = receive(sqs, queue, 1)
    work = WorkMessage.model_validate_json(record["body"])
    assert work == WorkMessage(
        project=project, kind="facts", ids=[f["id"] for f in stored["facts"]]
    )
    assert "Atlas" not in record["body"]  # ids only, never stored text
    store = moto.store()
    assert store.dirty_entities(project)
    assert run([record]) == []
    assert store.dirty_entities(project) == []
    assert project not in store.dirty_projects()
    reports = store.reports_of_entity(project, "atlas", ["user"])
    assert reports and "Atlas" in reports[0].title


def test_stored_messages_are_announced_by_id(
    api: Gateway, moto: MotoDynamoDb, sqs: Any, queue: dict[str, str], project: str
) -> None:
    body = {"messages": [{"id": "m-1", "role": "user", "content": "Atlas likes green tea."}]}
    post(api, bearer(moto, project), "/v1/messages", body)
    (record,) = receive(sqs, queue, 1)
    assert json.loads(record["body"]) == {"project": project, "kind": "messages", "ids": ["m-1"]}
    assert run([record]) == []


def test_a_failing_record_is_reported_with_the_rest_of_its_group(
    api: Gateway, moto: MotoDynamoDb, sqs: Any, queue: dict[str, str], project: str
) -> None:
    headers = bearer(moto, project)
    # A malformed message first, in the project's own group, then real work for it
    # and for another project.
    from taisce.adapters.sqs_queue import group_id

    sqs.send_message(
        QueueUrl=queue["url"],
        MessageBody="not json",
        MessageGroupId=group_id(project),
        MessageDeduplicationId=uuid.uuid4().hex,
    )
    post(api, headers, "/v1/facts", FACTS)
    other = f"other-{uuid.uuid4().hex[:8]}"
    post(api, bearer(moto, other), "/v1/facts", FACTS)
    bad, same_group, other_group = receive(sqs, queue, 3)
    assert bad["body"] == "not json"
    failed = run([bad, same_group, other_group])
    # The group's later record is failed too, so a project's work keeps its order.
    assert failed == [bad["messageId"], same_group["messageId"]]
    store = moto.store()
    assert store.dirty_entities(project)  # still waiting, nothing lost
    assert store.dirty_entities(other) == []
    assert run([same_group]) == []  # SQS delivers it again: now it goes through
    assert store.dirty_entities(project) == []


def test_a_duplicate_delivery_is_processed_once(
    api: Gateway, moto: MotoDynamoDb, sqs: Any, queue: dict[str, str], project: str
) -> None:
    headers = bearer(moto, project)
    post(api, headers, "/v1/facts", FACTS)
    (first,) = receive(sqs, queue, 1)
    assert run([first], sqs, queue) == []
    store = moto.store()
    store.put_facts(project, [fact("Atlas", "lives in", "Cork")])  # new work, no message
    assert run([first]) == []  # the same SQS message again: its pass is not run again
    assert [k for _, k, _ in store.dirty_entities(project)] == ["atlas", "cork"]
    post(api, headers, "/v1/facts", {"facts": [FACTS["facts"][0]]})
    (second,) = receive(sqs, queue, 1)
    assert second["messageId"] != first["messageId"]
    assert run([second], sqs, queue) == []  # a new message does the pass
    assert store.dirty_entities(project) == []


def test_the_sweep_queues_a_pass_for_work_no_message_announced(
    aws: None, moto: MotoDynamoDb, sqs: Any, queue: dict[str, str], project: str
) -> None:
    moto.store().put_facts(project, [fact("Atlas", "works at", "Acme Corp")])
    scheduled = {"source": "aws.events", "detail-type": "Scheduled Event", "detail": {}}
    assert worker.lambda_handler(scheduled, None)["projects"] >= 1
    # Other tests' projects in the shared table may have work too: skip their passes.
    for _ in range(100_000):
        (mine,) = receive(sqs, queue, 1)
        if json.loads(mine["body"])["project"] == project:
            break
        sqs.delete_message(QueueUrl=queue["url"], ReceiptHandle=mine["receiptHandle"])
    assert json.loads(mine["body"])["kind"] == "sweep"
    assert run([mine]) == []
    assert moto.store().dirty_entities(project) == []


def test_a_failed_send_does_not_fail_the_write(
    api: Gateway, moto: MotoDynamoDb, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAISCE_WORK_QUEUE_URL", f"{moto.endpoint}/000000000000/missing.fifo")
    _reset()
    stored = post(api, bearer(moto, project), "/v1/facts", FACTS)
    assert len(stored["facts"]) == 2
    assert moto.store().dirty_entities(project)  # the sweep will find it


class DownEmbedder:
    name = "down"
    dimensions = 4

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbeddingError("the model is down")


def test_a_pass_that_cannot_embed_leaves_its_work_and_says_so(
    moto: MotoDynamoDb, project: str, tmp_path: Path
) -> None:
    store = DynamoDbStore(moto.table, client=moto.shared_client)
    index = SqliteVectorIndex(tmp_path / "v.sqlite3", 4)
    memory = Memory(store, Limits(), semantic=Semantic(DownEmbedder(), index))
    store.put_facts(project, [fact("Atlas", "works at", "Acme Corp")])
    with pytest.raises(WorkLeft):
        work_on(memory, WorkMessage(project=project, kind="facts"))
    assert store.pending_vectors(project, 10)  # kept for the retry


def test_a_pass_extracts_the_announced_messages_facts(
    aws: None,
    moto: MotoDynamoDb,
    sqs: Any,
    queue: dict[str, str],
    project: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The queue consumer calls the one extraction entry point: the message's facts are
    stored with its role and quote offsets, and a second delivery asks the model nothing."""
    with ChatReplay("valid") as replay:
        for name, value in {
            "TAISCE_EXTRACTOR": "openai",
            "TAISCE_EXTRACTOR_MODEL": "qwen2.5:7b-instruct",
            "TAISCE_EXTRACTOR_BASE_URL": replay.base_url,
            "TAISCE_EXTRACTOR_TIMEOUT": "5",
            # Only extraction calls are counted here (summaries: test_summaries_http.py).
            "TAISCE_REPORT_SUMMARIES": "statements",
        }.items():
            monkeypatch.setenv(name, value)
        _reset()
        api = Gateway(read_api(TEMPLATE))
        content = "I work at Acme Corp, since May."
        body = {"messages": [{"id": "m-1", "role": "user", "content": content}]}
        post(api, bearer(moto, project), "/v1/messages", body)
        (record,) = receive(sqs, queue, 1)
        assert run([record]) == []
        (stored,) = moto.store().facts_with_subject(project, "sam ortiz")
        assert (stored.source_role, stored.message_id) == ("user", "m-1")
        assert content[stored.quote_start : stored.quote_end] == stored.quote
        assert len(replay.requests) == 1
        record = {**record, "messageId": f"{record['messageId']}-again"}
        assert run([record]) == []  # a new delivery: the message is already done
        assert len(replay.requests) == 1


def test_a_pass_short_of_time_starts_no_extraction_and_queues_the_rest(
    aws: None,
    moto: MotoDynamoDb,
    sqs: Any,
    queue: dict[str, str],
    project: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With less time left than one extraction's worst case (3 attempts x 5 s, the
    waits, and 60 s to finish: 76.5 s), the pass asks the model nothing, keeps the
    message's mark, succeeds, and queues a pass that goes on; given time, that pass
    extracts the message."""
    with ChatReplay("valid") as replay:
        for name, value in {
            "TAISCE_EXTRACTOR": "openai",
            "TAISCE_EXTRACTOR_MODEL": "qwen2.5:7b-instruct",
            "TAISCE_EXTRACTOR_BASE_URL": replay.base_url,
            "TAISCE_EXTRACTOR_TIMEOUT": "5",
            "TAISCE_REPORT_SUMMARIES": "statements",
        }.items():
            monkeypatch.setenv(name, value)
        _reset()
        api = Gateway(read_api(TEMPLATE))
        body = {"messages": [{"id": "m-1", "role": "user", "content": "I work at Acme Corp."}]}
        post(api, bearer(moto, project), "/v1/messages", body)
        (record,) = receive(sqs, queue, 1)
        assert run([record], sqs, queue, Context(seconds_left=70)) == []
        assert replay.requests == []
        store = moto.store()
        assert store.pending_extractions(project, 10) == ["m-1"]
        (follow,) = receive(sqs, queue, 1)
        assert WorkMessage.model_validate_json(follow["body"]) == WorkMessage(
            project=project, kind="sweep"
        )
        assert run([follow], sqs, queue, Context(seconds_left=80)) == []
        assert len(replay.requests) == 1
        assert store.pending_extractions(project, 10) == []
        assert store.facts_with_subject(project, "sam ortiz")
