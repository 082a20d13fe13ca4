"""Users inside a project: does one user's recall cost grow with the number of users?

    .venv/bin/python -m bench.users_bench [--users 10000] [--facts 100] [--messages 50]
                                          [--shared 10000] [--questions 200]

Two embedded stores (SQLite, embeddings off), each with `--shared` shared facts:
the crowded one holds `--users` users with `--facts` facts and `--messages`
messages each, the alone one holds one such user. The same user's recalls (hops 1
and 2, questions naming the user's own entities and shared ones) are timed in both
(p50/p95); storing throughput is timed while the crowded store fills; then the
user's erasure (`POST /v1/erasures {"user": U}`, Memory.erase_user) is timed in the
crowded store. The whole 10,000-user project is 1.5 million rows and takes long:
`--users` scales it down. It prints figures and asserts none.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from taisce.adapters.sqlite.store import SqliteStore
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.domain.scope import scope
from taisce.service.memory import Memory

PREDICATES = ["likes", "works at", "lives in", "knows"]


def _facts(prefix: str, n: int, shared_names: int) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i in range(n):
        # A user's facts link their own entities to shared ones, so hop 2 crosses.
        out.append(
            {
                "subject": f"{prefix} person {i % 20}",
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
    sent = [{"role": "user", "content": f"{user} says message {i} about home."} for i in range(n)]
    for start in range(0, n, 100):
        body = {"messages": sent[start : start + 100]}
        memory.store_messages(scope(project, user), MessagesRequest.model_validate(body))


def _store(path: Path, users: int, args: argparse.Namespace) -> tuple[Memory, float, int]:
    memory = Memory(SqliteStore(path, mark_vectors=False), Limits(16_000, 200))
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
    _fill(memory, "bench", None, shared)
    began, rows = time.perf_counter(), 0
    for u in range(users):
        user = f"user{u}"
        _fill(memory, "bench", user, _facts(user, args.facts, shared_names))
        _messages(memory, "bench", user, args.messages)
        rows += args.facts + args.messages
    return memory, rows / (time.perf_counter() - began), rows


def _recalls(memory: Memory, hops: int, n: int) -> tuple[float, float]:
    times = []
    where = scope("bench", "user0")
    for i in range(n):
        question = f"Where does user0 person {i % 20} go, and Shared place {i % 7}?"
        request = RecallRequest.model_validate({"question": question, "hops": hops})
        began = time.perf_counter()
        memory.recall(where, request)
        times.append((time.perf_counter() - began) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--facts", type=int, default=100)
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--shared", type=int, default=10_000)
    parser.add_argument("--questions", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        alone, _, _ = _store(Path(folder) / "alone.sqlite3", 1, args)
        crowded, throughput, rows = _store(Path(folder) / "crowded.sqlite3", args.users, args)
        print(
            f"users {args.users} x ({args.facts} facts + {args.messages} messages), "
            f"{args.shared} shared facts"
        )
        print(f"storing: {throughput:,.0f} items/s over {rows:,} items (batches of 100)")
        for hops in (1, 2):
            a50, a95 = _recalls(alone, hops, args.questions)
            c50, c95 = _recalls(crowded, hops, args.questions)
            print(
                f"recall hops {hops}: one user alone p50 {a50:.2f} ms p95 {a95:.2f} ms; "
                f"among {args.users} users p50 {c50:.2f} ms p95 {c95:.2f} ms "
                f"(ratio p50 {c50 / a50:.2f})"
            )
        began = time.perf_counter()
        counts = crowded.erase_user(scope("bench", "user0"))
        print(f"erasing user0: {(time.perf_counter() - began) * 1000:.0f} ms, {counts.counts}")


if __name__ == "__main__":
    main()
