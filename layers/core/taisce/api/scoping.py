"""The scope a request acts in: its project (from the credential) and the end user it
names, in its body or as `?user=` (domain/scope.py says what each sees)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.openapi.params import Query

from ..domain.scope import USER_PATTERN, scope
from .resolver import project_of

# `?user=` of a GET or DELETE: the same rule as the `user` of a POST body.
UserQuery = Annotated[
    str | None,
    Query(
        pattern=USER_PATTERN,
        description="An end user's id: see and act on the shared memory and this user's",
    ),
]


def scope_of(app: APIGatewayHttpResolver, user: str | None) -> str:
    """The partition the request writes to (and through it, what it reads)."""
    return scope(project_of(app), user)
