"""What the functions print on Lambda: Powertools' JSON log lines with the invocation's
context and API Gateway's request id as correlation id, and CloudWatch's embedded
metric format (EMF) documents for recalls and the worker; never a credential.

The committed events (events/, tests/lambda_events.py) run through their handlers
in-process against moto's server, as tests/function_events.py runs them, with a
Lambda context; everything written to stdout and stderr is then parsed.
"""

from __future__ import annotations

import functools
import io
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from taisce.api.logs import logger
from taisce.credentials import bearer_secret, secret_hash
from tests.contract.factories import credential
from tests.function_events import (
    EVENTS_DIR,
    Context,
    environment,
    function_env,
    handler_of,
    timeout_of,
)
from tests.lambda_events import BEARER, EVENTS, PROJECT
from tests.moto_server import AWS_ENV, shared_moto

ROOT = Path(__file__).resolve().parents[2]
TABLE = "taisce-observability"
# The events that make a recall find something, leave an erasure pending, and have the
# worker sweep (while the erasure is pending: it counts it) and take a message (whose
# pass completes the erasure first, whatever its kind).
RUN = [
    "facts-store.json",
    "recall.json",
    "erasures.json",
    "worker-schedule.json",
    "worker-sqs.json",
]


@functools.cache
def _environment(table: str = TABLE) -> dict[str, str]:
    """A table, queue and credential for one fixture's runs (made once)."""
    moto = shared_moto().table_named(table)
    session = boto3.session.Session(
        aws_access_key_id=AWS_ENV["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=AWS_ENV["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=AWS_ENV["AWS_SESSION_TOKEN"],
        region_name=AWS_ENV["AWS_DEFAULT_REGION"],
    )
    sqs = session.client("sqs", endpoint_url=moto.endpoint)
    queue = sqs.create_queue(
        QueueName=f"{table}.fifo", Attributes={"FifoQueue": "true", "VisibilityTimeout": "0"}
    )["QueueUrl"]
    secret = bearer_secret(BEARER)
    assert secret is not None
    moto.store().add_credential(credential(PROJECT), secret_hash(secret))
    return {
        "TAISCE_DYNAMODB_TABLE": table,
        "TAISCE_DYNAMODB_ENDPOINT": moto.endpoint,
        "TAISCE_WORK_QUEUE_URL": queue,
        "TAISCE_SQS_ENDPOINT": moto.endpoint,
        "TAISCE_REGION": AWS_ENV["AWS_DEFAULT_REGION"],
    }


@pytest.fixture(scope="module")
def printed() -> dict[str, Any]:
    """Each event's answer and the JSON documents its invocation printed."""
    here = _environment()
    found: dict[str, Any] = {}
    capture = pytest.MonkeyPatch()
    for name in RUN:
        function, _ = EVENTS[name]
        env = {**AWS_ENV, **function_env(function), **here}
        event = json.loads((EVENTS_DIR / name).read_text())
        out, err = io.StringIO(), io.StringIO()
        capture.setattr(sys, "stdout", out)
        capture.setattr(sys, "stderr", err)
        # Powertools' log handler writes to the stream it was given when made.
        capture.setattr(logger.registered_handler, "stream", out)
        with environment(env):
            started = time.time()
            answer = handler_of(function)(event, Context(function, timeout_of(function)))
        capture.undo()
        found[name] = {
            "function": function,
            "answer": answer,
            "started": started,
            "text": out.getvalue() + err.getvalue(),
            "lines": [json.loads(line) for line in out.getvalue().splitlines() if line[:1] == "{"],
        }
    return found


def emf(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for line in lines if "_aws" in line]


def units(document: dict[str, Any]) -> dict[str, str]:
    declared = document["_aws"]["CloudWatchMetrics"][0]["Metrics"]
    return {m["Name"]: m["Unit"] for m in declared}


def value(document: dict[str, Any], name: str) -> float:
    """The one value of a metric (EMF writes a value or a list of them)."""
    (found,) = values(document, name)
    return found


def values(document: dict[str, Any], name: str) -> list[float]:
    found = document[name]
    return found if isinstance(found, list) else [found]


def logs(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for line in lines if "_aws" not in line]


def test_a_recall_prints_its_metrics_once_as_emf(printed: dict[str, Any]) -> None:
    run = printed["recall.json"]
    body = json.loads(run["answer"]["body"])
    assert run["answer"]["statusCode"] == 200 and body["facts"]
    (document,) = emf(run["lines"])
    assert document["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "Taisce"
    assert document["service"] == "taisce"
    assert units(document) == {
        "RecallLatency": "Milliseconds",
        "RecallCharacters": "Count",
        "RecallTruncated": "Count",
        "RecallDegradedSteps": "Count",
    }
    assert value(document, "RecallCharacters") == body["characters"]
    assert value(document, "RecallTruncated") == int(body["truncated"])
    assert value(document, "RecallDegradedSteps") == len(body["degraded"])
    assert 0 < value(document, "RecallLatency") < 10_000


def test_log_lines_carry_the_lambda_context_and_the_request_id(printed: dict[str, Any]) -> None:
    run = printed["recall.json"]
    event = json.loads((EVENTS_DIR / "recall.json").read_text())
    (recalled,) = [line for line in logs(run["lines"]) if line["message"] == "recalled"]
    assert recalled["correlation_id"] == event["requestContext"]["requestId"]
    assert recalled["function_name"] == "RecallFunction"
    assert recalled["function_request_id"] == "events-RecallFunction"
    assert recalled["service"] == "taisce" and recalled["level"] == "INFO"
    assert recalled["characters"] == json.loads(run["answer"]["body"])["characters"]


def test_the_worker_prints_its_lag_and_the_erasures_pending(printed: dict[str, Any]) -> None:
    assert printed["erasures.json"]["answer"]["statusCode"] == 202
    taken = printed["worker-sqs.json"]
    records = json.loads((EVENTS_DIR / "worker-sqs.json").read_text())["Records"]
    (document,) = emf(taken["lines"])
    assert units(document) == {"WorkerLag": "Milliseconds"}
    lags = values(document, "WorkerLag")
    assert len(lags) == len(records)
    for lag, record in zip(lags, records, strict=True):
        sent = int(record["attributes"]["SentTimestamp"])
        assert abs(lag - (taken["started"] * 1000 - sent)) < 60_000
    # One line per message's pass, under the message's id as correlation id.
    passes = [line for line in logs(taken["lines"]) if line["message"] == "pass done"]
    assert [p["correlation_id"] for p in passes] == [r["messageId"] for r in records]
    assert all(p["function_name"] == "WorkerFunction" for p in passes)
    assert [round(p["waited_seconds"] * 1000) for p in passes] == [round(x) for x in lags]
    swept = printed["worker-schedule.json"]
    (document,) = emf(swept["lines"])
    assert units(document) == {"ErasuresPending": "Count"}
    assert value(document, "ErasuresPending") >= 1
    (line,) = [line for line in logs(swept["lines"]) if line["message"] == "swept"]
    assert line["erasures_pending"] == value(document, "ErasuresPending")
    assert line["function_name"] == "WorkerFunction" and line.get("correlation_id") is None


def test_no_credential_is_printed(printed: dict[str, Any]) -> None:
    secret = bearer_secret(BEARER)
    assert secret
    for run in printed.values():
        assert secret not in run["text"]
        assert secret_hash(secret) not in run["text"]


# -- tracing, as on Lambda --------------------------------------------------------------

# Run as Lambda runs a function with active tracing: LAMBDA_TASK_ROOT set, the trace
# header in _X_AMZN_TRACE_ID, X-Ray's daemon at AWS_XRAY_DAEMON_ADDRESS (here a UDP
# socket of this test, which reads the documents the SDK sends it).
TRACED = """
import json, sys
from tests.function_events import Context, handler_of
for name, function in (("facts-store.json", "FactsFunction"), ("recall.json", "RecallFunction")):
    event = json.loads(open("events/" + name).read())
    answer = handler_of(function)(event, Context(function, 10))
    print(json.dumps({"status": answer["statusCode"]}))
"""
TRACE_ID = "1-6751a2b0-0123456789abcdef01234567"


def daemon_documents(sock: socket.socket) -> list[dict[str, Any]]:
    """Every segment document the SDK sent (each datagram: a header line, then one)."""
    found = []
    sock.settimeout(0.5)
    while True:
        try:
            datagram = sock.recv(65536).decode()
        except TimeoutError:
            return found
        found.append(json.loads(datagram.split("\n", 1)[1]))


def subsegments(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield document
    for inner in document.get("subsegments", []):
        yield from subsegments(inner)


@pytest.fixture(scope="module")
def traced() -> dict[str, Any]:
    return run_traced(TRACED)


def run_traced(script: str) -> dict[str, Any]:
    """`script` run as Lambda runs a function with tracing on: what it printed and the
    documents X-Ray's SDK sent the daemon."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * 1024 * 1024)
    port = sock.getsockname()[1]
    env = {
        **os.environ,
        **AWS_ENV,
        **function_env("RecallFunction"),
        **_environment(f"{TABLE}-traced"),
        "LAMBDA_TASK_ROOT": str(ROOT),
        "AWS_LAMBDA_FUNCTION_NAME": "RecallFunction",
        "AWS_XRAY_DAEMON_ADDRESS": f"127.0.0.1:{port}",
        "_X_AMZN_TRACE_ID": f"Root={TRACE_ID};Parent=53995c3f42cd8ad8;Sampled=1",
        "AWS_XRAY_CONTEXT_MISSING": "LOG_ERROR",
    }
    env.pop("POWERTOOLS_TRACE_DISABLED", None)
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    documents = daemon_documents(sock)
    sock.close()
    names = [s["name"] for d in documents for s in subsegments(d)]
    return {"out": done.stdout, "documents": documents, "names": names}


def test_each_recall_step_and_store_call_is_a_subsegment(traced: dict[str, Any]) -> None:
    printed = [json.loads(x) for x in traced["out"].splitlines() if x[:1] == "{"]
    assert [x["status"] for x in printed if "status" in x] == [201, 200]
    names = traced["names"]
    assert "## lambda_handler" in names
    for step in ("recall.open", "recall.names", "recall.dates"):
        assert step in names
    stored = {n for n in names if n.startswith("store.")}
    assert {"store.put_facts", "store.pending_erasures", "store.facts_about"} <= stored
    assert all(d["trace_id"] == TRACE_ID for d in traced["documents"])


def test_sdk_calls_sit_in_the_store_call_that_made_them(traced: dict[str, Any]) -> None:
    everything = [s for d in traced["documents"] for s in subsegments(d)]
    by_id = {s["id"]: s for s in everything}

    def within(segment: dict[str, Any]) -> str | None:
        parent = by_id.get(segment.get("parent_id", ""))
        return parent["name"] if parent else None

    aws = [s for s in everything if s.get("namespace") == "aws"]
    # Every SDK call is a subsegment with its operation and request id (botocore's
    # patch), inside the store's call (or the handler's, for the queue's send)...
    calls = [s for s in aws if "request_id" in s["aws"]]
    written = {s["aws"]["operation"] for s in calls if within(s) == "store.put_facts"}
    assert "TransactWriteItems" in written
    assert {within(s) for s in calls} <= {"store.put_facts", "store.erased", "## lambda_handler"}
    # ...and the recall's reads, sent on urllib3 directly (no SDK call), are each a
    # subsegment of their own too (api/direct_calls.py), inside the store call or the
    # recall step that made them.
    direct = [s for s in aws if "request_id" not in s["aws"]]
    assert {s["aws"]["operation"] for s in direct} == {"Query", "BatchGetItem"}
    assert {s["aws"]["table_name"] for s in direct} == {f"{TABLE}-traced"}
    assert "store.resolve_names" in {within(s) for s in direct}
    steps = {n for n in traced["names"] if n.startswith(("store.", "recall."))}
    assert {within(s) for s in direct} <= steps
    assert all(s["end_time"] >= s["start_time"] for s in direct)
    reads = [s for s in everything if s["name"] in ("store.resolve_names", "store.facts_about")]
    assert reads and all(within(s) == "recall.names" for s in reads)


def test_no_event_answer_or_credential_is_traced(traced: dict[str, Any]) -> None:
    sent = json.dumps(traced["documents"])
    secret = bearer_secret(BEARER)
    assert secret and secret not in sent
    question = json.loads(json.loads((EVENTS_DIR / "recall.json").read_text())["body"])["question"]
    assert question not in sent
    # Powertools' capture_response and capture_error would put these in the metadata.
    assert "lambda_handler response" not in sent and "lambda_handler error" not in sent


# A failed SDK call inside a traced invocation: DynamoDB's error message quotes the
# expression sent, which holds a stored value.
FAILED_CALL = """
import os, boto3
from botocore.exceptions import ClientError
from taisce.api import observe
from aws_xray_sdk.core import xray_recorder
client = boto3.client("dynamodb", endpoint_url=os.environ["TAISCE_DYNAMODB_ENDPOINT"])
xray_recorder.begin_subsegment("probe")
try:
    client.update_item(
        TableName=os.environ["TAISCE_DYNAMODB_TABLE"],
        Key={"PK": {"S": "x"}, "SK": {"S": "y"}},
        UpdateExpression="SET a = :v Dana_lives_in_Cork",
        ExpressionAttributeValues={":v": {"S": "v"}},
    )
except ClientError as exc:
    print(exc.response["Error"]["Code"], str(exc))
xray_recorder.end_subsegment()
"""


def test_a_failed_sdk_call_is_traced_without_its_error_message() -> None:
    run = run_traced(FAILED_CALL)
    # The service's message quoted the stored value (so this test can fail)...
    assert "ValidationException" in run["out"] and "Dana_lives_in_Cork" in run["out"]
    calls = [
        s
        for d in run["documents"]
        for s in subsegments(d)
        if s.get("aws", {}).get("operation") == "UpdateItem"
    ]
    assert len(calls) == 1
    call = calls[0]
    # ...and the trace has the failure without it: the status (an error), the request
    # id and the error code; no exception, no message.
    assert call["error"] is True and call["http"]["response"]["status"] == 400
    assert call["aws"]["error_code"] == "ValidationException" and call["aws"]["request_id"]
    assert "cause" not in call
    assert "Dana_lives_in_Cork" not in json.dumps(run["documents"])
