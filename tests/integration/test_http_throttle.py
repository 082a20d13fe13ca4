"""Refused credentials throttled per client address, over real HTTP against `taisce
serve` with its default limit (ten refused at once, then one every 6 s)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from taisce.local.throttle import REFUSED_PER_MINUTE
from tests.server import LocalServer, start_server


@pytest.fixture
def throttled(tmp_path: Path) -> Iterator[LocalServer]:
    running = start_server(
        tmp_path, args=("--refused-credentials", str(REFUSED_PER_MINUTE), "--processes", "2")
    )
    yield running
    running.stop()


def guess(http: httpx.Client) -> httpx.Response:
    headers = {"Authorization": f"Bearer tsk_{secrets.token_hex(32)}"}
    return http.post("/v1/recalls", json={"question": "anything?"}, headers=headers)


def test_after_ten_refused_credentials_an_address_gets_429_with_retry_after(
    throttled: LocalServer,
) -> None:
    good = throttled.new_credential("throttle-good")
    with throttled.client() as http:
        # A credential the server accepted before the guessing starts.
        ok = http.get("/v1/facts", params={"subject": "x"}, headers=auth(good))
        assert ok.status_code == 200, ok.text
        refused = [guess(http).status_code for _ in range(REFUSED_PER_MINUTE)]
        assert refused == [401] * REFUSED_PER_MINUTE
        for _ in range(5):
            r = guess(http)
            assert r.status_code == 429, r.text
            assert r.json() == {
                "error": {"code": "rate_limited", "message": r.json()["error"]["message"]}
            }
            assert "too many refused credentials" in r.json()["error"]["message"]
            assert 1 <= int(r.headers["Retry-After"]) <= 6
        # Successful requests are unaffected: the known credential still works.
        for _ in range(5):
            assert (
                http.get("/v1/facts", params={"subject": "x"}, headers=auth(good)).status_code
                == 200
            )
        # Routes without a credential are not throttled either.
        assert http.get("/v1/health").status_code == 200
        # A credential never accepted from here waits like a guess: it is not checked.
        fresh = throttled.new_credential("throttle-fresh")
        assert (
            http.get("/v1/facts", params={"subject": "x"}, headers=auth(fresh)).status_code == 429
        )
    log = throttled.stop()
    assert "(throttled: too many refused credentials)" in log
    assert "tsk_" not in log


def test_guesses_sent_in_parallel_are_bounded_too(throttled: LocalServer) -> None:
    with throttled.client() as http, ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(lambda _: guess(http).status_code, range(40)))
    assert statuses.count(401) <= REFUSED_PER_MINUTE, statuses
    assert statuses.count(429) >= 40 - REFUSED_PER_MINUTE, statuses
    assert set(statuses) == {401, 429}


def auth(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}
