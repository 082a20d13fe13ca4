"""Erasure memory benchmark: the worker's peak memory (RSS) erasing one entity from
projects of growing size on DynamoDB (moto's server over HTTP).

    .venv/bin/python -m bench.erasure_memory [--messages 10000 100000] [--modes paged whole]
                                             [--latency-ms 0] [--clone] [--seconds S]

For each size, a fresh moto server gets a project of `--messages` messages (two
sentences each, 1 in 100 naming "Atlas Example") and a tenth as many facts (1 in 100
naming it). Then a process of its own, as the worker is, accepts the erasure
(`request_erasure`, deferred) and completes it (`complete_erasure`): `paged` as the
code now plans it on DynamoDB (a page at a time, domain/erasure_pages.py), `whole` as it
planned before (every fact and message of the project read at once, then applied in
steps), each in a project of its own. The worker process reports its resident memory
before the erasure, its peak during it (the kernel's high-water mark, reset before the
erasure where Linux allows it), the time and its DynamoDB calls. moto's own memory
(the table) is not counted: on AWS it is DynamoDB's.

`--clone`: moto stores a few hundred items a second, so a million messages would take
most of an hour to store: the facts are stored as above, but only 10,000 messages,
whose ids carry a template word; the moto server itself then puts copies of their
items with the word replaced (tests/moto_server.py, clone_partitions) up to the size.
`--seconds S`: the erasure is given S seconds, as a worker invocation is (it stops
between steps when fewer than ERASURE_STEP_SECONDS are left and the next message goes
on from its cursor); the figures are then those of that first invocation.

It prints figures and asserts none: they belong to the machine.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from taisce.domain.controls import Limits
from taisce.domain.ingest import split_passages
from taisce.domain.model import ROLES, Fact, Message
from taisce.domain.names import normalize_name

NAME = "Atlas Example"
NOW = "2026-01-01T00:00:00Z"
TEXT = (
    "{name} wrote note {n} about the quarterly plan and the budget review. "
    "The follow-up meeting with the team is in the Galway office, as agreed in spring."
)
ROOT = Path(__file__).resolve().parents[1]


def _fact(n: int, subject: str, obj: str) -> Fact:
    return Fact(
        id=f"f{n}",
        subject=subject,
        subject_key=normalize_name(subject),
        predicate="knows",
        object=obj,
        object_kind="entity",
        object_key=normalize_name(obj),
        statement=f"{subject} knows {obj}",
        source_role=ROLES[n % 4],
        quote=None,
        context=None,
        message_id=None,
        valid_from=None,
        valid_to=None,
        recorded_at=NOW,
    )


# The template word of --clone's message ids: in no text, and no other id holds it.
TEMPLATE = "tpl0000x"
CLONED = 10_000


def seed(store: Any, project: str, messages: int, stored: int | None = None) -> None:
    """The project: `messages` messages and a tenth as many facts, 1 in 100 naming it.
    With `stored`, only that many messages are stored (ids holding TEMPLATE), for
    clone_messages to copy."""
    facts = [
        _fact(n, NAME if n % 100 == 0 else f"Person {n % 997}", f"Place {n % 211}")
        for n in range(messages // 10)
    ]
    prefix = f"{TEMPLATE}-" if stored else ""
    made = [
        Message(
            f"{prefix}m{n}",
            ROLES[n % 4],
            TEXT.format(name=NAME if n % 100 == 0 else "Someone Else", n=n),
            "chat",
            NOW,
            NOW,
        )
        for n in range(stored or messages)
    ]

    def put_messages(batch: list[Message]) -> None:
        store.put_messages(project, batch, [p for m in batch for p in split_passages(m)])

    with ThreadPoolExecutor(4) as pool:
        list(
            pool.map(
                lambda i: store.put_facts(project, facts[i : i + 100]), range(0, len(facts), 100)
            )
        )
        list(pool.map(lambda i: put_messages(made[i : i + 100]), range(0, len(made), 100)))


def clone_messages(moto: Any, project: str, messages: int) -> int:
    """Copies of the stored template messages' items (the message, its passages, its
    listing entry, its marks) until the project holds `messages`: ids tpl0001x-m…,
    tpl0002x-m… Every item naming the template word is copied, none other."""
    import urllib.request

    from taisce.adapters.dynamodb.keys import project_prefix
    from tests.moto_server import CLONE_PATH

    names = [f"tpl{k:04d}x" for k in range(1, messages // CLONED)]
    put = 0
    for start in range(0, len(names), 33):
        body = {
            "table": moto.table,
            "prefix": project_prefix(project),
            "template": TEMPLATE,
            "names": names[start : start + 33],
            "holding": True,
        }
        request = urllib.request.Request(
            moto.endpoint + CLONE_PATH, data=json.dumps(body).encode(), method="POST"
        )
        with urllib.request.urlopen(request, timeout=3600) as answer:
            put += json.loads(answer.read())["put"]
    return put


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """In the worker's own process: accept, then complete, the erasure."""
    from taisce.adapters.dynamodb.store import DynamoDbStore
    from taisce.domain.model import StoreCapabilities
    from taisce.service.memory import Memory
    from tests.moto_server import MotoDynamoDb

    moto = MotoDynamoDb(None, args.endpoint, args.table, Path("/dev/null"))  # type: ignore[arg-type]
    store = DynamoDbStore(args.table, client=moto.client())
    calls = [0]
    lock = threading.Lock()

    def sent(**_: Any) -> None:
        with lock:
            calls[0] += 1
        if args.latency_ms:
            time.sleep(args.latency_ms / 1000)

    store.client.meta.events.register("before-send.dynamodb", sent)
    memory = Memory(store, Limits(bundle_characters=16_000, max_rows=200))
    accepted = memory.request_erasure(args.project, NAME, defer=True)
    if args.mode == "whole":
        # The plan as it was made before: the whole project read at once.
        store.capabilities = StoreCapabilities(parallel_reads=True, defers_erasure=False)  # type: ignore[misc]
    gc.collect()
    before = _status_kb("VmRSS")
    try:  # reset the high-water mark to the current RSS (Linux 4.0+)
        Path("/proc/self/clear_refs").write_text("5")
        reset = True
    except OSError:
        reset = False
    calls[0] = 0
    started = time.perf_counter()
    given = None
    if args.seconds:
        given = lambda: args.seconds - (time.perf_counter() - started)  # noqa: E731
    done = memory.complete_erasure(args.project, accepted.id, given)
    seconds = time.perf_counter() - started
    assert done is not None and (done.status == "done" or given is not None)
    return {
        "status": done.status,
        "rss_before_mb": before / 1024,
        "peak_mb": _status_kb("VmHWM") / 1024,
        "peak_reset": reset,
        "seconds": seconds,
        "calls": calls[0],
        "counts": done.counts,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--modes", nargs="+", default=["paged", "whole"])
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--clone", action="store_true", help="store 10,000 messages, copy the rest")
    parser.add_argument(
        "--seconds", type=float, default=0.0, help="the erasure's time (0: to the end)"
    )
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--endpoint", help=argparse.SUPPRESS)
    parser.add_argument("--table", help=argparse.SUPPRESS)
    parser.add_argument("--project", help=argparse.SUPPRESS)
    parser.add_argument("--mode", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args)))
        return 0

    from taisce.evaluation.machine import describe_machine
    from tests.moto_server import CLONES, start_moto

    print(f"date: {datetime.now(UTC).isoformat(timespec='seconds')}")
    print(f"machine: {describe_machine()}")
    print(f"latency: {args.latency_ms:g} ms slept before each call of the erasure")
    if args.seconds:
        print(f"the erasure given {args.seconds:g} s, as a worker invocation (then: pending)")
    if args.clone:
        print(f"messages past {CLONED:,} put by moto as copies of the {CLONED:,} stored")
    print()
    print(
        "| messages | facts | plan | RSS before MB | peak RSS MB | seed s | erase s | calls "
        "| facts erased | messages masked | status |"
    )
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for size in args.messages:
        moto = start_moto(env={CLONES: "1"} if args.clone else None)
        try:
            for mode in args.modes:
                project = f"mem-{mode}-{size}"
                started = time.perf_counter()
                cloned = args.clone and size > CLONED
                seed(moto.store(), project, size, CLONED if cloned else None)
                if cloned:
                    clone_messages(moto, project, size)
                seeded = time.perf_counter() - started
                command = [
                    sys.executable, "-m", "bench.erasure_memory", "--measure",
                    "--endpoint", moto.endpoint, "--table", moto.table,
                    "--project", project, "--mode", mode, "--latency-ms", str(args.latency_ms),
                    "--seconds", str(args.seconds),
                ]  # fmt: skip
                out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                peak = f"{r['peak_mb']:.0f}" + ("" if r["peak_reset"] else " (process)")
                print(
                    f"| {size:,} | {size // 10:,} | {mode} | {r['rss_before_mb']:.0f} | {peak} "
                    f"| {seeded:.0f} | {r['seconds']:.1f} | {r['calls']:,} "
                    f"| {r['counts']['facts']:,} | {r['counts']['messages']:,} | {r['status']} |",
                    flush=True,
                )
        finally:
            moto.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
