"""The HTTP API's Lambda authorizer: bearer credential -> project, kind and user.

A known credential gets the simple response `{"isAuthorized": true, "context":
{"project": ..., "kind": ...[, "user": ...]}}`, which API Gateway caches per
Authorization header (so on AWS a revoked credential may be accepted for up to the
cache's 300 s; the local server asks on every request). `kind` is project, user or
admin; `user` is a user credential's end user (taisce.api.scoping applies the rule).
It also records the credential's last use, at most once a minute (one UpdateItem). An unknown,
revoked or malformed one raises `Unauthorized`, whose message is exactly
"Unauthorized": API Gateway then answers 401 `{"message": "Unauthorized"}`, as it does
for a missing header. (A simple response with isAuthorized false would be a 403
`{"message": "Forbidden"}`, which is not what docs/API.md promises.) The local server
runs this same handler before each route and answers 401 in the API's own shape.

A refused credential is remembered for a minute by this process (`Refusals`): the
refusal is raised (for the 401), not returned as an answer API Gateway's cache keeps,
and its cache has one TTL for all answers, so without it every request repeating a
wrong or revoked credential cost a GetItem. A secret is made by
the server when it mints the credential, so a hash refused now is never one minted
within the minute, and a revoked credential stays refused anyway.

On Lambda (TAISCE_STORE=dynamodb) it imports and builds only the credentials' part of
the DynamoDB store: one GetItem is all it does, so it leaves out the HTTP resolver,
pydantic's settings and the models' and vector index's clients that the API's wiring
builds (docs/aws.md, "Cold start and size"). Anywhere else it asks the wiring's store.
"""

from __future__ import annotations

import functools
import os
import time
from datetime import UTC, datetime
from typing import Any, Protocol

from taisce.credentials import bearer_secret, now_text, secret_hash, use_is_stale
from taisce.domain.model import Credential

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
    def credential_for(self, secret_hash: str) -> Credential | None: ...

    def record_use(self, secret_hash: str, used_at: str, unless_after: str) -> None: ...


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


class Refusals:
    """Hashes refused in the last `seconds`, at most `most` of them (more distinct
    ones, a flood of guesses, start the memory afresh: bounded, never a lookup saved
    at the cost of memory)."""

    def __init__(self, seconds: float = 60.0, most: int = 1024) -> None:
        self.seconds = seconds
        self.most = most
        self._until: dict[str, float] = {}

    def holds(self, hashed: str, now: float) -> bool:
        until = self._until.get(hashed)
        if until is None:
            return False
        if until > now:
            return True
        del self._until[hashed]
        return False

    def add(self, hashed: str, now: float) -> None:
        if len(self._until) >= self.most:
            self._until.clear()
        self._until[hashed] = now + self.seconds


refusals = Refusals()


def context_of(credential: Credential) -> dict[str, str]:
    """What the functions are told about the caller (taisce.api.resolver.caller_of)."""
    context = {"project": credential.project, "kind": credential.kind}
    if credential.user is not None:
        context["user"] = credential.user
    return context


def lambda_handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    secret = bearer_secret(headers.get("authorization"))
    if not secret:
        raise Unauthorized()
    hashed = secret_hash(secret)
    if refusals.holds(hashed, time.monotonic()):
        raise Unauthorized()
    lookup = credentials()
    credential = lookup.credential_for(hashed)
    if credential is None:
        refusals.add(hashed, time.monotonic())
        raise Unauthorized()
    now = datetime.now(UTC)
    cutoff = use_is_stale(credential, now)
    if cutoff is not None:
        lookup.record_use(hashed, now_text(now), cutoff)
    return {"isAuthorized": True, "context": context_of(credential)}
