"""The asynchronous client: the same methods as `Client`, awaited."""

from __future__ import annotations

import asyncio
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


class AsyncClient:
    """Taisce over HTTP for asyncio: every method of `Client`, awaited (see its docs).

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
        http_transport: httpx.AsyncBaseTransport | None = None,
        user: str | None = None,
    ) -> None:
        self.settings = transport.settings(url, api_key, timeout, retries, backoff, user)
        self._http = httpx.AsyncClient(
            base_url=self.settings.url, timeout=timeout, transport=http_transport
        )

    async def _run(self, call: Call[T], user: str | None = None) -> T:
        config = self.settings
        call = calls.for_user(call, user if user is not None else config.user)
        for attempt in range(config.retries + 1):
            try:
                response = await self._http.request(
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
            await asyncio.sleep(transport.delay(config, attempt, response))
        return transport.read(call, response)

    async def store_messages(
        self, messages: Iterable[NewMessage | Mapping[str, Any]], *, user: str | None = None
    ) -> list[str]:
        return await self._run(calls.store_messages(messages), user)

    async def store_facts(
        self, facts: Iterable[NewFact | Mapping[str, Any]], *, user: str | None = None
    ) -> list[str]:
        return await self._run(calls.store_facts(facts), user)

    async def facts_about(
        self,
        subject: str,
        *,
        user: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> list[Fact]:
        facts: list[Fact] = []
        while True:
            page = await self.facts_page(subject, user=user, limit=limit, cursor=cursor)
            facts += page.facts
            if page.next_cursor is None:
                return facts
            cursor = page.next_cursor

    async def facts_page(
        self,
        subject: str,
        *,
        user: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> FactPage:
        return await self._run(calls.facts_page(subject, limit, cursor), user)

    async def aliases(
        self, *, user: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> list[Alias]:
        found: list[Alias] = []
        while True:
            page = await self.alias_page(user=user, limit=limit, cursor=cursor)
            found += page.aliases
            if page.next_cursor is None:
                return found
            cursor = page.next_cursor

    async def alias_page(
        self, *, user: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> AliasPage:
        return await self._run(calls.alias_page(limit, cursor), user)

    async def delete_fact(self, fact_id: str, *, user: str | None = None) -> None:
        await self._run(calls.delete_fact(fact_id), user)

    async def recall(
        self, question: str, *, user: str | None = None, **controls: Unpack[RecallControls]
    ) -> Recall:
        return await self._run(calls.recall(question, controls), user)

    @overload
    async def erase(
        self,
        subject: str,
        *,
        dry_run: Literal[True],
        also: Iterable[str] = ...,
        user: str | None = ...,
    ) -> ErasurePreview: ...

    @overload
    async def erase(
        self,
        subject: str | None = ...,
        *,
        user: str | None = ...,
        wait: float = ...,
        also: Iterable[str] = ...,
        token: str | None = ...,
        dry_run: Literal[False] = ...,
    ) -> Erasure: ...

    async def erase(
        self,
        subject: str | None = None,
        *,
        user: str | None = None,
        wait: float = 0.0,
        also: Iterable[str] = (),
        token: str | None = None,
        dry_run: bool = False,
    ) -> Erasure | ErasurePreview:
        if dry_run:
            if subject is None:
                raise ValueError("dry_run needs a subject")
            return await self._run(calls.preview_erasure(subject, also), user)
        answer = await self._run(calls.erase(subject, also, token), user)
        deadline = time.monotonic() + wait
        while answer.status == "pending" and time.monotonic() < deadline:
            await asyncio.sleep(calls.ERASURE_POLL_SECONDS)
            answer = await self.erasure(answer.id, user=user)
        return answer

    async def erasure(self, erasure_id: str, *, user: str | None = None) -> Erasure:
        return await self._run(calls.erasure(erasure_id), user)

    async def entities(
        self,
        search: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        *,
        user: str | None = None,
    ) -> EntityPage:
        return await self._run(calls.entities(search, limit, cursor), user)

    async def neighbourhood(
        self, name: str, hops: int = 1, *, user: str | None = None
    ) -> Neighbourhood:
        return await self._run(calls.neighbourhood(name, hops), user)

    async def messages(
        self,
        role: str | None = None,
        source: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        passages: bool = False,
        *,
        user: str | None = None,
    ) -> MessagePage:
        return await self._run(calls.messages(role, source, limit, cursor, passages), user)

    async def search_facts(
        self,
        q: str,
        role: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        *,
        user: str | None = None,
    ) -> FactMatches:
        return await self._run(calls.search_facts(q, role, limit, cursor), user)

    async def search_messages(
        self,
        q: str,
        role: str | None = None,
        source: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        *,
        user: str | None = None,
    ) -> MessageMatches:
        return await self._run(calls.search_messages(q, role, source, limit, cursor), user)

    async def message(self, message_id: str, *, user: str | None = None) -> MessageWithPassages:
        return await self._run(calls.message(message_id), user)

    async def create_credential(
        self, user: str | None = None, label: str | None = None
    ) -> Credential:
        return await self._run(calls.create_credential(user, label))

    async def credentials(
        self, limit: int | None = None, cursor: str | None = None
    ) -> CredentialPage:
        return await self._run(calls.credentials(limit, cursor))

    async def revoke_credential(self, credential_id: str) -> None:
        await self._run(calls.revoke_credential(credential_id))

    async def health(self) -> Health:
        return await self._run(calls.health())

    async def status(self) -> Status:
        return await self._run(calls.status())

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.close()
