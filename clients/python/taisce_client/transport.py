"""What the sync and async clients share: settings, headers, retries, reading answers."""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from .calls import Call
from .errors import ConfigurationError, TaisceConnectionError, api_error

T = TypeVar("T")

DEFAULT_URL = "http://127.0.0.1:8080"
# The longest Retry-After obeyed: a server asking for more is not waited for that long.
_RETRY_AFTER_MAX = 30.0


@dataclass(frozen=True, slots=True)
class Settings:
    url: str
    api_key: str | None
    timeout: float
    retries: int
    backoff: float
    # The end user every call acts for unless it names its own (None: shared memory).
    user: str | None = None


def settings(
    url: str | None,
    api_key: str | None,
    timeout: float,
    retries: int,
    backoff: float,
    user: str | None = None,
) -> Settings:
    """The URL and credential from the arguments, else TAISCE_URL / TAISCE_API_KEY."""
    chosen = (url or os.environ.get("TAISCE_URL") or DEFAULT_URL).rstrip("/")
    if not chosen.startswith(("http://", "https://")):
        raise ConfigurationError(f"the Taisce URL must start with http:// or https://: {chosen!r}")
    key = api_key if api_key is not None else os.environ.get("TAISCE_API_KEY")
    if retries < 0 or backoff < 0:
        raise ConfigurationError("retries and backoff must not be negative")
    return Settings(chosen, key or None, timeout, retries, backoff, user)


def headers(config: Settings, call: Call[Any]) -> dict[str, str]:
    if not call.needs_credential:
        return {}
    if config.api_key is None:
        raise ConfigurationError("no credential: pass api_key= or set TAISCE_API_KEY")
    return {"Authorization": f"Bearer {config.api_key}"}


# Refused the same way however often sent: an HTTP version the server does not serve
# (505), and a full disk (507) until space is freed.
_NOT_AGAIN = frozenset({505, 507})


def retryable(status: int) -> bool:
    """Only these are worth trying again: the server asked us to slow down (429, or 503
    with too many connections, both with Retry-After), the request arrived too slowly
    to run (408: nothing of it ran), or the server failed. Any other refusal would be
    refused again."""
    return status in (408, 429) or (status >= 500 and status not in _NOT_AGAIN)


def delay(config: Settings, attempt: int, response: httpx.Response) -> float:
    """Seconds to wait before retry `attempt` (0-based): the server's Retry-After when
    it gives one, else exponential backoff with full jitter."""
    given = response.headers.get("Retry-After", "")
    try:
        return min(max(float(given), 0.0), _RETRY_AFTER_MAX)
    except ValueError:
        # Not for secrets: retry jitter.
        return random.uniform(0, config.backoff * 2**attempt)  # nosec B311


def unreachable(config: Settings, error: httpx.HTTPError) -> TaisceConnectionError:
    what = "did not answer in time" if isinstance(error, httpx.TimeoutException) else "unreachable"
    return TaisceConnectionError(f"Taisce at {config.url} {what}: {error or type(error).__name__}")


def read(call: Call[T], response: httpx.Response) -> T:
    """The call's result, or the API's error raised as its typed exception."""
    try:
        body = response.json() if response.content else None
    except json.JSONDecodeError:
        body = None
    if response.status_code >= 400:
        raise api_error(response.status_code, body)
    return call.read(body)
