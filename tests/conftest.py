from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import moto_server
from tests.server import LocalServer, start_server


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """One local server with default settings, shared by the session.

    Tests stay apart by using a project (credential) of their own.
    """
    running = start_server(Path(tmp_path_factory.mktemp("server-data")))
    yield running
    running.stop()


# -- no Scan on any path -----------------------------------------------------------------
# The session's moto server records every DynamoDB operation it serves, whichever process
# sent it (the tests' stores, `taisce serve` processes, workers). At the end of the session
# a Scan fails the run: every request and worker path reads only its project's partitions
# (docs/dynamodb.md). The log is per session and read once, after the last test.

_OPERATIONS: Path | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _OPERATIONS
    if moto_server.OPERATIONS_LOG not in os.environ:
        folder = Path(tempfile.mkdtemp(prefix="taisce-operations-"))
        _OPERATIONS = folder / "operations.log"
        os.environ[moto_server.OPERATIONS_LOG] = str(_OPERATIONS)


def scan_verdict(counts: dict[str, int], moto_started: bool) -> str | None:
    """Why the session fails on its DynamoDB operations, or None."""
    if counts.get("Scan"):
        return f"{counts['Scan']} DynamoDB Scan(s) were served; no path may Scan the table"
    if moto_started and not counts:
        return "moto served DynamoDB but no operation was recorded: the Scan check is blind"
    return None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _OPERATIONS is None:
        return
    counts = moto_server.operations(_OPERATIONS)
    verdict = scan_verdict(counts, moto_server._shared is not None)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and counts:
        summary = ", ".join(f"{op} {n}" for op, n in sorted(counts.items()))
        reporter.write_line(f"DynamoDB operations served by moto: {summary}")
    if verdict is not None:
        if reporter is not None:
            reporter.write_line(f"FAILED: {verdict}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
