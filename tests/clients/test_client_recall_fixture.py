"""testdata/recall-controls.json driven through the Python client, sync and async,
against real `taisce serve` processes (one per server setting, shared by the session)."""

from __future__ import annotations

from typing import Any

import pytest
from taisce_client import ApiError, AsyncClient, Client, Recall

from tests.clients.conftest import FixtureServers
from tests.clients.fixture_cases import CASES, arguments, error_of
from tests.recall_fixture import SUITES, Memory, check_answer, check_error


def _check(case: dict[str, Any], got: Recall | ApiError, memory: Memory) -> None:
    if isinstance(got, ApiError):
        check_error(case["expect"], got.status, error_of(got))
    else:
        assert case["expect"]["status"] == 200, f"expected a refusal, got {got}"
        check_answer(case["expect"], got.wire(), memory)


@pytest.mark.parametrize(("suite_name", "case"), CASES)
def test_sync_client(
    fixture_servers: FixtureServers, suite_name: str, case: dict[str, Any]
) -> None:
    suite = fixture_servers.suite(suite_name)
    question, controls = arguments(case)
    with Client(suite.url, suite.secret, retries=0) as taisce:
        try:
            got: Recall | ApiError = taisce.recall(question, **controls)
        except ApiError as error:
            got = error
    _check(case, got, suite.memory)


@pytest.mark.anyio
@pytest.mark.parametrize(("suite_name", "case"), CASES)
async def test_async_client(
    fixture_servers: FixtureServers, suite_name: str, case: dict[str, Any]
) -> None:
    suite = fixture_servers.suite(suite_name)
    question, controls = arguments(case)
    async with AsyncClient(suite.url, suite.secret, retries=0) as taisce:
        try:
            got: Recall | ApiError = await taisce.recall(question, **controls)
        except ApiError as error:
            got = error
    _check(case, got, suite.memory)


def test_every_suite_runs() -> None:
    assert {param.values[0] for param in CASES} == set(SUITES)
