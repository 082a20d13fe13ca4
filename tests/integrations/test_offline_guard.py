"""The guard that keeps the integration tests offline is not blind: it refuses a
connection beyond the machine and lets a loopback one through."""

from __future__ import annotations

import socket

import pytest


def test_a_connection_beyond_the_machine_fails_the_test() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        with pytest.raises(AssertionError, match="beyond this machine"):
            sock.connect(("192.0.2.1", 443))  # TEST-NET-1: never routed


def test_a_loopback_connection_goes_through() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        with socket.create_connection(listener.getsockname(), timeout=1):
            pass
