"""Connection limits of `taisce serve` over real sockets: per client address and in
all, the total below the descriptor limit. A connection over a limit is answered
`503 unavailable` in the API's shape and closed; the refusals are logged once a
minute, never a trace per connection. Clients are told apart by their address: the
test connects from several loopback addresses (127.0.0.x), which Linux accepts."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server import LocalServer, start_server

HEALTH = b"GET /v1/health HTTP/1.1\r\nHost: t\r\n\r\n"


def _address(server: LocalServer) -> tuple[str, int]:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def _connect(server: LocalServer, source: str) -> socket.socket:
    sock = socket.create_connection(_address(server), timeout=10, source_address=(source, 0))
    return sock


def _answer(sock: socket.socket, deadline: float) -> tuple[int, bytes]:
    """The status and body of the next response on `sock` (0: none before `deadline`)."""
    data = b""
    while b"\r\n\r\n" not in data or len(data) < _length(data):
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            return 0, b""
        if not chunk:
            break
        data += chunk
    if not data:
        return 0, b""
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def _length(data: bytes) -> int:
    head, _, _ = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(head) + 4 + int(value)
    return len(data)


def _served(sock: socket.socket) -> int:
    sock.sendall(HEALTH)
    return _answer(sock, time.monotonic() + 10)[0]


def _assert_refused(sock: socket.socket, words: str) -> None:
    status, body = _answer(sock, time.monotonic() + 10)
    assert status == 503, body
    error = json.loads(body)["error"]
    assert error["code"] == "unavailable"
    assert words in error["message"], error
    assert sock.recv(1) == b"", "the refused connection stays open"


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[LocalServer]:
    running = start_server(
        tmp_path,
        args=("--processes", "1", "--client-connections", "3", "--connections", "5"),
    )
    yield running
    running.stop()


def test_connections_over_a_clients_share_or_the_total_are_refused_503(
    limited: LocalServer,
) -> None:
    first = [_connect(limited, "127.0.0.1") for _ in range(3)]
    assert [_served(s) for s in first] == [200, 200, 200]
    _assert_refused(_connect(limited, "127.0.0.1"), "one client may hold 3 connections")
    second = [_connect(limited, "127.0.0.2") for _ in range(2)]
    assert [_served(s) for s in second] == [200, 200]
    _assert_refused(_connect(limited, "127.0.0.3"), "the server holds 5 connections")
    # The connections held are still served, and a closed one frees its place.
    assert _served(first[0]) == 200
    second.pop().close()
    time.sleep(0.2)  # the server sees the close
    third = _connect(limited, "127.0.0.3")
    assert _served(third) == 200
    for _ in range(30):
        _assert_refused(_connect(limited, "127.0.0.4"), "the server holds 5 connections")
    for sock in [*first, *second, third]:
        sock.close()
    err = limited.stop()
    refusals = [line for line in err.splitlines() if "refused connections" in line]
    assert len(refusals) == 1, refusals
    assert "Traceback" not in err


def test_the_total_stays_below_the_descriptor_limit(tmp_path: Path) -> None:
    """With 500 descriptors (about 170 connections), 700 clients at once: each is
    served or refused 503, none is left waiting, the log holds no "Too many open
    files", and the server still answers after."""
    server = start_server(tmp_path, args=("--processes", "2"), open_files=500)
    try:
        socks = [_connect(server, f"127.0.1.{n % 10 + 1}") for n in range(700)]
        for sock in socks:
            sock.sendall(HEALTH)
        deadline = time.monotonic() + 20
        statuses = [_answer(sock, deadline)[0] for sock in socks]
        for sock in socks:
            sock.close()
        assert set(statuses) == {200, 503}, sorted(set(statuses))
        assert statuses.count(200) <= 500
        probe = _connect(server, "127.0.0.1")
        assert _served(probe) == 200
        probe.close()
    finally:
        err = server.stop()
    assert "Too many open files" not in err, err[-2000:]
    assert "Traceback" not in err, err[-2000:]
    assert sum("refused connections" in line for line in err.splitlines()) == 1
