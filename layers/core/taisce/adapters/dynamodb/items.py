"""The items of DynamoDB's read answers, taken as DynamoDB sends them.

botocore parses every answer against the service model: each attribute value of each
item is a structure walked in Python, member by member. For a recall that reads a few
hundred facts of fifteen attributes that walk was the largest part of its CPU (more
than the calls' signing and sending). DynamoDB's JSON already holds each attribute as
the `{"S": ...}` / `{"N": ...}` / `{"L": [...]}` value that the walk returns, so for
Query and BatchGetItem the items are lifted out of the JSON (one C-speed json.loads)
before botocore parses the rest of the answer (counts, LastEvaluatedKey, unprocessed
keys, consumed capacity), through botocore's own `before-parse` event and its
`customized_response_dict`, which botocore merges into the parsed answer.

The one type whose parsed form differs from its JSON is binary (`B`, `BS`: base64 in
JSON, bytes once parsed). This adapter never writes binary; an answer that holds a
binary value anyway is left to botocore whole, so the result is the same either way.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Where the items sit in each answer: Query's list, BatchGetItem's lists per table.
_ITEMS = {"Query": "Items", "BatchGetItem": "Responses"}
# A binary value's type tag as a JSON key (inside a string a quote is escaped, so a
# stored text cannot match it). reads.py checks answers with it too.
BINARY = re.compile(rb'"BS?"\s*:')
_HANDLER_ID = "taisce-dynamodb-items"


def _lift_items(
    response_dict: dict[str, Any],
    customized_response_dict: dict[str, Any],
    operation_model: Any,
    **_: Any,
) -> None:
    member = _ITEMS.get(operation_model.name)
    body = response_dict.get("body")
    if member is None or response_dict.get("status_code") != 200 or not body:
        return
    if not isinstance(body, bytes) or BINARY.search(body):
        return
    answer = json.loads(body)
    if not isinstance(answer, dict) or member not in answer:
        return
    customized_response_dict[member] = answer.pop(member)
    response_dict["body"] = json.dumps(answer).encode()


def lift_items(client: Any) -> None:
    """Register the lifting on this client (once: a second call changes nothing)."""
    events = client.meta.events
    for operation in _ITEMS:
        events.register(
            f"before-parse.dynamodb.{operation}",
            _lift_items,
            unique_id=f"{_HANDLER_ID}-{operation}",
        )
