"""The HTTP API's Lambda authorizer: bearer credential -> project.

A known credential gets the simple response `{"isAuthorized": true, "context":
{"project": ...}}`, which API Gateway caches per Authorization header. An unknown,
revoked or malformed one raises `Unauthorized`, whose message is exactly
"Unauthorized": API Gateway then answers 401 `{"message": "Unauthorized"}`, as it does
for a missing header. (A simple response with isAuthorized false would be a 403
`{"message": "Forbidden"}`, which is not what docs/API.md promises.) The local server
runs this same handler before each route and answers 401 in the API's own shape.

On Lambda (TAISCE_STORE=dynamodb) it imports and builds only the credentials' part of
the DynamoDB store: one GetItem is all it does, so it leaves out the HTTP resolver,
pydantic's settings and the models' and vector index's clients that the API's wiring
builds (docs/aws.md, "Cold start and size"). Anywhere else it asks the wiring's store.
"""

from __future__ import annotations

import functools
import os
from typing import Any, Protocol

from taisce.credentials import bearer_secret, secret_hash

# API Gateway turns an authorizer failure with exactly this message into a 401.
REFUSED = "Unauthorized"

# The settings the DynamoDB lookup needs, read by name rather than through
# taisce.settings (pydantic-settings alone is ~280 modules on a cold start).
STORE = "TAISCE_STORE"
TABLE = "TAISCE_DYNAMODB_TABLE"
ENDPOINT = "TAISCE_DYNAMODB_ENDPOINT"
DEFAULT_TABLE = "taisce"


class Unauthorized(Exception):
    def __init__(self) -> None:
        super().__init__(REFUSED)


class CredentialLookup(Protocol):
    def project_for(self, secret_hash: str) -> str | None: ...


@functools.cache
def _table_credentials(table: str, endpoint: str | None) -> CredentialLookup:
    from taisce.adapters.dynamodb.client import TableClient
    from taisce.adapters.dynamodb.credentials import DynamoDbCredentialStore

    return DynamoDbCredentialStore(TableClient(table, endpoint_url=endpoint))


def credentials() -> CredentialLookup:
    """Where credentials are looked up, built on the first request and then reused."""
    if os.environ.get(STORE) == "dynamodb":
        table = os.environ.get(TABLE) or DEFAULT_TABLE
        return _table_credentials(table, os.environ.get(ENDPOINT) or None)
    from taisce.api import services

    return services().credentials


def lambda_handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    secret = bearer_secret(headers.get("authorization"))
    project = credentials().project_for(secret_hash(secret)) if secret else None
    if project is None:
        raise Unauthorized()
    return {"isAuthorized": True, "context": {"project": project}}
