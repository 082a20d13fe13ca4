"""The AWS calls code makes, recorded at botocore's one entry point for every call
(`BaseClient._make_api_call`) and at the DynamoDB adapter's direct reads
(`DirectReads.call`, which a fallback then also sends through the client), as the IAM
actions they need.

    with AwsCalls() as calls:
        with calls.as_function("RecallFunction"):
            handler(event, context)
    calls.actions["RecallFunction"]  # {("dynamodb:Query", "taisce-events", "P#demo#E#atlas"), ...}

A DynamoDB transaction is authorised per item (Put -> dynamodb:PutItem, ...), so it is
recorded as those actions; every other operation is its own action. OpenSearch
Serverless requests are recorded at opensearch-py's transport as the data-access
permission each needs (`aoss:ReadDocument` for a search, ...), with the index as the
resource. With `AwsCalls(vectors=Collection())` the Bedrock and OpenSearch data planes,
which cannot run here, are answered by tests/vector_fakes.py after being recorded.
"""

from __future__ import annotations

import contextlib
import re
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from botocore.client import BaseClient
from opensearchpy.transport import Transport

from taisce.adapters.dynamodb.reads import DirectReads
from tests.vector_fakes import Collection, titan_answer

# Operations whose IAM action is not "<prefix>:<operation>".
_TRANSACT_ITEM_ACTIONS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
    "Get": "GetItem",
}
_IAM_PREFIX = {"dynamodb": "dynamodb", "sqs": "sqs", "bedrock-runtime": "bedrock"}
_BEDROCK_ACTIONS = {"Converse": "InvokeModel", "InvokeModel": "InvokeModel"}


# (IAM action, resource name, partition key or None when the call names none or many)
Call = tuple[str, str, str | None]


def _leading_key(body: dict[str, Any]) -> str | None:
    """The partition key a single-item call or a Query reads or writes (the
    dynamodb:LeadingKeys condition key)."""
    for field in ("Key", "Item"):
        value = (body.get(field) or {}).get("PK", {}).get("S")
        if value is not None:
            return str(value)
    condition = body.get("KeyConditionExpression", "")
    found = re.match(r"\s*PK\s*=\s*(:\w+)", condition)
    if found:
        return str(body["ExpressionAttributeValues"][found.group(1)]["S"])
    return None


def _actions(service: str, operation: str, params: dict[str, Any]) -> list[Call]:
    """The (IAM action, resource name, partition key) of what one call needs."""
    prefix = _IAM_PREFIX.get(service, service)
    if service == "dynamodb" and operation in ("TransactWriteItems", "TransactGetItems"):
        found: list[Call] = []
        for item in params.get("TransactItems", []):
            for kind, body in item.items():
                action = f"dynamodb:{_TRANSACT_ITEM_ACTIONS[kind]}"
                found.append((action, body["TableName"], _leading_key(body)))
        return found
    if service == "dynamodb" and operation == "BatchGetItem":
        # IAM's dynamodb:LeadingKeys holds every key's partition: one call each here.
        return [
            (f"dynamodb:{operation}", table, str(key["PK"]["S"]))
            for table, request in params.get("RequestItems", {}).items()
            for key in request.get("Keys", [])
        ]
    if service == "dynamodb" and operation == "BatchWriteItem":
        return [(f"dynamodb:{operation}", table, None) for table in params.get("RequestItems", {})]
    if service == "dynamodb":
        return [(f"dynamodb:{operation}", params.get("TableName", "?"), _leading_key(params))]
    if service == "sqs":
        return [(f"sqs:{operation}", params.get("QueueUrl", "?").rsplit("/", 1)[-1], None)]
    if service == "bedrock-runtime":
        action = f"bedrock:{_BEDROCK_ACTIONS.get(operation, operation)}"
        return [(action, params["modelId"], None)]
    return [(f"{prefix}:{operation}", "?", None)]


def aoss_permission(method: str, url: str) -> Call:
    """The data-access permission an OpenSearch request needs, on its index."""
    path = url.split("?", 1)[0].strip("/").split("/")
    index = path[0]
    if path[-1] in ("_search", "_msearch", "_count", "_doc") and method in ("GET", "POST"):
        return ("aoss:ReadDocument", index, None)
    if path[-1] in ("_bulk", "_doc", "_create", "_update"):
        return ("aoss:WriteDocument", index, None)
    if len(path) == 1 or path[-1] == "_mapping":
        by_method = {"PUT": "aoss:CreateIndex", "DELETE": "aoss:DeleteIndex"}
        if path[-1] == "_mapping":
            by_method["PUT"] = "aoss:UpdateIndex"
        return (by_method.get(method, "aoss:DescribeIndex"), index, None)
    return (f"aoss:{method} {url}", index, None)


class AwsCalls:
    """Records, per function, the IAM actions of every botocore call made in it."""

    def __init__(self, vectors: Collection | None = None) -> None:
        self.vectors = vectors
        self.actions: dict[str, set[Call]] = defaultdict(set)
        self.operations: dict[str, list[str]] = defaultdict(list)
        self._function = "(none)"
        self._patch: contextlib.ExitStack | None = None

    @contextlib.contextmanager
    def as_function(self, name: str) -> Iterator[None]:
        previous, self._function = self._function, name
        try:
            yield
        finally:
            self._function = previous

    def __enter__(self) -> AwsCalls:
        original = BaseClient._make_api_call
        recorder = self

        def recording(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
            service = client.meta.service_model.service_name
            recorder.operations[recorder._function].append(f"{service}:{operation}")
            for pair in _actions(service, operation, params):
                recorder.actions[recorder._function].add(pair)
            if recorder.vectors is not None and service == "bedrock-runtime":
                if operation != "InvokeModel":
                    raise AssertionError(f"no fake answer for Bedrock's {operation}")
                return titan_answer(params)
            return original(client, operation, params)

        # The recall's reads sent without the client's machinery
        # (adapters/dynamodb/reads.py) need the same rights: recorded the same way.
        direct = DirectReads.call

        def recording_direct(reads: DirectReads, operation: str, params: dict[str, Any]) -> Any:
            recorder.operations[recorder._function].append(f"dynamodb:{operation}")
            for pair in _actions("dynamodb", operation, params):
                recorder.actions[recorder._function].add(pair)
            return direct(reads, operation, params)

        search = Transport.perform_request

        def recording_search(
            transport: Transport, method: str, url: str, *args: Any, **kwargs: Any
        ) -> Any:
            recorder.operations[recorder._function].append(f"aoss:{method} {url}")
            recorder.actions[recorder._function].add(aoss_permission(method, url))
            if recorder.vectors is None:
                return search(transport, method, url, *args, **kwargs)
            body = kwargs.get("body", args[1] if len(args) > 1 else None)
            return recorder.vectors.answer(method, url, body)

        BaseClient._make_api_call = recording  # type: ignore[method-assign]
        DirectReads.call = recording_direct  # type: ignore[method-assign]
        Transport.perform_request = recording_search  # type: ignore[method-assign]
        self._original = original
        self._direct = direct
        self._search = search
        return self

    def __exit__(self, *exc: object) -> None:
        BaseClient._make_api_call = self._original  # type: ignore[method-assign]
        DirectReads.call = self._direct  # type: ignore[method-assign]
        Transport.perform_request = self._search  # type: ignore[method-assign]
