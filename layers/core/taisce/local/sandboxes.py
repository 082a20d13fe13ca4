"""Handler processes for `taisce serve`, each like a Lambda execution environment:
its own interpreter, its own Powertools state, one request at a time.

Powertools keeps the current event on a class attribute shared by every resolver, so
two handlers may not run at once in one process; several processes run requests in
parallel instead, so that a slow request holds one process, not the server. The
server's own process is the first of them (its handler runs on a thread beside the
event loop, as the old threaded server ran them): a request it takes costs no process
switch, which on a busy machine is most of a request's latency. The others get their
invocations over a pipe, and the event loop waits for their replies without blocking.

Fairness: one share (a project: local/fairness.py) holds at most all processes but one
while others wait, so a project sending slow requests, through however many
credentials, cannot make another wait behind them; and runs one erasure at a time
(the rest wait their turn), so that its erasures leave CPUs to the others.

Stopping takes seconds whatever runs: a process still in a request after the grace
period is killed (SQLite rolls its write back; an erasure's pending record stays, and
the next server's worker completes it), and the server's own handler thread is left
behind (the caller exits without waiting for it).

SQLite is shared by the processes through its own locking (WAL, a busy timeout of
30 s on every connection; adapters/sqlite/file.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from .gateway import Gateway, Invocation, Reply, error_reply
from .routes import read_api

# Start and stop: how long a process may take to import its handlers, and to exit.
START_SECONDS = 120.0
STOP_SECONDS = 10.0
# How long a stopping server waits for a request still running in a handler slot.
STOP_GRACE_SECONDS = 2.0
# Erasures one share runs at once: each can take a CPU for seconds or minutes, so a
# project's erasures queue behind one another rather than taking every CPU.
HEAVY_PER_SHARE = 1


def _die_with_parent(parent: int) -> None:
    """A server killed with SIGKILL takes its processes with it (Linux), as it did
    when it was one process: none is left holding the data folder."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before prctl
        os._exit(1)
    # Ctrl-C in a terminal reaches the whole process group: the server stops its
    # processes itself, after the requests in flight.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _sandbox_main(conn: Connection, parent: int, template: str) -> None:
    _die_with_parent(parent)
    try:
        gateway = Gateway(read_api(Path(template)))
        gateway.warm()
        # Open the store now, as a Lambda's init phase would: opening writes the
        # schema, and the first request must not wait for the file's write lock.
        from ..api.wiring import services

        services()
    except BaseException as exc:
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", os.getpid()))
    while True:
        try:
            invocation = conn.recv()
        except (EOFError, OSError):
            return  # the server is gone
        if invocation is None:
            return
        conn.send(gateway.invoke(invocation))


def _worker_main(conn: Connection, parent: int) -> None:
    """The background worker (local/worker.py), once per server, in a process of its
    own so that its passes never hold the HTTP front's or a handler's interpreter."""
    _die_with_parent(parent)
    from ..api.wiring import services
    from .worker import Worker

    worker = Worker(services().memory)
    worker.start()
    sys.stderr.write(f"background worker running (process {os.getpid()}, one per server)\n")
    sys.stderr.flush()
    conn.send(("ready", os.getpid()))
    with contextlib.suppress(EOFError, OSError):
        conn.recv()  # None: stop
    worker.stop()
    worker.join(STOP_SECONDS)


class ProcessFailed(RuntimeError):
    pass


@dataclass(frozen=True)
class _Share:
    """Whose share a request counts against (a project: local/fairness.py), and
    whether it is heavy (an erasure, whose cost grows with what it reads)."""

    caller: str
    heavy: bool = False


def _receive(conn: Connection) -> asyncio.Future[Any]:
    """The next message on `conn`, read when it arrives, without blocking the loop."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    fd = conn.fileno()

    def ready() -> None:
        loop.remove_reader(fd)
        try:
            message = conn.recv()
        except (EOFError, OSError) as exc:
            if not future.done():
                future.set_exception(ProcessFailed(f"the process closed its pipe ({exc!r})"))
            return
        if not future.done():
            future.set_result(message)

    loop.add_reader(fd, ready)
    return future


class _Inline:
    """The server's own process as a handler slot: one handler at a time on one thread."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="taisce-handler")
        self._idle = threading.Event()
        self._idle.set()

    def call(self, invocation: Invocation) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        return loop.run_in_executor(self._thread, self._invoke, invocation)

    def _invoke(self, invocation: Invocation) -> Reply:
        self._idle.clear()
        try:
            return self.gateway.invoke(invocation)
        finally:
            self._idle.set()

    def stop(self, grace: float = STOP_SECONDS) -> bool:
        """Stop after the request in hand, waiting `grace` seconds at most; whether
        the thread was left in a request."""
        left = not self._idle.wait(grace)
        self._thread.shutdown(wait=False)
        return left

    def kill(self) -> None:
        self._thread.shutdown(wait=False)


class _Process:
    def __init__(self, target: Callable[..., None], *args: object) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(
            target=target, args=(child, os.getpid(), *args), name="taisce-handler", daemon=True
        )
        self.process.start()
        child.close()

    def call(self, invocation: Invocation) -> asyncio.Future[Any]:
        """Send `invocation`; the future holds the reply (OSError: the process is gone)."""
        self.conn.send(invocation)
        return _receive(self.conn)

    async def started(self) -> None:
        try:
            state, detail = await asyncio.wait_for(_receive(self.conn), START_SECONDS)
        except (TimeoutError, ProcessFailed) as exc:
            self.kill()
            raise ProcessFailed(f"a handler process did not start: {exc!r}") from exc
        if state != "ready":
            self.kill()
            raise ProcessFailed(f"a handler process could not load its handlers: {detail}")

    def stop(self, grace: float = STOP_SECONDS) -> bool:
        """Stop after the request in hand, killed after `grace` seconds (a write in
        progress rolls back)."""
        with contextlib.suppress(OSError):
            self.conn.send(None)
        self.process.join(grace)
        self.kill()
        return False

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
            self.process.join(STOP_SECONDS)
        self.conn.close()


Slot = _Inline | _Process


class Sandboxes:
    """`count` handler slots (this process, then `count - 1` handler processes) and the
    queue of invocations waiting for one."""

    def __init__(self, template: Path, count: int, gateway: Gateway) -> None:
        if count < 1:
            raise ValueError("at least one handler process is needed")
        self.template = template
        self.count = count
        # One share (a project) may hold every slot but one while others wait.
        self.per_caller = max(1, count - 1)
        self._inline = _Inline(gateway)
        self._idle: list[Slot] = []
        self._busy: Counter[str] = Counter()
        self._heavy: Counter[str] = Counter()  # erasures running, per share
        self._waiting: deque[tuple[_Share, asyncio.Future[Slot]]] = deque()
        self._all: set[_Process] = set()
        self._closing = False

    async def start(self) -> None:
        """Start every process and wait until each has imported its handlers (a broken
        handler stops the server here, as `warm` did). The caller has warmed the
        gateway of this process."""
        self._idle.append(self._inline)
        started = [self._spawn() for _ in range(self.count - 1)]
        results = await asyncio.gather(*(p.started() for p in started), return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        if failures:
            for process in started:
                process.kill()
            raise failures[0]
        self._idle.extend(started)

    def _spawn(self) -> _Process:
        process = _Process(_sandbox_main, str(self.template))
        self._all.add(process)
        return process

    async def invoke(self, caller: str, invocation: Invocation, *, heavy: bool = False) -> Reply:
        """Run `invocation` in a slot, within `caller`'s share; `heavy` (an erasure):
        at most HEAVY_PER_SHARE of them per share at once."""
        share = _Share(caller, heavy)
        slot = await self._acquire(share)
        try:
            reply = slot.call(invocation)
        except OSError:
            assert isinstance(slot, _Process)
            self._lost(slot, share)
            return _failed(invocation)
        reply.add_done_callback(lambda done: self._finished(slot, share, done))
        try:
            # Shielded: a cancelled request (the server stopping) leaves the slot busy
            # until its reply is read, never handing it a second invocation.
            answer = await asyncio.shield(reply)
        except Exception:  # the process died (the gateway itself answers every failure)
            return _failed(invocation)
        assert isinstance(answer, Reply)
        return answer

    async def _acquire(self, share: _Share) -> Slot:
        if self._closing:
            raise ProcessFailed("the server is stopping")
        ticket: asyncio.Future[Slot] = asyncio.get_running_loop().create_future()
        self._waiting.append((share, ticket))
        self._hand_out()  # at once, when a process is idle and the caller under its share
        try:
            return await ticket
        except asyncio.CancelledError:
            if ticket.done() and not ticket.cancelled():
                self._release(ticket.result(), share)  # handed over as it was cancelled
            else:
                self._waiting.remove((share, ticket))
            raise

    def _let_go(self, share: _Share) -> None:
        for counts in (self._busy, self._heavy) if share.heavy else (self._busy,):
            counts[share.caller] -= 1
            if counts[share.caller] <= 0:
                del counts[share.caller]

    def _release(self, slot: Slot, share: _Share) -> None:
        self._let_go(share)
        if self._closing:
            return
        self._idle.append(slot)
        self._hand_out()

    def _hand_out(self) -> None:
        """Give idle processes to the oldest waiting invocations whose caller is under
        its share; a caller at its share lets later callers go first."""
        self._prune_dead()
        for entry in list(self._waiting):
            if not self._idle:
                return
            share, ticket = entry
            if ticket.done() or not self._under(share):
                continue
            self._waiting.remove(entry)
            self._busy[share.caller] += 1
            if share.heavy:
                self._heavy[share.caller] += 1
            # This process first: no process switch on the way.
            slot = self._inline if self._inline in self._idle else self._idle[-1]
            self._idle.remove(slot)
            ticket.set_result(slot)

    def _under(self, share: _Share) -> bool:
        if self._busy[share.caller] >= self.per_caller:
            return False
        return not share.heavy or self._heavy[share.caller] < HEAVY_PER_SHARE

    def _finished(self, slot: Slot, share: _Share, reply: asyncio.Future[Any]) -> None:
        if isinstance(slot, _Process) and (reply.cancelled() or reply.exception() is not None):
            self._lost(slot, share)
        else:
            self._release(slot, share)

    def _prune_dead(self) -> None:
        """Idle processes that died while waiting (killed, out of memory) are replaced
        before they are handed a request, which would otherwise be answered 500; and
        one left behind the others in the idle list would never be noticed."""
        for slot in list(self._idle):
            if isinstance(slot, _Process) and not slot.process.is_alive():
                self._idle.remove(slot)
                self._replace(slot)

    def _lost(self, process: _Process, share: _Share) -> None:
        """A process died mid-request (killed, out of memory): answer 500 for that
        request and start another in its place."""
        self._let_go(share)
        self._replace(process)

    def _replace(self, process: _Process) -> None:
        sys.stderr.write("a handler process died; starting another\n")
        self._all.discard(process)
        process.kill()
        if self._closing:
            return
        replacement = self._spawn()

        async def join() -> None:
            try:
                await replacement.started()
            except ProcessFailed as exc:
                self._all.discard(replacement)
                sys.stderr.write(f"{exc}\n")
                return
            if self._closing:
                # close() stops it: it is in _all from _spawn, and close() stops all of
                # them on its threads (stopping it here too closed its pipe twice at once).
                return
            self._idle.append(replacement)
            self._hand_out()

        asyncio.get_running_loop().create_task(join())

    async def close(self, grace: float = STOP_GRACE_SECONDS) -> bool:
        """Stop every process: idle ones at once, busy ones after their reply or after
        `grace` seconds, killed. Returns whether this process's handler thread was left
        in a request (the caller then exits without waiting for it)."""
        self._closing = True
        for _, ticket in self._waiting:
            if not ticket.done():
                ticket.set_exception(ProcessFailed("the server is stopping"))
        self._waiting.clear()
        slots: list[Slot] = [*self._all, self._inline]
        left = await asyncio.gather(*(asyncio.to_thread(p.stop, grace) for p in slots))
        self._all.clear()
        self._idle.clear()
        return any(left)


def _failed(invocation: Invocation) -> Reply:
    return error_reply(500, "internal", "the server failed", request_id=invocation.request_id)


class BackgroundWorker:
    """The worker's process: started once per server, whatever the handler count."""

    def __init__(self) -> None:
        self._process = _Process(_worker_main)

    async def started(self) -> None:
        await self._process.started()

    def stop(self, grace: float = STOP_SECONDS) -> None:
        self._process.stop(grace)
