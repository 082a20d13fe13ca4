from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server import LocalServer, start_server


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """One local server with default settings, shared by the session.

    Tests stay apart by using a project (credential) of their own.
    """
    running = start_server(Path(tmp_path_factory.mktemp("server-data")))
    yield running
    running.stop()
