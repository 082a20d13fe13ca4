"""Erasure on the AWS path, on moto's server (SQS FIFO + DynamoDB over HTTP): the
erasures function accepts (202) and queues a message, recall hides the entity while the
erasure is pending, the worker's lambda_handler completes it from the SQS event, the
status reads done through the API, and a duplicate message or a retry changes nothing.
The API functions run through the local gateway (authorizer, then the handler)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from taisce.adapters.sqs_queue import group_id
from taisce.local.gateway import Gateway
from tests.integration import test_worker_sqs as worker_sqs
from tests.moto_server import MotoDynamoDb

# The SQS worker module's fixtures and helpers (its queue, environment and gateway).
moto = worker_sqs.moto
sqs = worker_sqs.sqs
queue = worker_sqs.queue
aws = worker_sqs.aws
project = worker_sqs.project
api = worker_sqs.api
FACTS = worker_sqs.FACTS
Context = worker_sqs.Context
bearer = worker_sqs.bearer
receive = worker_sqs.receive
run = worker_sqs.run

MESSAGES = {
    "messages": [
        {"id": "m-1", "role": "user", "content": "Atlas started at Acme Corp.\nMaya is nice."},
        {"id": "m-2", "role": "assistant", "content": "Noted: Atlas likes tea."},
    ]
}


def call(api: Gateway, headers: dict[str, str], method: str, path: str, body: Any = None) -> Any:
    raw = json.dumps(body).encode() if body is not None else b""
    reply = api.handle(method, path, headers, raw, "127.0.0.1")
    return reply.status, json.loads(reply.body) if reply.body else None


def recalled(api: Gateway, headers: dict[str, str], question: str) -> str:
    body = {"question": question, "hops": 2, "source_roles": ["user", "assistant", "tool"]}
    status, answer = call(api, headers, "POST", "/v1/recalls", body)
    assert status == 200, answer
    return json.dumps(answer["facts"] + answer["reports"] + answer["passages"])


def drain(sqs: Any, queue: dict[str, str]) -> None:
    """Run the worker on everything queued so far (the facts' and messages' passes)."""
    while True:
        reply = sqs.receive_message(QueueUrl=queue["url"], MaxNumberOfMessages=10)
        if not reply.get("Messages"):
            return
        for m in reply["Messages"]:
            sqs.delete_message(QueueUrl=queue["url"], ReceiptHandle=m["ReceiptHandle"])


def test_accepted_hidden_completed_by_the_worker_and_read_back(
    api: Gateway, moto: MotoDynamoDb, sqs: Any, queue: dict[str, str], project: str
) -> None:
    headers = bearer(moto, project)
    assert call(api, headers, "POST", "/v1/facts", FACTS)[0] == 201
    assert call(api, headers, "POST", "/v1/messages", MESSAGES)[0] == 202
    assert run(receive(sqs, queue, 2), sqs, queue, Context(900)) == []
    assert "Atlas" in recalled(api, headers, "Where does Atlas work?")

    status, accepted = call(api, headers, "POST", "/v1/erasures", {"subject": "atlas"})
    assert status == 202, accepted
    assert accepted["status"] == "pending"
    assert accepted["status_url"] == f"/v1/erasures/{accepted['id']}"
    assert accepted["erased"] == dict.fromkeys(accepted["erased"], 0)
    # Pending: nothing erased yet, but no recall returns it.
    assert call(api, headers, "GET", accepted["status_url"])[1]["status"] == "pending"
    store = moto.store()
    assert any(f.subject_key == "atlas" for f in store.project_facts(project))
    for question in ("Where does Atlas work?", "Acme Corp", "Atlas"):
        assert "atlas" not in recalled(api, headers, question).lower()

    (record,) = receive(sqs, queue, 1)
    body = json.loads(record["body"])
    assert body == {"project": project, "kind": "erasure", "ids": [accepted["id"]]}
    assert "atlas" not in record["body"].lower()  # the id only, never the name
    assert run([record], sqs, queue, Context(900)) == []

    status, done = call(api, headers, "GET", accepted["status_url"])
    assert status == 200 and done["status"] == "done" and done["finished_at"]
    assert done["erased"]["facts"] == 1 and done["erased"]["entities"] == 1
    assert done["erased"]["messages"] == 2 and done["erased"]["passages"] == 2
    assert not any("atlas" in f.subject_key for f in store.project_facts(project))
    assert "Acme Corp" in recalled(api, headers, "Acme Corp")

    # The same message again (a new SQS message id: Powertools' idempotency does not
    # catch it) and a sweep: nothing changes, the audit record stays one.
    again = {**record, "messageId": record["messageId"] + "-again"}
    assert run([again], None, None, Context(900)) == []
    assert call(api, headers, "GET", accepted["status_url"])[1] == done
    assert [r.id for r in store.erasures(project)] == [accepted["id"]]
    assert project not in store.erasing_projects()


def test_a_lost_message_is_found_by_the_sweep(
    api: Gateway, moto: MotoDynamoDb, sqs: Any, queue: dict[str, str], project: str
) -> None:
    from functions.worker import app as worker

    headers = bearer(moto, project)
    assert call(api, headers, "POST", "/v1/facts", FACTS)[0] == 201
    drain(sqs, queue)
    status, accepted = call(api, headers, "POST", "/v1/erasures", {"subject": "Acme Corp"})
    assert status == 202
    drain(sqs, queue)  # the erasure's message is lost
    assert project in moto.store().erasing_projects()
    swept = worker.lambda_handler({}, None)["projects"]
    assert swept >= 1  # every project of the table with work: a message each
    mine = [r for r in receive(sqs, queue, swept) if json.loads(r["body"])["project"] == project]
    assert mine and json.loads(mine[0]["body"])["kind"] == "sweep"
    assert mine[0]["attributes"]["MessageGroupId"] == group_id(project)
    assert run(mine, sqs, queue, Context(900)) == []
    assert call(api, headers, "GET", accepted["status_url"])[1]["status"] == "done"


@pytest.mark.parametrize(
    ("method", "path", "body", "expected"),
    [
        ("POST", "/v1/erasures", {"subject": ""}, (400, "invalid_request")),
        ("POST", "/v1/erasures", {"subject": "Atlas", "also": 1}, (400, "invalid_request")),
        ("POST", "/v1/erasures", ["Atlas"], (400, "invalid_request")),
        ("GET", "/v1/erasures/era_" + "0" * 32, None, (404, "not_found")),
        ("GET", "/v1/erasures/not-an-id", None, (404, "not_found")),
        ("GET", "/v1/erasures/%00", None, (404, "not_found")),
    ],
)
def test_bad_input_gets_the_api_shape_and_changes_nothing(
    api: Gateway,
    moto: MotoDynamoDb,
    project: str,
    method: str,
    path: str,
    body: Any,
    expected: tuple[int, str],
) -> None:
    status, answer = call(api, bearer(moto, project), method, path, body)
    assert (status, answer["error"]["code"]) == expected
    assert answer["error"]["message"]
    assert moto.store().pending_erasures(project) == []
