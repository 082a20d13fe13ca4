"""Users inside a project: does one user's recall cost grow with the number of users?

    .venv/bin/python -m bench.users_bench [--users 10000] [--facts 100] [--messages 50]
                                          [--shared 10000] [--questions 200]
                                          [--store sqlite|dynamodb] [--latency-ms 5]

Two projects (embeddings off), each with `--shared` shared facts: the crowded one
holds `--users` users with `--facts` facts and `--messages` messages each, the
alone one holds one such user. The same user's recalls (hops 1 and 2, questions
naming the user's own entities and shared ones) are timed in both (p50/p95);
storing throughput is timed while the crowded project fills; then the user's
erasure (`POST /v1/erasures {"user": U}`, Memory.erase_user, and on DynamoDB the
worker's complete_erasure) is timed in the crowded one. The whole 10,000-user
project is 1.5 million rows and takes long: `--users` scales it down.

`--store dynamodb`: both projects in one table on moto's server (over HTTP), the
reads through botocore's client so that every call is counted (tests'
Meter), `--latency-ms` slept before each call of the recalls and the erasure (an
in-region round trip; none while filling); a recall's calls and waves (sequential
steps) are printed with its times. It prints figures and asserts none.

`--clone` (DynamoDB only): moto stores about 100 items a second over HTTP, so the
full project would take hours. With it, user0 and one template user are stored
through the adapter as above, and the other users are copies of the template's
items with its id replaced by theirs (in keys and values alike), put straight into
moto's table by the moto server itself (tests/moto_server.py, clone_partitions).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from taisce.adapters.sqlite.store import SqliteStore
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.domain.scope import scope
from taisce.service.memory import Memory

PREDICATES = ["likes", "works at", "lives in", "knows"]
# The template user of --clone: a word that occurs nowhere else in its items (the
# table holds no binary values), lower case as names are folded into keys.
TEMPLATE_USER = "clonetemplate"


def _facts(user: str, n: int, shared_names: int) -> list[dict[str, object]]:
    # The clones' template names its people without its id, as users do ("Mom"): two
    # users' "person 3" are two entities, and a copy shares the template's texts.
    prefix = "" if user == TEMPLATE_USER else f"{user} "
    out: list[dict[str, object]] = []
    for i in range(n):
        # A user's facts link their own entities to shared ones, so hop 2 crosses.
        out.append(
            {
                "subject": f"{prefix}person {i % 20}",
                "predicate": PREDICATES[i % len(PREDICATES)],
                "object": f"Shared place {i % shared_names}",
                "object_kind": "entity",
                "source_role": "user",
            }
        )
    return out


def _fill(memory: Memory, project: str, user: str | None, facts: list[dict[str, object]]) -> None:
    where = scope(project, user)
    for start in range(0, len(facts), 100):
        memory.store_facts(
            where, FactsRequest.model_validate({"facts": facts[start : start + 100]})
        )


def _messages(memory: Memory, project: str, user: str, n: int) -> None:
    who = "someone" if user == TEMPLATE_USER else user
    sent = [{"role": "user", "content": f"{who} says message {i} about home."} for i in range(n)]
    for start in range(0, n, 100):
        body = {"messages": sent[start : start + 100]}
        memory.store_messages(scope(project, user), MessagesRequest.model_validate(body))


def _user_names(users: int, args: argparse.Namespace) -> Iterator[str]:
    """The users stored through the adapter (the rest are cloned on --clone)."""
    if args.clone and users > 2:
        yield from ("user0", TEMPLATE_USER)
    else:
        yield from (f"user{u}" for u in range(users))


def _clone(args: argparse.Namespace, project: str, users: int) -> int:
    """The users past user0 and the template, as copies of the template's items."""
    import json
    import urllib.request

    from taisce.adapters.dynamodb.keys import project_prefix
    from tests.moto_server import CLONE_PATH

    put, chunk = 0, 200
    names = [f"user{u}" for u in range(1, users - 1)]
    for start in range(0, len(names), chunk):
        body = {
            "table": args.moto.table,
            "prefix": project_prefix(str(scope(project, TEMPLATE_USER))),
            "template": TEMPLATE_USER,
            "names": names[start : start + chunk],
        }
        request = urllib.request.Request(
            args.moto.endpoint + CLONE_PATH, data=json.dumps(body).encode(), method="POST"
        )
        with urllib.request.urlopen(request, timeout=3600) as answer:
            put += json.loads(answer.read())["put"]
        print(f"  cloned {start + len(body['names']):,} users, {put:,} items", flush=True)
    return put


def _store(memory: Memory, users: int, args: argparse.Namespace) -> tuple[Memory, float, int]:
    project = args.project_of[id(memory)]
    shared_names = max(1, args.shared // 10)
    shared = [
        {
            "subject": f"Shared place {i % shared_names}",
            "predicate": "is near",
            "object": f"Landmark {i}",
            "source_role": "user",
        }
        for i in range(args.shared)
    ]
    _fill(memory, project, None, shared)
    began, rows = time.perf_counter(), 0
    for user in _user_names(users, args):
        _fill(memory, project, user, _facts(user, args.facts, shared_names))
        _messages(memory, project, user, args.messages)
        rows += args.facts + args.messages
    throughput = rows / (time.perf_counter() - began)
    if args.clone and users > 2:
        began = time.perf_counter()
        items = _clone(args, project, users)
        print(f"cloned {users - 2:,} users: {items:,} items in {time.perf_counter() - began:.0f} s")
        last = f"user{users - 2}"
        question = "What about person 3?"
        found = memory.recall(
            scope(project, last), RecallRequest.model_validate({"question": question})
        )
        print(f"a cloned user's recall ({question!r}): {len(found.facts)} facts")
        rows += (users - 2) * (args.facts + args.messages)
    return memory, throughput, rows


def _recalls(
    memory: Memory, project: str, hops: int, n: int, meter: Any = None
) -> tuple[float, float, str]:
    times, calls, waves = [], [], []
    where = scope(project, "user0")
    for i in range(n):
        question = f"Where does user0 person {i % 20} go, and Shared place {i % 7}?"
        request = RecallRequest.model_validate({"question": question, "hops": hops})
        if meter is not None:
            meter.reset()
        began = time.perf_counter()
        memory.recall(where, request)
        times.append((time.perf_counter() - began) * 1000)
        if meter is not None:
            calls.append(sum(meter.sent.values()))
            waves.append(meter.waves())
    times.sort()
    counted = (
        f", calls p50 {statistics.median(calls):g}, waves p50 {statistics.median(waves):g}"
        if meter is not None
        else ""
    )
    return statistics.median(times), times[int(len(times) * 0.95) - 1], counted


@contextmanager
def _memories(args: argparse.Namespace) -> Iterator[tuple[Memory, Memory, Any]]:
    """The alone and the crowded project's Memory, and the DynamoDB call meter (None
    on the embedded store)."""
    limits = Limits(16_000, 200)
    if args.store == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            alone = Memory(SqliteStore(Path(folder) / "alone.sqlite3", mark_vectors=False), limits)
            crowded = Memory(
                SqliteStore(Path(folder) / "crowded.sqlite3", mark_vectors=False), limits
            )
            args.project_of = {id(alone): "bench", id(crowded): "bench"}
            yield alone, crowded, None
        return
    from taisce.adapters.dynamodb.store import DynamoDbStore
    from tests.contract.test_dynamodb_costs import Meter
    from tests.moto_server import CLONES, start_moto

    moto = start_moto(env={CLONES: "1"} if args.clone else None)
    args.moto = moto
    try:
        store = DynamoDbStore(
            moto.table, client=moto.client(), direct_reads=False, mark_vectors=False
        )
        meter = Meter(store.client)
        alone, crowded = Memory(store, limits), Memory(store, limits)
        args.project_of = {id(alone): "bench-alone", id(crowded): "bench-crowded"}
        yield alone, crowded, meter
    finally:
        moto.stop()


def _erase(memory: Memory, project: str) -> dict[str, int]:
    status = memory.erase_user(scope(project, "user0"))
    if status.status == "pending":  # DynamoDB: the worker completes it
        done = memory.complete_erasure(project, status.id)
        assert done is not None
        status = done
    return status.counts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--facts", type=int, default=100)
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--shared", type=int, default=10_000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--store", choices=("sqlite", "dynamodb"), default="sqlite")
    parser.add_argument("--latency-ms", type=float, default=5.0)
    parser.add_argument("--clone", action="store_true", help="DynamoDB: clone most users")
    args = parser.parse_args()
    if args.clone and args.store != "dynamodb":
        parser.error("--clone is for --store dynamodb")
    with _memories(args) as (alone, crowded, meter):
        _store(alone, 1, args)
        _, throughput, rows = _store(crowded, args.users, args)
        print(
            f"{args.store}: users {args.users} x ({args.facts} facts + {args.messages} "
            f"messages), {args.shared} shared facts"
        )
        stored = "through the adapter" if args.clone else f"over {rows:,} items"
        print(f"storing: {throughput:,.0f} items/s {stored} (batches of 100)")
        if meter is not None:
            meter.latency = args.latency_ms / 1000
            print(f"latency: {args.latency_ms:g} ms slept before each call from here on")
        for hops in (1, 2):
            a50, a95, a_calls = _recalls(
                alone, args.project_of[id(alone)], hops, args.questions, meter
            )
            c50, c95, c_calls = _recalls(
                crowded, args.project_of[id(crowded)], hops, args.questions, meter
            )
            print(
                f"recall hops {hops}: one user alone p50 {a50:.2f} ms p95 {a95:.2f} ms"
                f"{a_calls}; among {args.users} users p50 {c50:.2f} ms p95 {c95:.2f} ms"
                f"{c_calls} (ratio p50 {c50 / a50:.2f})"
            )
        if meter is not None:
            meter.reset()
        began = time.perf_counter()
        counts = _erase(crowded, args.project_of[id(crowded)])
        calls = f", {sum(meter.sent.values()):,} calls" if meter is not None else ""
        print(f"erasing user0: {(time.perf_counter() - began) * 1000:.0f} ms{calls}, {counts}")


if __name__ == "__main__":
    main()
