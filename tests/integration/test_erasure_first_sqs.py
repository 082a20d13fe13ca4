"""An accepted erasure comes before any other work of its project, on the AWS path:
moto's server (SQS FIFO + DynamoDB over HTTP), the API functions through the local
gateway, the worker's lambda_handler on events built from real `ReceiveMessage`
answers, and the extraction model on Bedrock's Converse answered from a recorded
exchange (tests/recordings/bedrock/converse-tool-use.json) that the adapter parses.

Every pass, whatever message asked for it, completes the project's pending erasures
first, and an extraction checks for one accepted since before it asks the model: so
the model is never sent what an accepted erasure takes, a late extraction stores
nothing about it, and the erasure waits for no message of its own."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.client import BaseClient

from taisce.local.gateway import Gateway
from taisce.local.routes import read_api
from tests.integration import test_worker_sqs as worker_sqs
from tests.integration.test_erasure_worker_sqs import call, drain
from tests.moto_server import TEMPLATE, MotoDynamoDb

moto = worker_sqs.moto
sqs = worker_sqs.sqs
queue = worker_sqs.queue
aws = worker_sqs.aws
project = worker_sqs.project
api = worker_sqs.api
bearer = worker_sqs.bearer
receive = worker_sqs.receive
run = worker_sqs.run
Context = worker_sqs.Context

RECORDING = Path(__file__).parent.parent / "recordings" / "bedrock" / "converse-tool-use.json"
# A document the recording's answer quotes (its quotes are found in it), in three
# passages (of at most 150 characters): an erasure of Sam Ortiz masks the second only.
DOCUMENT = (
    "Acme Corp handbook, page 3: who reports to whom in the platform group since the "
    "spring reorganisation, kept by the people team.\n\n"
    "Sam Ortiz reports to Lee Park. The line was agreed in March and is reviewed every "
    "quarter by the heads of engineering and the people team.\n\n"
    "Lee Park leads the Data Platform team."
)
SAM = {
    "facts": [
        {
            "subject": "Sam Ortiz",
            "predicate": "works at",
            "object": "Acme Corp",
            "source_role": "user",
        },
    ]
}


class Converse:
    """Bedrock's Converse answered with the recorded answer at botocore's one entry
    point (every other call goes through); the requests kept. `during` runs inside the
    first call, as if it happened while the model was working."""

    def __init__(self) -> None:
        (self.exchange,) = json.loads(RECORDING.read_text(encoding="utf-8"))["exchanges"]
        self.requests: list[dict[str, Any]] = []
        self.during: Callable[[], None] | None = None

    def patch(self, monkeypatch: pytest.MonkeyPatch) -> None:
        original = BaseClient._make_api_call

        def answering(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
            if client.meta.service_model.service_name != "bedrock-runtime":
                return original(client, operation, params)
            assert operation == "Converse"
            self.requests.append(params)
            if len(self.requests) == 1 and self.during is not None:
                self.during()
            return copy.deepcopy(self.exchange["response"])

        monkeypatch.setattr(BaseClient, "_make_api_call", answering)

    def sent(self) -> list[str]:
        """Each request as sent, lower-cased, after checking it is the recorded one's
        shape (model, forced tool and schema, inference settings)."""
        recorded = self.exchange["request"]
        for request in self.requests:
            for key in ("modelId", "toolConfig", "inferenceConfig"):
                assert request[key] == recorded[key]
        return [json.dumps(r).lower() for r in self.requests]


@pytest.fixture
def converse(aws: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Converse]:
    """The functions' environment with Bedrock extraction (the recording's model and
    token limit; statement summaries, so that only extraction asks the model)."""
    for name, value in {
        "TAISCE_EXTRACTOR": "bedrock",
        "TAISCE_EXTRACTOR_MODEL": "anthropic.claude-3-5-haiku-20241022-v1:0",
        "TAISCE_EXTRACTOR_MAX_TOKENS": "8192",
        "TAISCE_REPORT_SUMMARIES": "statements",
    }.items():
        monkeypatch.setenv(name, value)
    worker_sqs._reset()
    replay = Converse()
    replay.patch(monkeypatch)
    yield replay
    worker_sqs._reset()


def messages(*ids: str) -> dict[str, Any]:
    return {
        "messages": [
            {"id": i, "role": "tool", "content": DOCUMENT, "source": "docs/handbook.md"}
            for i in ids
        ]
    }


def held_about_sam(moto: MotoDynamoDb, project: str) -> list[str]:
    """Every stored fact or message text that still names Sam Ortiz."""
    store = moto.store()
    facts = [f.statement for f in store.project_facts(project)]
    texts = [m.content for m in store.project_messages(project)]
    return [t for t in facts + texts if "sam ortiz" in t.lower()]


def erased(api: Gateway, headers: dict[str, str], accepted: dict[str, Any]) -> dict[str, Any]:
    status, answer = call(api, headers, "GET", accepted["status_url"])
    assert status == 200, answer
    return answer  # type: ignore[no-any-return]


def test_a_messages_pass_completes_the_erasure_before_asking_the_model(
    converse: Converse, moto: MotoDynamoDb, sqs: Any, queue: dict[str, str], project: str
) -> None:
    """The project's group holds [messages, erasure]: the messages pass (first or
    retried) completes the erasure, then extracts the masked message; the erasure's own
    message finds it done."""
    api = Gateway(read_api(TEMPLATE))
    headers = bearer(moto, project)
    assert call(api, headers, "POST", "/v1/facts", SAM)[0] == 201
    assert run(receive(sqs, queue, 1), sqs, queue, Context(900)) == []
    assert call(api, headers, "POST", "/v1/messages", messages("doc-1"))[0] == 202
    status, accepted = call(api, headers, "POST", "/v1/erasures", {"subject": "Sam Ortiz"})
    assert status == 202 and accepted["status"] == "pending"

    (announced,) = receive(sqs, queue, 1)
    assert json.loads(announced["body"])["kind"] == "messages"
    assert run([announced], sqs, queue, Context(900)) == []

    done = erased(api, headers, accepted)
    assert done["status"] == "done"
    assert done["erased"]["facts"] == 1 and done["erased"]["messages"] == 1
    (sent,) = converse.sent()
    assert "sam ortiz" not in sent and "lee park leads the data platform team" in sent
    assert held_about_sam(moto, project) == []
    # The fact the masked message still holds is extracted (its quote is found).
    assert [f.statement for f in moto.store().project_facts(project)] == [
        "Lee Park leads the Data Platform team."
    ]
    (own,) = receive(sqs, queue, 1)
    assert json.loads(own["body"])["kind"] == "erasure"
    assert run([own], sqs, queue, Context(900)) == []
    assert erased(api, headers, accepted) == done
    assert [r.id for r in moto.store().erasures(project)] == [accepted["id"]]


def test_an_erasure_accepted_during_extraction_comes_before_the_next_one(
    converse: Converse, moto: MotoDynamoDb, sqs: Any, queue: dict[str, str], project: str
) -> None:
    """Accepted while the model works on the first of two messages: the first's answer,
    landing after it, stores nothing about Sam Ortiz, and the erasure is completed
    before the second message is sent to the model, within the same pass."""
    api = Gateway(read_api(TEMPLATE))
    headers = bearer(moto, project)
    assert call(api, headers, "POST", "/v1/facts", SAM)[0] == 201
    assert run(receive(sqs, queue, 1), sqs, queue, Context(900)) == []
    assert call(api, headers, "POST", "/v1/messages", messages("doc-1", "doc-2"))[0] == 202
    accepted: dict[str, Any] = {}

    def erase() -> None:
        status, answer = call(api, headers, "POST", "/v1/erasures", {"subject": "Sam Ortiz"})
        assert status == 202
        accepted.update(answer)

    converse.during = erase
    (announced,) = receive(sqs, queue, 1)
    assert run([announced], sqs, queue, Context(900)) == []

    first, second = converse.sent()
    assert "sam ortiz" in first  # sent before the erasure was accepted
    assert "sam ortiz" not in second
    assert erased(api, headers, accepted)["status"] == "done"
    assert held_about_sam(moto, project) == []
    statements = [f.statement for f in moto.store().project_facts(project)]
    assert statements == ["Lee Park leads the Data Platform team."]


def test_a_facts_pass_completes_an_erasure_whose_message_was_lost(
    api: Gateway, moto: MotoDynamoDb, sqs: Any, queue: dict[str, str], project: str
) -> None:
    """The erasure's message lost (or still behind a retried one): the project's next
    pass, a `facts` one, completes it; it does not wait for the sweep."""
    headers = bearer(moto, project)
    assert call(api, headers, "POST", "/v1/facts", SAM)[0] == 201
    drain(sqs, queue)
    status, accepted = call(api, headers, "POST", "/v1/erasures", {"subject": "Sam Ortiz"})
    assert status == 202
    drain(sqs, queue)
    lee = {"subject": "Lee Park", "predicate": "leads", "object": "Data Platform"}
    other = {"facts": [{**lee, "source_role": "user"}]}
    assert call(api, headers, "POST", "/v1/facts", other)[0] == 201
    (announced,) = receive(sqs, queue, 1)
    assert json.loads(announced["body"])["kind"] == "facts"
    assert run([announced], sqs, queue, Context(900)) == []
    assert erased(api, headers, accepted)["status"] == "done"
    assert project not in moto.store().erasing_projects()
    assert held_about_sam(moto, project) == []
