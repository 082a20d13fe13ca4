"""Keep a test server's pipes read: `taisce serve` writes an access line per request
to stderr (and Powertools logs to stdout); an unread pipe fills at 64 KiB, about
2,000 requests, and then blocks the server on its next write."""

from __future__ import annotations

import queue
import threading
from typing import IO, TextIO

from tests.server import LocalServer


def _read(stream: TextIO, into: list[str]) -> None:
    try:
        for line in iter(stream.readline, ""):
            into.append(line)
    except (OSError, ValueError):
        pass  # closed by stop()


def lines_into(stream: IO[str], into: queue.Queue[str | None]) -> None:
    """Each line of the stream into the queue as it comes, then None when it ends."""
    try:
        for line in iter(stream.readline, ""):
            into.put(line.rstrip("\n"))
    except (OSError, ValueError):
        pass
    into.put(None)


def drain(server: LocalServer) -> list[str]:
    """Read the server's stdout and stderr from now on; returns the lines read."""
    lines: list[str] = []
    for stream in (server.process.stdout, server.process.stderr):
        if stream is not None:
            threading.Thread(target=_read, args=(stream, lines), daemon=True).start()
    return lines
