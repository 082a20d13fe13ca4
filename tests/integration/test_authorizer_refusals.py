"""A refused credential costs one lookup a minute per authorizer process, not one per
request: API Gateway caches only accepted answers (docs/aws.md, "Operations"). Run
against moto's server with the calls recorded at botocore (tests/aws_calls.py)."""

from __future__ import annotations

import json

import pytest

from functions.authorizer import app as authorizer
from taisce.credentials import bearer_secret, secret_hash
from tests.aws_calls import AwsCalls
from tests.contract.factories import credential
from tests.function_events import environment, function_env
from tests.lambda_events import HERE
from tests.moto_server import AWS_ENV, shared_moto

TABLE = "taisce-refusals"
WRONG = "Bearer tsk_refused-twice"
RIGHT = "Bearer tsk_accepted-each-time"


def lookups(calls: AwsCalls) -> int:
    return calls.operations["AuthorizerFunction"].count("dynamodb:GetItem")


@pytest.fixture
def env() -> dict[str, str]:
    moto = shared_moto().table_named(TABLE)
    secret = bearer_secret(RIGHT)
    assert secret
    moto.store().add_credential(credential("demo"), secret_hash(secret))
    authorizer.refusals = authorizer.Refusals()
    return {
        **AWS_ENV,
        **function_env("AuthorizerFunction"),
        "TAISCE_DYNAMODB_TABLE": TABLE,
        "TAISCE_DYNAMODB_ENDPOINT": moto.endpoint,
    }


def ask(header: str) -> bool:
    event = json.loads((HERE / "authorizer.json").read_text())
    event["headers"]["authorization"] = header
    try:
        return bool(authorizer.lambda_handler(event, None)["isAuthorized"])
    except authorizer.Unauthorized:
        return False


def test_a_refused_credential_is_looked_up_once_a_minute(env: dict[str, str]) -> None:
    with environment(env), AwsCalls() as calls, calls.as_function("AuthorizerFunction"):
        assert [ask(WRONG) for _ in range(3)] == [False] * 3
        refused = lookups(calls)
        assert [ask(RIGHT) for _ in range(2)] == [True] * 2
        accepted = lookups(calls) - refused
    assert refused == 1
    # An accepted credential is still looked up every time (revocation takes effect).
    assert accepted == 2


def test_the_memory_of_refusals_expires_and_is_bounded() -> None:
    refusals = authorizer.Refusals(seconds=60.0, most=3)
    refusals.add("a", now=100.0)
    assert refusals.holds("a", 159.0) and not refusals.holds("a", 160.0)
    assert not refusals.holds("a", 100.0)  # expired entries are forgotten
    for name in "bcd":
        refusals.add(name, now=200.0)
    assert refusals.holds("d", 201.0) and len(refusals._until) <= 3
