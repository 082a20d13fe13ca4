"""Write the `sam local invoke` events of events/ (run from the repository root:
`.venv/bin/python -m tests.lambda_events`). The events are committed; this script says
how they were made and keeps them in the shape API Gateway and Lambda's pollers send.

Every HTTP event carries the authorizer's context (`requestContext.authorizer.lambda`)
for the project `demo`, as API Gateway passes it after the authorizer said yes.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1] / "events"
PROJECT = "demo"
# A made-up credential: events/env.json points at a local table where
# `taisce credentials create` (docs/aws.md, "sam local invoke") stores a real one.
BEARER = "Bearer tsk_replace-with-a-credential"
TIME = "03/Dec/2026:06:00:00 +0000"
EPOCH = 1796364000000


def http(
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    query: dict[str, str] | None = None,
    route: str | None = None,
    path_params: dict[str, str] | None = None,
    authorized: bool = True,
    kind: str | None = None,
) -> dict[str, Any]:
    route_key = f"{method} {route or path}"
    raw_query = "&".join(f"{k}={v}" for k, v in (query or {}).items())
    headers = {
        "content-type": "application/json",
        "host": "abc123.execute-api.eu-west-1.amazonaws.com",
    }
    context: dict[str, Any] = {
        "accountId": "123456789012",
        "apiId": "abc123",
        "domainName": "abc123.execute-api.eu-west-1.amazonaws.com",
        "domainPrefix": "abc123",
        "http": {
            "method": method,
            "path": path,
            "protocol": "HTTP/1.1",
            "sourceIp": "203.0.113.7",
            "userAgent": "curl/8.5.0",
        },
        "requestId": "local-invoke",
        "routeKey": route_key,
        "stage": "$default",
        "time": TIME,
        "timeEpoch": EPOCH,
    }
    if authorized:
        headers["authorization"] = BEARER
        context["authorizer"] = {"lambda": {"project": PROJECT}}
        if kind:  # the authorizer names the kind; events without one are older shapes
            context["authorizer"]["lambda"]["kind"] = kind
    return {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": path,
        "rawQueryString": raw_query,
        "headers": headers,
        "queryStringParameters": query or None,
        "pathParameters": path_params or None,
        "requestContext": context,
        "body": json.dumps(body) if body is not None else None,
        "isBase64Encoded": False,
    }


def authorizer_request() -> dict[str, Any]:
    event = http("POST", "/v1/recalls")
    del event["requestContext"]["authorizer"]
    return {
        **event,
        "type": "REQUEST",
        "routeArn": "arn:aws:execute-api:eu-west-1:123456789012:abc123/$default/POST/v1/recalls",
        "identitySource": [BEARER],
    }


# The erasure whose status erasures-status.json reads: a placeholder, since the id is
# made when erasures.json is accepted (tests/function_events.py puts the real one in;
# with `sam local invoke`, put in the id the 202 answered).
ERASURE_ID = "era_" + "0" * 32


def sqs_batch(
    messages: tuple[tuple[str, list[str]], ...] = (
        ("messages", ["m-1"]),
        ("facts", ["f-1", "f-2"]),
    ),
    first: int = 0,
) -> dict[str, Any]:
    """Records numbered from `first`: each SQS message id is one pass (the worker's
    idempotency), so two batches must not share one."""
    records = []
    for n, (kind, ids) in enumerate(messages, start=first):
        body = json.dumps({"project": PROJECT, "kind": kind, "ids": ids}, sort_keys=True)
        records.append(
            {
                "messageId": f"0c1f9a2e-5b7d-4c1a-9d3e-00000000000{n}",
                "receiptHandle": f"AQEB-local-invoke-{n}",
                "body": body,
                "attributes": {
                    "ApproximateReceiveCount": "1",
                    "SentTimestamp": str(EPOCH),
                    "SequenceNumber": f"1888888888888888888{n}",
                    # The project's group, as taisce.adapters.sqs_queue.group_id makes it.
                    "MessageGroupId": hashlib.sha256(PROJECT.encode()).hexdigest(),
                    "SenderId": "AROAEXAMPLE:taisce-messages",
                    "MessageDeduplicationId": f"local-invoke-{n}",
                    "ApproximateFirstReceiveTimestamp": str(EPOCH + 5),
                },
                "messageAttributes": {},
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:eu-west-1:123456789012:taisce-dev-WorkQueue.fifo",
                "awsRegion": "eu-west-1",
            }
        )
    return {"Records": records}


def schedule() -> dict[str, Any]:
    return {
        "version": "0",
        "id": "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa",
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": "123456789012",
        "time": "2026-12-03T06:00:00Z",
        "region": "eu-west-1",
        "resources": ["arn:aws:events:eu-west-1:123456789012:rule/taisce-dev-WorkerSweep"],
        "detail": {},
    }


FACT = {
    "subject": "Atlas",
    "predicate": "works at",
    "object": "Acme Corp",
    "source_role": "user",
}

# The credential credentials-revoke.json revokes: a placeholder, since the id is made
# when credentials-mint.json is answered (tests/function_events.py puts the real one in).
CREDENTIAL_ID = "cred_000000000000"

# file name -> (function logical id, event)
EVENTS: dict[str, tuple[str, dict[str, Any]]] = {
    "authorizer.json": ("AuthorizerFunction", authorizer_request()),
    "health.json": ("HealthFunction", http("GET", "/v1/health", authorized=False)),
    "openapi.json": ("HealthFunction", http("GET", "/v1/openapi.json", authorized=False)),
    "status.json": ("HealthFunction", http("GET", "/v1/status")),
    "facts-store.json": ("FactsFunction", http("POST", "/v1/facts", {"facts": [FACT]})),
    "facts-list.json": (
        "FactsFunction",
        http("GET", "/v1/facts", query={"subject": "Atlas"}),
    ),
    "facts-delete.json": (
        "FactsFunction",
        http(
            "DELETE",
            "/v1/facts/f-unknown",
            route="/v1/facts/{id}",
            path_params={"id": "f-unknown"},
        ),
    ),
    "messages-store.json": (
        "MessagesFunction",
        http(
            "POST",
            "/v1/messages",
            {
                "messages": [
                    {"role": "user", "content": "Atlas moved to Acme Corp in March."},
                    {"role": "assistant", "content": "Noted: Atlas works at Acme Corp."},
                ]
            },
        ),
    ),
    "recall.json": (
        "RecallFunction",
        http(
            "POST",
            "/v1/recalls",
            {"question": "Where does Atlas work?", "hops": 2, "max_characters": 4000},
        ),
    ),
    "entities-merge.json": (
        "EntitiesFunction",
        http("POST", "/v1/entities/merges", {"alias": "A. Atlas", "into": "Atlas"}),
    ),
    "entities-aliases.json": ("EntitiesFunction", http("GET", "/v1/entities/aliases")),
    "entities-proposals.json": ("EntitiesFunction", http("GET", "/v1/entities/proposals")),
    "entities-list.json": ("EntitiesFunction", http("GET", "/v1/entities")),
    "entities-neighbourhood.json": (
        "EntitiesFunction",
        http("GET", "/v1/entities/neighbourhood", query={"name": "Atlas", "hops": "2"}),
    ),
    "messages-list.json": (
        "MessagesFunction",
        http("GET", "/v1/messages", query={"limit": "10", "passages": "true"}),
    ),
    "ui-page.json": ("UiFunction", http("GET", "/ui", authorized=False)),
    "erasures.json": ("ErasuresFunction", http("POST", "/v1/erasures", {"subject": "Atlas"})),
    "erasures-status.json": (
        "ErasuresFunction",
        http(
            "GET",
            f"/v1/erasures/{ERASURE_ID}",
            route="/v1/erasures/{id}",
            path_params={"id": ERASURE_ID},
        ),
    ),
    "credentials-mint.json": (
        "CredentialsFunction",
        http("POST", "/v1/credentials", {"user": "ana", "label": "ana's phone"}, kind="admin"),
    ),
    "credentials-list.json": (
        "CredentialsFunction",
        http("GET", "/v1/credentials", query={"limit": "10"}, kind="admin"),
    ),
    "credentials-revoke.json": (
        "CredentialsFunction",
        http(
            "DELETE",
            f"/v1/credentials/{CREDENTIAL_ID}",
            route="/v1/credentials/{id}",
            path_params={"id": CREDENTIAL_ID},
            kind="admin",
        ),
    ),
    "worker-erasure.json": ("WorkerFunction", sqs_batch((("erasure", []),), first=5)),
    "worker-sqs.json": ("WorkerFunction", sqs_batch()),
    "worker-schedule.json": ("WorkerFunction", schedule()),
}


# `sam local invoke --env-vars events/env.json`: "Parameters" applies to every function
# (only variables the template declares are passed). The endpoints point at a moto
# server on the host (`python -m moto.server -p 5000`); docs/aws.md, "sam local invoke".
HOST = "http://host.docker.internal:5000"
ENV = {
    "Parameters": {
        "TAISCE_DYNAMODB_TABLE": "taisce-local",
        "TAISCE_DYNAMODB_ENDPOINT": HOST,
        "TAISCE_EMBEDDINGS": "none",
        "TAISCE_OPENSEARCH_ENDPOINT": "",
        "TAISCE_REGION": "eu-west-1",
        "TAISCE_EXTRACTOR": "none",
        "TAISCE_WORK_QUEUE_URL": f"{HOST}/123456789012/taisce-local.fifo",
        "TAISCE_SQS_ENDPOINT": HOST,
        "POWERTOOLS_LOG_LEVEL": "INFO",
    }
}


def main() -> None:
    for name, (_, event) in EVENTS.items():
        (HERE / name).write_text(json.dumps(event, indent=2, sort_keys=True) + "\n")
    (HERE / "env.json").write_text(json.dumps(ENV, indent=2) + "\n")
    print(f"wrote {len(EVENTS)} events and env.json to {HERE}")


if __name__ == "__main__":
    main()
