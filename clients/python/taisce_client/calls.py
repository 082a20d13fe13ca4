"""Each API route as a `Call`: the request to send and how to read the answer.

The sync and async clients both run these, so a route is described once.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from .models import (
    AliasPage,
    Credential,
    CredentialPage,
    EntityPage,
    Erasure,
    ErasurePreview,
    FactMatches,
    FactPage,
    Health,
    MessageMatches,
    MessagePage,
    MessageWithPassages,
    Neighbourhood,
    NewFact,
    NewMessage,
    Recall,
    Status,
)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    method: str
    path: str
    read: Callable[[Any], T]
    body: Any = None
    params: dict[str, str] | None = None
    # Health is the one route that needs no credential.
    needs_credential: bool = True
    # Whether the route takes an end user (`user` in the body, or `?user=`): every
    # memory route does; health and the credentials routes do not.
    takes_user: bool = True


def for_user(call: Call[T], user: str | None) -> Call[T]:
    """The call acting for `user` (None: the shared memory only): a top-level `user`
    in a POST body, `?user=` on a GET or DELETE."""
    if user is None or not call.takes_user:
        return call
    if call.method == "POST":
        return replace(call, body={**call.body, "user": user})
    return replace(call, params={**(call.params or {}), "user": user})


def _with_ids(items: Iterable[NewMessage | NewFact | Mapping[str, Any]], prefix: str) -> list[Any]:
    """The items as JSON, each with an id: the API stores an id once, so a retried
    request (after a 429 or 5xx that may have been stored) never stores twice."""
    out = []
    for item in items:
        data = item.wire() if isinstance(item, NewMessage | NewFact) else dict(item)
        if data.get("id") is None:
            data["id"] = f"{prefix}_{uuid.uuid4().hex}"
        out.append(data)
    return out


def _ids(key: str) -> Callable[[Any], list[str]]:
    return lambda body: [item["id"] for item in body[key]]


def store_messages(messages: Iterable[NewMessage | Mapping[str, Any]]) -> Call[list[str]]:
    body = {"messages": _with_ids(messages, "msg")}
    return Call("POST", "/v1/messages", _ids("messages"), body)


def store_facts(facts: Iterable[NewFact | Mapping[str, Any]]) -> Call[list[str]]:
    return Call("POST", "/v1/facts", _ids("facts"), {"facts": _with_ids(facts, "fact")})


def facts_page(subject: str, limit: int | None = None, cursor: str | None = None) -> Call[FactPage]:
    params = {"subject": subject, **_params(limit=limit, cursor=cursor)}
    return Call("GET", "/v1/facts", FactPage.from_wire, params=params)


def alias_page(limit: int | None = None, cursor: str | None = None) -> Call[AliasPage]:
    params = _params(limit=limit, cursor=cursor)
    return Call("GET", "/v1/entities/aliases", AliasPage.from_wire, params=params)


def delete_fact(fact_id: str) -> Call[None]:
    return Call("DELETE", f"/v1/facts/{quote(fact_id, safe='')}", lambda _: None)


def recall(question: Any, controls: Mapping[str, Any]) -> Call[Recall]:
    """A recall; a value of None is left out (the API treats null as not sent)."""
    given = {"question": question, **controls}
    body = {k: v for k, v in given.items() if v is not None}
    return Call("POST", "/v1/recalls", Recall.from_wire, body)


def _erasure_body(
    subject: str | None, also: Iterable[str] = (), token: str | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {} if subject is None else {"subject": subject}
    if also:
        body["also"] = list(also)
    if token is not None:
        body["token"] = token
    return body


def erase(subject: str | None, also: Iterable[str] = (), token: str | None = None) -> Call[Erasure]:
    """An entity's erasure (with the other entities named in `also`, and a preview's
    `token`); with no subject (and a user), the user's whole scope."""
    return Call("POST", "/v1/erasures", Erasure.from_wire, _erasure_body(subject, also, token))


def preview_erasure(subject: str, also: Iterable[str] = ()) -> Call[ErasurePreview]:
    """What an erasure of `subject` would take (`dry_run`), nothing removed."""
    body = {**_erasure_body(subject, also), "dry_run": True}
    return Call("POST", "/v1/erasures", ErasurePreview.from_wire, body)


def erasure(erasure_id: str) -> Call[Erasure]:
    return Call("GET", f"/v1/erasures/{quote(erasure_id, safe='')}", Erasure.from_wire)


# How often erase(wait=True) reads a pending erasure's status.
ERASURE_POLL_SECONDS = 0.5


def _params(**given: Any) -> dict[str, str]:
    """Query parameters that were given (None is left out), as text."""
    return {k: str(v) for k, v in given.items() if v is not None}


def entities(
    search: str | None = None, limit: int | None = None, cursor: str | None = None
) -> Call[EntityPage]:
    params = _params(search=search, limit=limit, cursor=cursor)
    return Call("GET", "/v1/entities", EntityPage.from_wire, params=params)


def neighbourhood(name: str, hops: int = 1) -> Call[Neighbourhood]:
    params = _params(name=name, hops=hops)
    return Call("GET", "/v1/entities/neighbourhood", Neighbourhood.from_wire, params=params)


def messages(
    role: str | None = None,
    source: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
    passages: bool = False,
) -> Call[MessagePage]:
    params = _params(
        role=role, source=source, limit=limit, cursor=cursor, passages="true" if passages else None
    )
    return Call("GET", "/v1/messages", MessagePage.from_wire, params=params)


def search_facts(
    q: str, role: str | None = None, limit: int | None = None, cursor: str | None = None
) -> Call[FactMatches]:
    params = _params(q=q, role=role, limit=limit, cursor=cursor)
    return Call("GET", "/v1/search/facts", FactMatches.from_wire, params=params)


def search_messages(
    q: str,
    role: str | None = None,
    source: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Call[MessageMatches]:
    params = _params(q=q, role=role, source=source, limit=limit, cursor=cursor)
    return Call("GET", "/v1/search/messages", MessageMatches.from_wire, params=params)


def message(message_id: str) -> Call[MessageWithPassages]:
    return Call("GET", f"/v1/messages/{quote(message_id, safe='')}", MessageWithPassages.from_wire)


def health() -> Call[Health]:
    return Call("GET", "/v1/health", Health.from_wire, needs_credential=False, takes_user=False)


def status() -> Call[Status]:
    return Call("GET", "/v1/status", Status.from_wire, takes_user=False)


# -- credentials (an admin credential's routes) ----------------------------------------


def create_credential(user: str | None = None, label: str | None = None) -> Call[Credential]:
    body = _params(user=user, label=label)
    return Call("POST", "/v1/credentials", Credential.from_wire, body, takes_user=False)


def credentials(limit: int | None = None, cursor: str | None = None) -> Call[CredentialPage]:
    params = _params(limit=limit, cursor=cursor)
    return Call("GET", "/v1/credentials", CredentialPage.from_wire, params=params, takes_user=False)


def revoke_credential(credential_id: str) -> Call[None]:
    path = f"/v1/credentials/{quote(credential_id, safe='')}"
    return Call("DELETE", path, lambda _: None, takes_user=False)
