"""The session's Scan check (tests/conftest.py) really sees what moto serves: a server
started with its own operations log records a Scan sent to it, and the verdict fails on
it, or on a log that recorded nothing although moto served requests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import scan_verdict
from tests.moto_server import OPERATIONS_LOG, operations, start_moto


def test_a_scan_is_recorded_and_fails_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "operations.log"
    monkeypatch.setenv(OPERATIONS_LOG, str(log))  # this server only, not the session's
    moto = start_moto("taisce-scan-check")
    try:
        client = moto.client()
        client.query(
            TableName=moto.table,
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": "nothing"}},
        )
        client.scan(TableName=moto.table)
    finally:
        moto.stop()
    counts = operations(log)
    assert counts == {"CreateTable": 1, "Query": 1, "Scan": 1}
    assert "Scan" in (scan_verdict(counts, moto_started=True) or "")
    assert scan_verdict({"Query": 3}, moto_started=True) is None
    assert "blind" in (scan_verdict({}, moto_started=True) or "")
    assert scan_verdict({}, moto_started=False) is None
