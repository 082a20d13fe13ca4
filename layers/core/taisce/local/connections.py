"""How many connections `taisce serve` holds open: at most `per_client` from one
client address and `total` in all, the total below the process's descriptor limit
(RLIMIT_NOFILE) so that accepting never fails with "Too many open files". A
connection over either limit is answered `503 unavailable` in the API's shape and
closed at once; the refusals are logged at most once a minute, as a count."""

from __future__ import annotations

import resource
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

# Descriptors kept for everything but client connections: the listening socket, the
# pipes to the handler processes, the SQLite files, the event loop's own.
RESERVED_FILES = 64
FILES_PER_PROCESS = 4
PER_CLIENT = 100
# The listening socket's queue, which is also how many connections the event loop
# accepts in one go. A connection accepted on one turn of the loop gets its protocol on
# the next, is counted or refused on the one after, and a refused one's descriptor is
# freed on the third; each of those turns may accept a batch first. So three batches
# can be open beyond the counted connections, and four are kept free (seen: with two,
# a loaded host ran out of descriptors under a flood of connections).
BACKLOG = 64
BATCHES_KEPT_FREE = 4
# Refusals are logged at most this often.
LOG_SECONDS = 60.0


def total_limit(processes: int, files: int | None = None) -> int:
    """The most connections this process can hold open and still open its files."""
    if files is None:
        files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if files == resource.RLIM_INFINITY:
            files = 1 << 20
    kept = RESERVED_FILES + FILES_PER_PROCESS * processes + BATCHES_KEPT_FREE * BACKLOG
    return max(1, files - kept)


def _write_line(line: str) -> None:
    sys.stderr.write(line + "\n")


@dataclass
class ConnectionLimits:
    per_client: int
    total: int
    clock: Callable[[], float] = time.monotonic
    log: Callable[[str], None] = _write_line
    _open: Counter[str] = field(default_factory=Counter)
    _count: int = 0
    _refused: Counter[str] = field(default_factory=Counter)
    _logged_at: float | None = None

    def open(self, client: str) -> str | None:
        """Count a new connection from `client`; or, over a limit, say why it is
        refused (it is then not counted)."""
        if self._count >= self.total:
            return self._refuse("the server", f"the server holds {self.total} connections")
        if self._open[client] >= self.per_client:
            return self._refuse(
                "one client", f"one client may hold {self.per_client} connections at once"
            )
        self._open[client] += 1
        self._count += 1
        return None

    def close(self, client: str) -> None:
        self._open[client] -= 1
        if self._open[client] <= 0:
            del self._open[client]
        self._count -= 1

    def _refuse(self, which: str, reason: str) -> str:
        self._refused[which] += 1
        now = self.clock()
        if self._logged_at is None or now - self._logged_at >= LOG_SECONDS:
            counts = ", ".join(
                f"{n} over the limit of {w}" for w, n in sorted(self._refused.items())
            )
            since = "" if self._logged_at is None else f" in the last {now - self._logged_at:.0f} s"
            self.log(f"(no route) 503 refused connections{since}: {counts} (logged once a minute)")
            self._refused.clear()
            self._logged_at = now
        return f"too many connections: {reason}; try again shortly"
