"""Every event of events/ through its function's handler, in-process, against moto's
server (DynamoDB and SQS over HTTP), with the environment of events/env.json (its
endpoints pointed at moto) and the AWS calls each function made recorded.

Used by tests/integration/test_events.py (each answer is checked) and
tests/integration/test_deploy_readiness.py (each function's role must allow the calls
its code made). Run once per session: the events build on each other (facts stored,
then recalled, merged, erased), in the order of ORDER, in a table of their own.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taisce.api import services
from taisce.credentials import bearer_secret, secret_hash
from taisce.local.routes import load_template
from tests.aws_calls import AwsCalls
from tests.contract.factories import credential
from tests.lambda_events import BEARER, CREDENTIAL_ID, ERASURE_ID, EVENTS, PROJECT
from tests.moto_server import AWS_ENV, TEMPLATE, shared_moto
from tests.vector_fakes import Collection

EVENTS_DIR = Path(__file__).resolve().parents[1] / "events"
TABLE = "taisce-events"
# The id facts-delete.json asks to delete (none such: 404), replaced in a run with
# vectors by a fact stored, so that its vector is deleted.
UNKNOWN_FACT = "f-unknown"
# The order the events run in: each finds what the ones before it stored.
ORDER = [
    "authorizer.json",
    "health.json",
    "openapi.json",
    "status.json",
    "facts-store.json",
    "facts-list.json",
    "messages-store.json",
    "recall.json",
    "entities-merge.json",
    "entities-aliases.json",
    "entities-proposals.json",
    "worker-sqs.json",
    "worker-schedule.json",
    "entities-list.json",
    "entities-neighbourhood.json",
    "messages-list.json",
    "ui-page.json",
    "facts-delete.json",
    "erasures.json",
    "worker-erasure.json",
    "erasures-status.json",
    "credentials-mint.json",
    "credentials-list.json",
    "credentials-revoke.json",
]


@dataclass(frozen=True)
class Invocation:
    event_file: str
    function: str
    answer: Any


class Context:
    """Lambda's context as the handlers and Powertools read it."""

    def __init__(self, function: str, timeout: int) -> None:
        self.function_name = function
        self.aws_request_id = f"events-{function}"
        self.memory_limit_in_mb = 512
        self.invoked_function_arn = f"arn:aws:lambda:us-east-1:123456789012:function:{function}"
        self._timeout = timeout

    def get_remaining_time_in_millis(self) -> int:
        return self._timeout * 1000


def handler_of(function: str) -> Any:
    props = load_template(TEMPLATE)["Resources"][function]["Properties"]
    package = str(props["CodeUri"]).strip("/").replace("/", ".")
    module, _, attribute = str(props["Handler"]).rpartition(".")
    return getattr(importlib.import_module(f"{package}.{module}"), attribute)


def timeout_of(function: str) -> int:
    template = load_template(TEMPLATE)
    props = template["Resources"][function]["Properties"]
    return int(props.get("Timeout", template["Globals"]["Function"]["Timeout"]))


def _reset() -> None:
    from functions.worker import app as worker

    services.cache_clear()
    worker._once.cache_clear()
    worker._ready.cache_clear()


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    _reset()
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        _reset()


def env_file() -> dict[str, str]:
    return json.loads((EVENTS_DIR / "env.json").read_text())["Parameters"]


def function_env(function: str) -> dict[str, str]:
    """The function's environment as `sam local invoke --env-vars events/env.json`
    gives it: the template's variables (Globals, then the function's; a Ref to a
    parameter is its default), then env.json's value for each variable declared."""
    template = load_template(TEMPLATE)
    declared: dict[str, Any] = {
        **template["Globals"]["Function"]["Environment"]["Variables"],
        **template["Resources"][function]["Properties"].get("Environment", {}).get("Variables", {}),
    }
    parameters = template["Parameters"]
    env: dict[str, str] = {}
    for name, value in declared.items():
        if isinstance(value, dict) and set(value) == {"Ref"} and value["Ref"] in parameters:
            value = parameters[value["Ref"]].get("Default", "")
        if isinstance(value, str | int | float):
            env[name] = str(value)
    overrides = env_file()
    env.update({k: v for k, v in overrides.items() if k in declared})
    return env


def _with_id(
    event: dict[str, Any], before: list[Invocation], made_by: str, placeholder: str
) -> dict[str, Any]:
    """The event with the id an earlier event's answer gave in place of its placeholder."""
    accepted = next(i for i in before if i.event_file == made_by)
    made = json.loads(accepted.answer["body"])["id"]
    return json.loads(json.dumps(event).replace(placeholder, made))


# Events that act on an id an earlier one made: event -> (its maker, the placeholder).
MADE_IDS = {
    "erasures-status.json": ("erasures.json", ERASURE_ID),
    "credentials-revoke.json": ("credentials-mint.json", CREDENTIAL_ID),
}


# A Bedrock deploy's vector settings, for run_events(vectors=True): the embedding model
# and the collection are answered by tests/vector_fakes.py.
VECTOR_ENV = {
    "TAISCE_EMBEDDINGS": "bedrock",
    "TAISCE_OPENSEARCH_ENDPOINT": "https://fake1234.eu-west-1.aoss.amazonaws.com",
}


def _with_fact_id(event: dict[str, Any], before: list[Invocation]) -> dict[str, Any]:
    fact_id = deleted_fact_id(before)
    return json.loads(json.dumps(event).replace(UNKNOWN_FACT, fact_id))


def deleted_fact_id(invocations: list[Invocation]) -> str:
    """The fact facts-delete.json deleted in a run with vectors (the first one stored)."""
    stored = next(i for i in invocations if i.event_file == "facts-store.json")
    return str(json.loads(stored.answer["body"])["facts"][0]["id"])


def run_events(vectors: bool = False) -> tuple[list[Invocation], AwsCalls]:
    """Run every event once; the answers in ORDER, and the calls each function made.
    With `vectors`, as a Bedrock deploy with a collection (in a table of its own); the
    collection's documents are then `calls.vectors`."""
    # One cache entry per kind of run, however it is asked for (run_events() and
    # run_events(vectors=False) are the same run: a second would store its credential
    # again in the same table).
    return _run_events(vectors)


@functools.cache
def _run_events(vectors: bool) -> tuple[list[Invocation], AwsCalls]:
    table = f"{TABLE}-vectors" if vectors else TABLE
    moto = shared_moto().table_named(table)
    sqs = moto.shared_client  # a DynamoDB client; SQS needs its own
    import boto3

    sqs = boto3.session.Session(
        aws_access_key_id=AWS_ENV["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=AWS_ENV["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=AWS_ENV["AWS_SESSION_TOKEN"],
        region_name=AWS_ENV["AWS_DEFAULT_REGION"],
    ).client("sqs", endpoint_url=moto.endpoint)
    queue = sqs.create_queue(
        QueueName=f"{table}.fifo",
        Attributes={"FifoQueue": "true", "VisibilityTimeout": "0"},
    )["QueueUrl"]
    # The credential the events' Authorization header carries, for their project.
    secret = bearer_secret(BEARER)
    assert secret is not None
    moto.store().add_credential(credential(PROJECT), secret_hash(secret))
    # env.json's endpoints are the host as SAM's container sees it; here, moto's.
    here = {
        "TAISCE_DYNAMODB_TABLE": table,
        "TAISCE_DYNAMODB_ENDPOINT": moto.endpoint,
        "TAISCE_WORK_QUEUE_URL": queue,
        "TAISCE_SQS_ENDPOINT": moto.endpoint,
        "TAISCE_REGION": AWS_ENV["AWS_DEFAULT_REGION"],
        **(VECTOR_ENV if vectors else {}),
    }
    invocations: list[Invocation] = []
    with AwsCalls(Collection() if vectors else None) as calls:
        for name in ORDER:
            function, _ = EVENTS[name]
            env = function_env(function)
            # Always moto's endpoints, declared or not: never a call to AWS itself.
            env = {**AWS_ENV, **env, **here}
            event = json.loads((EVENTS_DIR / name).read_text())
            if name in MADE_IDS:  # the id an earlier event was given
                event = _with_id(event, invocations, *MADE_IDS[name])
            if name == "facts-delete.json" and vectors:  # a fact with a vector
                event = _with_fact_id(event, invocations)
            with environment(env), calls.as_function(function):
                answer = handler_of(function)(event, Context(function, timeout_of(function)))
            invocations.append(Invocation(name, function, answer))
    sqs.close()
    return invocations, calls
