"""How `taisce serve` hands out its handler slots (local/sandboxes.py): a share (a
project) holds at most all slots but one, and runs one erasure at a time, the others
waiting their turn while its other requests and other projects go on. The slots here
are placeholders: what is tested is who gets one and when, not what runs in it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

from taisce.local.gateway import Gateway
from taisce.local.sandboxes import Sandboxes, _Share


def _sandboxes(count: int) -> Sandboxes:
    sandboxes = Sandboxes(Path("template.yaml"), count, cast(Gateway, None))
    sandboxes._idle = [cast(Any, object()) for _ in range(count)]
    return sandboxes


async def _granted(sandboxes: Sandboxes, share: _Share) -> asyncio.Task[Any]:
    task = asyncio.ensure_future(sandboxes._acquire(share))
    await asyncio.sleep(0)
    return task


def test_a_project_runs_one_erasure_at_a_time_and_its_other_requests_go_on() -> None:
    async def run() -> None:
        sandboxes = _sandboxes(4)
        first = await _granted(sandboxes, _Share("project a", heavy=True))
        second = await _granted(sandboxes, _Share("project a", heavy=True))
        other_erasure = await _granted(sandboxes, _Share("project b", heavy=True))
        write = await _granted(sandboxes, _Share("project a"))
        assert first.done() and not second.done()
        assert other_erasure.done() and write.done()  # another project; not an erasure
        sandboxes._release(first.result(), _Share("project a", heavy=True))
        await asyncio.sleep(0)
        assert second.done()  # its turn once the first is over

    asyncio.run(run())


def test_a_project_holds_every_slot_but_one() -> None:
    async def run() -> None:
        sandboxes = _sandboxes(4)
        mine = [await _granted(sandboxes, _Share("project a")) for _ in range(4)]
        assert [t.done() for t in mine] == [True, True, True, False]
        other = await _granted(sandboxes, _Share("project b"))
        assert other.done()
        mine[3].cancel()

    asyncio.run(run())
