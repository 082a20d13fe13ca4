"""The asynchronous client: the same methods as `Client`, awaited."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any, TypeVar

import httpx

from . import calls, transport
from .calls import Call
from .models import (
    EntityPage,
    Erasure,
    Fact,
    Health,
    MessagePage,
    MessageWithPassages,
    Neighbourhood,
    NewFact,
    NewMessage,
    Recall,
    RecallControls,
)

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # the client supports Python 3.10
    from typing_extensions import Unpack

T = TypeVar("T")


class AsyncClient:
    """Taisce over HTTP for asyncio: every method of `Client`, awaited (see its docs).

    `url` defaults to $TAISCE_URL (else http://127.0.0.1:8080), `api_key` to
    $TAISCE_API_KEY. A 429 or 5xx is retried up to `retries` times with exponential
    backoff (or the server's Retry-After); any other refusal raises at once. Errors
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
    ) -> None:
        self.settings = transport.settings(url, api_key, timeout, retries, backoff)
        self._http = httpx.AsyncClient(
            base_url=self.settings.url, timeout=timeout, transport=http_transport
        )

    async def _run(self, call: Call[T]) -> T:
        config = self.settings
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

    async def store_messages(self, messages: Iterable[NewMessage | Mapping[str, Any]]) -> list[str]:
        return await self._run(calls.store_messages(messages))

    async def store_facts(self, facts: Iterable[NewFact | Mapping[str, Any]]) -> list[str]:
        return await self._run(calls.store_facts(facts))

    async def facts_about(self, subject: str) -> list[Fact]:
        return await self._run(calls.facts_about(subject))

    async def delete_fact(self, fact_id: str) -> None:
        await self._run(calls.delete_fact(fact_id))

    async def recall(self, question: str, **controls: Unpack[RecallControls]) -> Recall:
        return await self._run(calls.recall(question, controls))

    async def erase(self, subject: str, *, wait: float = 0.0) -> Erasure:
        answer = await self._run(calls.erase(subject))
        deadline = time.monotonic() + wait
        while answer.status == "pending" and time.monotonic() < deadline:
            await asyncio.sleep(calls.ERASURE_POLL_SECONDS)
            answer = await self.erasure(answer.id)
        return answer

    async def erasure(self, erasure_id: str) -> Erasure:
        return await self._run(calls.erasure(erasure_id))

    async def entities(
        self, search: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> EntityPage:
        return await self._run(calls.entities(search, limit, cursor))

    async def neighbourhood(self, name: str, hops: int = 1) -> Neighbourhood:
        return await self._run(calls.neighbourhood(name, hops))

    async def messages(
        self,
        role: str | None = None,
        source: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        passages: bool = False,
    ) -> MessagePage:
        return await self._run(calls.messages(role, source, limit, cursor, passages))

    async def message(self, message_id: str) -> MessageWithPassages:
        return await self._run(calls.message(message_id))

    async def health(self) -> Health:
        return await self._run(calls.health())

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
