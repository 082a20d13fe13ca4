"""The scope a request acts in: its project (from the credential) and the end user it
names, in its body or as `?user=` (domain/scope.py says what each sees)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.openapi.params import Query

from ..domain.errors import Forbidden
from ..domain.scope import USER_PATTERN, scope
from .resolver import Caller, caller_of

# `?user=` of a GET or DELETE: the same rule as the `user` of a POST body.
UserQuery = Annotated[
    str | None,
    Query(
        pattern=USER_PATTERN,
        description="An end user's id: see and act on the shared memory and this user's",
    ),
]


def acting_user(caller: Caller, user: str | None) -> str | None:
    """The user a request acts as: the one it names, except that a user credential
    acts only as its own user (filled in when the request names none; another is 403).
    The one place this rule is written: every route that takes a `user` comes here,
    on Lambda and behind the local server alike."""
    if caller.kind != "user" or user == caller.user:
        return user
    if user is None:
        return caller.user
    raise Forbidden("this credential acts only for its own user, not the user named")


def scope_of(app: APIGatewayHttpResolver, user: str | None) -> str:
    """The partition the request writes to (and through it, what it reads)."""
    caller = caller_of(app)
    return scope(caller.project, acting_user(caller, user))
