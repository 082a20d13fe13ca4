"""The synchronous client: one method per API route."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any, Literal, TypeVar, overload

import httpx

from . import calls, transport
from .calls import Call
from .models import (
    Alias,
    AliasPage,
    Credential,
    CredentialPage,
    EntityPage,
    Erasure,
    ErasurePreview,
    Fact,
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
    RecallControls,
    Status,
)

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # the client supports Python 3.10
    from typing_extensions import Unpack

T = TypeVar("T")


class Client:
    """Taisce over HTTP. The credential decides the project.

    `user` (an end user's id) makes every call act for that user: it sees the shared
    memory and that user's, and stores into that user's. Any call may name its own
    `user=` instead. Without one, calls see and store the shared memory only.

    `url` defaults to $TAISCE_URL (else http://127.0.0.1:8080), `api_key` to
    $TAISCE_API_KEY. A 408, 429 or 5xx (not 505 or 507) is retried up to `retries`
    times with exponential backoff (or the server's Retry-After); any other refusal
    raises at once. Errors
    raise subclasses of `taisce_client.TaisceError`.
    """

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        http_transport: httpx.BaseTransport | None = None,
        user: str | None = None,
    ) -> None:
        self.settings = transport.settings(url, api_key, timeout, retries, backoff, user)
        self._http = httpx.Client(
            base_url=self.settings.url, timeout=timeout, transport=http_transport
        )

    def _run(self, call: Call[T], user: str | None = None) -> T:
        config = self.settings
        call = calls.for_user(call, user if user is not None else config.user)
        for attempt in range(config.retries + 1):
            try:
                response = self._http.request(
                    call.method,
                    call.path,
                    json=call.body,
                    params=call.params,
                    headers=transport.headers(config, call),
                )
            except httpx.HTTPError as error:
                raise transport.unreachable(config, error) from None
            if not (transport.retryable(response.status_code) and attempt < config.retries):
                break
            time.sleep(transport.delay(config, attempt, response))
        return transport.read(call, response)

    def store_messages(
        self, messages: Iterable[NewMessage | Mapping[str, Any]], *, user: str | None = None
    ) -> list[str]:
        """Store 1..100 messages; returns their ids (made by the client when not given)."""
        return self._run(calls.store_messages(messages), user)

    def store_facts(
        self, facts: Iterable[NewFact | Mapping[str, Any]], *, user: str | None = None
    ) -> list[str]:
        """Store 1..100 facts; returns their ids (made by the client when not given)."""
        return self._run(calls.store_facts(facts), user)

    def facts_about(
        self,
        subject: str,
        *,
        user: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> list[Fact]:
        """Every fact whose subject is this entity, in storing order: the pages followed
        to the end (`limit` facts a request, the server's default page if None), from
        `cursor` if given. `facts_page` reads one page."""
        facts: list[Fact] = []
        while True:
            page = self.facts_page(subject, user=user, limit=limit, cursor=cursor)
            facts += page.facts
            if page.next_cursor is None:
                return facts
            cursor = page.next_cursor

    def facts_page(
        self,
        subject: str,
        *,
        user: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> FactPage:
        """One page of the facts about this entity; pass its `next_cursor` as `cursor`."""
        return self._run(calls.facts_page(subject, limit, cursor), user)

    def aliases(
        self, *, user: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> list[Alias]:
        """Every alias of the project by normalised alias, the pages followed to the end
        (`limit` a request), from `cursor` if given. `alias_page` reads one page."""
        found: list[Alias] = []
        while True:
            page = self.alias_page(user=user, limit=limit, cursor=cursor)
            found += page.aliases
            if page.next_cursor is None:
                return found
            cursor = page.next_cursor

    def alias_page(
        self, *, user: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> AliasPage:
        """One page of the project's aliases; pass its `next_cursor` as `cursor`."""
        return self._run(calls.alias_page(limit, cursor), user)

    def delete_fact(self, fact_id: str, *, user: str | None = None) -> None:
        """Delete one fact; raises NotFound when the project has no such fact."""
        self._run(calls.delete_fact(fact_id), user)

    def recall(
        self, question: str, *, user: str | None = None, **controls: Unpack[RecallControls]
    ) -> Recall:
        """A budgeted bundle of memory for a question. Controls left out (or None) take
        the server's defaults; a control this client does not name is sent as given."""
        return self._run(calls.recall(question, controls), user)

    @overload
    def erase(
        self,
        subject: str,
        *,
        dry_run: Literal[True],
        also: Iterable[str] = ...,
        user: str | None = ...,
    ) -> ErasurePreview: ...

    @overload
    def erase(
        self,
        subject: str | None = ...,
        *,
        user: str | None = ...,
        wait: float = ...,
        also: Iterable[str] = ...,
        token: str | None = ...,
        dry_run: Literal[False] = ...,
    ) -> Erasure: ...

    def erase(
        self,
        subject: str | None = None,
        *,
        user: str | None = None,
        wait: float = 0.0,
        also: Iterable[str] = (),
        token: str | None = None,
        dry_run: bool = False,
    ) -> Erasure | ErasurePreview:
        """Erase everything held about an entity (in what `user` sees: the shared memory,
        or that user's), or with no subject everything in the user's scope: `status`
        "done" with the counts in `erased`, or "pending" (a deploy whose worker erases
        it: recall already hides it). With `wait` (seconds), reads the status until it
        is done or the time is up. `also`: other entities whose names hold the subject,
        taken too (otherwise they stay); `token`: the preview's, for a subject that is
        no entity and would mask much. With `dry_run`, nothing is removed: the answer
        is an ErasurePreview (what it would take, and its token)."""
        if dry_run:
            if subject is None:
                raise ValueError("dry_run needs a subject")
            return self._run(calls.preview_erasure(subject, also), user)
        answer = self._run(calls.erase(subject, also, token), user)
        deadline = time.monotonic() + wait
        while answer.status == "pending" and time.monotonic() < deadline:
            time.sleep(calls.ERASURE_POLL_SECONDS)
            answer = self.erasure(answer.id, user=user)
        return answer

    def erasure(self, erasure_id: str, *, user: str | None = None) -> Erasure:
        """An erasure's status (pending or done, with counts); NotFound if unknown."""
        return self._run(calls.erasure(erasure_id), user)

    def entities(
        self,
        search: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        *,
        user: str | None = None,
    ) -> EntityPage:
        """One page of the project's entities by key, with their live facts per role;
        pass `next_cursor` back as cursor for the next (None: the end)."""
        return self._run(calls.entities(search, limit, cursor), user)

    def neighbourhood(self, name: str, hops: int = 1, *, user: str | None = None) -> Neighbourhood:
        """An entity's live facts (and with hops 2 its neighbours') as nodes and edges."""
        return self._run(calls.neighbourhood(name, hops), user)

    def messages(
        self,
        role: str | None = None,
        source: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        passages: bool = False,
        *,
        user: str | None = None,
    ) -> MessagePage:
        """One page of the stored messages, newest first (`next_cursor`: the next page);
        with `passages`, each message carries its passages (one request for the page)."""
        return self._run(calls.messages(role, source, limit, cursor, passages), user)

    def search_facts(
        self,
        q: str,
        role: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        *,
        user: str | None = None,
    ) -> FactMatches:
        """One page of the facts holding these words, best first (closed facts too)."""
        return self._run(calls.search_facts(q, role, limit, cursor), user)

    def search_messages(
        self,
        q: str,
        role: str | None = None,
        source: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        *,
        user: str | None = None,
    ) -> MessageMatches:
        """One page of the messages holding these words, best first, each with the
        passages that matched."""
        return self._run(calls.search_messages(q, role, source, limit, cursor), user)

    def message(self, message_id: str, *, user: str | None = None) -> MessageWithPassages:
        """One message with its passages; raises NotFound when there is none."""
        return self._run(calls.message(message_id), user)

    def create_credential(self, user: str | None = None, label: str | None = None) -> Credential:
        """Mint a credential (an admin credential only): bound to `user` when given,
        else a project credential. Its `secret` is shown this once."""
        return self._run(calls.create_credential(user, label))

    def credentials(self, limit: int | None = None, cursor: str | None = None) -> CredentialPage:
        """One page of the project's credentials by id (an admin credential only)."""
        return self._run(calls.credentials(limit, cursor))

    def revoke_credential(self, credential_id: str) -> None:
        """Revoke one of the project's credentials (an admin credential only)."""
        self._run(calls.revoke_credential(credential_id))

    def health(self) -> Health:
        """Liveness only; needs no credential."""
        return self._run(calls.health())

    def status(self) -> Status:
        """The server's version and settings, and whether its worker has work for
        this credential's project (`work_pending`)."""
        return self._run(calls.status())

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
