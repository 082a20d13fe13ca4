"""Recall benchmark: storing throughput, and recall latency as the store grows.

    .venv/bin/python -m bench.recall_bench [--sizes 1000,10000,100000] [--recalls N]
                                           [--json FILE] [--quick] [--profile]

For each size, in a fresh data folder, a synthetic graph of facts (people,
organisations, places and projects; most entities have a handful of facts, a few
hubs have many) and a set of messages are stored through the local gateway: the
Lambda authorizer, then the Powertools handler, as `taisce serve` runs them. Then
questions naming one or two known entities are recalled with hops 1 and hops 2,
through the gateway and directly on the domain (`Memory.recall`), interleaved in
the same run, so the handler and event overhead shows as a ratio.

It prints figures and asserts none: timings belong to the machine. SQL statements
per recall and facts touched are counted on the store's own connection (sqlite3's
trace callback, and a wrapper on the store instance) in a separate pass, so that
counting adds nothing to the timed recalls. No taisce code is changed.

The synthetic memory is bench/corpus.py.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.corpus import make_corpus, make_questions
from taisce.adapters.sqlite.store import SqliteStore
from taisce.api.bodies import recall as recall_body
from taisce.api.wiring import services
from taisce.credentials import new_credential_id, new_secret, secret_hash
from taisce.domain.controls import RecallRequest
from taisce.domain.model import ROLES, Credential
from taisce.evaluation.machine import describe_machine
from taisce.local.gateway import Gateway, Reply
from taisce.local.routes import read_api
from taisce.settings import load_settings

TEMPLATE = Path(__file__).resolve().parents[1] / "template.yaml"
FULL_SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 5_000)
BATCH = 100
PROJECT = "bench"
SOURCE_IP = "127.0.0.1"

# -- measuring ----------------------------------------------------------------------


def percentiles(values: Sequence[float]) -> dict[str, float]:
    if len(values) < 2:
        only = values[0] if values else float("nan")
        return {"p50": only, "p95": only, "p99": only}
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": statistics.median(values), "p95": cuts[94], "p99": cuts[98]}


def _batches(items: Sequence[dict[str, Any]]) -> Iterator[Sequence[dict[str, Any]]]:
    for i in range(0, len(items), BATCH):
        yield items[i : i + BATCH]


@dataclass
class Client:
    gateway: Gateway
    headers: dict[str, str]

    def post(self, target: str, payload: dict[str, Any], expect: int) -> tuple[float, Reply]:
        body = json.dumps(payload).encode("utf-8")
        started = time.perf_counter()
        reply = self.gateway.handle("POST", target, self.headers, body, SOURCE_IP)
        elapsed = time.perf_counter() - started
        if reply.status != expect:
            raise RuntimeError(f"POST {target}: {reply.status} {reply.body[:300]!r}")
        return elapsed, reply


def store_all(
    client: Client, target: str, key: str, items: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    expect = 201 if key == "facts" else 202
    times = [client.post(target, {key: list(batch)}, expect)[0] for batch in _batches(items)]
    total = sum(times)
    return {
        "count": len(items),
        "seconds": total,
        "per_second": len(items) / total if total else float("nan"),
        "batch_ms": {k: v * 1000 for k, v in percentiles(times).items()},
    }


class _Counting:
    """Counts SQL statements (trace callback) and facts read (a wrapper on the
    store instance's per-key scan) while installed. Taisce code is untouched."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store
        self.statements = 0
        self.facts = 0

    def _trace(self, _sql: str) -> None:
        self.statements += 1

    def __enter__(self) -> _Counting:
        scan = self.store.fact_store._facts_of_key

        def counted(*args: Any, **kwargs: Any) -> Iterator[Any]:
            for fact in scan(*args, **kwargs):
                self.facts += 1
                yield fact

        self.store.fact_store._facts_of_key = counted  # type: ignore[method-assign]
        self.store.file.db().set_trace_callback(self._trace)
        return self

    def __exit__(self, *_: object) -> None:
        self.store.file.db().set_trace_callback(None)
        del self.store.fact_store._facts_of_key

    def take(self) -> tuple[int, int]:
        taken = (self.statements, self.facts)
        self.statements = self.facts = 0
        return taken


def _mean_max(values: Sequence[int]) -> dict[str, float]:
    return {"mean": statistics.fmean(values), "max": max(values)}


def _recall_figures(
    client: Client,
    store: SqliteStore,
    questions: Sequence[str],
    warmup: int,
    hops: int,
    profile: cProfile.Profile | None,
) -> dict[str, Any]:
    memory = services().memory
    payloads = [{"question": q, "hops": hops, "source_roles": list(ROLES)} for q in questions]
    bodies = [json.dumps(p).encode("utf-8") for p in payloads]
    requests = [RecallRequest.model_validate(p) for p in payloads]
    gateway_times: list[float] = []
    # CPU time of the recall's thread: on a busy machine, wall time also counts the
    # time spent waiting for a core; CPU time is the recall's own work.
    gateway_cpu: list[float] = []
    domain_times: list[float] = []
    returned: list[int] = []
    truncated = 0
    handle = client.gateway.handle
    headers = client.headers
    for i, (body, request) in enumerate(zip(bodies, requests, strict=True)):
        started = time.perf_counter()
        direct = recall_body(memory.recall(PROJECT, request))
        domain = time.perf_counter() - started
        started, cpu = time.perf_counter(), time.thread_time()
        reply = handle("POST", "/v1/recalls", headers, body, SOURCE_IP)
        through, cpu = time.perf_counter() - started, time.thread_time() - cpu
        if reply.status != 200:
            raise RuntimeError(f"recall: {reply.status} {reply.body[:300]!r}")
        answer = json.loads(reply.body)
        if len(answer["facts"]) != len(direct["facts"]):
            raise RuntimeError(f"gateway and domain disagree on {questions[i]!r}")
        if i < warmup:
            continue
        domain_times.append(domain)
        gateway_times.append(through)
        gateway_cpu.append(cpu)
        returned.append(len(answer["facts"]))
        truncated += bool(answer["truncated"])
    timed = bodies[warmup:]
    domain_counts: list[tuple[int, int]] = []
    gateway_statements: list[int] = []
    with _Counting(store) as counting:
        for body, request in zip(timed, requests[warmup:], strict=True):
            memory.recall(PROJECT, request)
            domain_counts.append(counting.take())
            handle("POST", "/v1/recalls", headers, body, SOURCE_IP)
            gateway_statements.append(counting.take()[0])
    if profile is not None:
        profile.enable()
        for body in timed:
            handle("POST", "/v1/recalls", headers, body, SOURCE_IP)
        profile.disable()
    gateway_ms = {k: v * 1000 for k, v in percentiles(gateway_times).items()}
    domain_ms = {k: v * 1000 for k, v in percentiles(domain_times).items()}
    return {
        "hops": hops,
        "recalls": len(timed),
        "gateway_ms": gateway_ms,
        "domain_ms": domain_ms,
        "gateway_cpu_ms": {k: v * 1000 for k, v in percentiles(gateway_cpu).items()},
        "gateway_over_domain_p50": gateway_ms["p50"] / domain_ms["p50"],
        "facts_returned_mean": statistics.fmean(returned),
        "truncated_share": truncated / len(timed),
        "sql_statements_domain": _mean_max([s for s, _ in domain_counts]),
        "sql_statements_gateway": _mean_max(gateway_statements),
        "facts_touched": _mean_max([f for _, f in domain_counts]),
    }


# Questions built to make name matching costly (issue 15): a stored name repeated
# until the question is 1,000 to 10,000 code points long, and as long questions that
# name nothing, beside ordinary ones. "😀" itself is no longer a name (no letter or
# digit), so the repeated name is "x😀": two tokens, with no space between repeats.
ADVERSARIAL_LENGTHS = (1_000, 2_500, 5_000, 10_000)
ADVERSARIAL_TIMES = 5


def _adversarial_figures(client: Client, ordinary: Sequence[str]) -> list[dict[str, Any]]:
    """Gateway recall ms (median of a few) per question kind, in the same run."""
    fact = {"subject": "x😀", "predicate": "means", "object": "joy", "source_role": "user"}
    client.post("/v1/facts", {"facts": [fact]}, 201)
    cases: list[tuple[str, list[str]]] = [("ordinary (1-2 names)", list(ordinary))]
    cases += [
        (f"x😀 repeated, {n:,} code points (a stored name)", ["x😀" * (n // 2)])
        for n in ADVERSARIAL_LENGTHS
    ]
    cases.append(("😀 x 10,000 (names nothing)", ["😀" * 10_000]))
    words = " ".join(f"w{n}" for n in range(2_000))[:10_000]
    cases.append(("10,000 code points of distinct words", [words]))
    rows = []
    for label, questions in cases:
        times: list[float] = []
        for question in questions:
            payload = {"question": question, "source_roles": list(ROLES)}
            for _ in range(ADVERSARIAL_TIMES):
                times.append(client.post("/v1/recalls", payload, 200)[0])
        rows.append({"question": label, "ms_p50": statistics.median(times) * 1000})
    return rows


def _folder_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.iterdir() if p.is_file()) / 1e6


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run_size(
    gateway: Gateway,
    n_facts: int,
    args: argparse.Namespace,
    profile: cProfile.Profile | None,
) -> dict[str, Any]:
    started = time.perf_counter()
    corpus = make_corpus(n_facts, args.messages, args.seed + n_facts)
    folder = Path(tempfile.mkdtemp(prefix=f"taisce-bench-{n_facts}-"))
    os.environ["TAISCE_DATA_DIR"] = str(folder)
    services.cache_clear()
    try:
        store = services().memory.store
        assert isinstance(store, SqliteStore), "the benchmark measures the embedded store"
        secret = new_secret()
        created = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        store.add_credential(
            Credential(new_credential_id(), PROJECT, "bench", created), secret_hash(secret)
        )
        client = Client(
            gateway, {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
        )
        _log(f"[{n_facts} facts] storing {len(corpus.facts)} facts and "
             f"{len(corpus.messages)} messages")  # fmt: skip
        facts = store_all(client, "/v1/facts", "facts", corpus.facts)
        messages = store_all(client, "/v1/messages", "messages", corpus.messages)
        passages = store.file.db().execute("SELECT count(*) FROM passages").fetchone()[0]
        messages["passages"] = passages
        messages["passages_per_second"] = passages / messages["seconds"]
        degrees = sorted(corpus.degree.values())
        rng = random.Random(args.seed)
        questions = make_questions(rng, corpus.known(), args.warmup + args.recalls)
        recall = []
        for hops in (1, 2):
            _log(f"[{n_facts} facts] {len(questions)} recalls with hops {hops}")
            recall.append(
                _recall_figures(
                    client, store, questions, args.warmup, hops, profile if hops == 2 else None
                )
            )
        _log(f"[{n_facts} facts] adversarial questions")
        adversarial = _adversarial_figures(client, questions[: ADVERSARIAL_TIMES * 2])
        store.close()
        return {
            "facts": n_facts,
            "entities": len(corpus.degree),
            "degree": {
                "median": statistics.median(degrees),
                "p99": degrees[min(len(degrees) - 1, int(len(degrees) * 0.99))],
                "max": degrees[-1],
            },
            "store_facts": facts,
            "store_messages": messages,
            "database_mb": _folder_mb(folder),
            "recall": recall,
            "adversarial": adversarial,
            "seconds": time.perf_counter() - started,
        }
    finally:
        services.cache_clear()
        shutil.rmtree(folder, ignore_errors=True)


# -- reporting ----------------------------------------------------------------------


def _f(value: float, digits: int = 2) -> str:
    return f"{value:,.{digits}f}"


def markdown(report: dict[str, Any]) -> str:
    m, s, load = report["machine"], report["settings"], report["load_average_1min"]
    lines = [
        "## Taisce recall benchmark",
        "",
        f"- date: {report['date']}",
        f"- machine: {m['platform']}, {m['cpu']}, {m['cpu_count']} CPUs, "
        f"Python {m['python']}, SQLite {m['sqlite']}; load average (1 min) "
        f"{_f(load['before'])} before, {_f(load['after'])} after",
        f"- settings: embedded store, embeddings {s['embeddings']}, "
        f"bundle {s['bundle_characters']} characters, max_rows {s['max_rows']}; "
        f"{s['recalls']} recalls per row after {s['warmup']} warm-up, seed {s['seed']}; "
        f"peak RSS {_f(report['peak_rss_mb'], 0)} MB, total {_f(report['seconds'], 1)} s",
        "",
        "### Storing (through the gateway: authorizer, then the Powertools handler; "
        f"batches of {BATCH})",
        "",
        "| facts | entities | entity degree median / p99 / max | facts/s | fact batch p50 ms "
        "| messages | messages/s | passages | passages/s | database MB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size in report["sizes"]:
        d, fa, me = size["degree"], size["store_facts"], size["store_messages"]
        lines.append(
            f"| {size['facts']:,} | {size['entities']:,} | {d['median']:g} / {d['p99']} / "
            f"{d['max']} | {_f(fa['per_second'], 0)} | {_f(fa['batch_ms']['p50'])} "
            f"| {me['count']:,} | {_f(me['per_second'], 0)} | {me['passages']:,} "
            f"| {_f(me['passages_per_second'], 0)} | {_f(size['database_mb'], 1)} |"
        )
    lines += [
        "",
        "### Recall (questions naming 1-2 known entities; source_roles all four)",
        "",
        "gateway = event, authorizer, Powertools handler, JSON; domain = `Memory.recall`. "
        "SQL statements and facts touched are per domain recall; the gateway adds the "
        "authorizer's credential look-up.",
        "",
        "gateway CPU = the recall thread's CPU time (time.thread_time) through the gateway: "
        "on a busy machine wall time also counts waiting for a core.",
        "",
        "| facts | hops | gateway p50 / p95 / p99 ms | gateway CPU p50 / p95 ms "
        "| domain p50 / p95 / p99 ms | gateway ÷ domain (p50) | facts returned (mean) | truncated "
        "| SQL statements mean / max (gateway mean) | facts touched mean / max |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size in report["sizes"]:
        for r in size["recall"]:
            g, dm = r["gateway_ms"], r["domain_ms"]
            sq, sg, ft = r["sql_statements_domain"], r["sql_statements_gateway"], r["facts_touched"]
            lines.append(
                f"| {size['facts']:,} | {r['hops']} "
                f"| {_f(g['p50'])} / {_f(g['p95'])} / {_f(g['p99'])} "
                f"| {_f(r['gateway_cpu_ms']['p50'])} / {_f(r['gateway_cpu_ms']['p95'])} "
                f"| {_f(dm['p50'])} / {_f(dm['p95'])} / {_f(dm['p99'])} "
                f"| {_f(r['gateway_over_domain_p50'], 1)}x | {_f(r['facts_returned_mean'], 1)} "
                f"| {_f(100 * r['truncated_share'], 0)}% "
                f"| {_f(sq['mean'], 1)} / {sq['max']} ({_f(sg['mean'], 1)}) "
                f"| {_f(ft['mean'], 1)} / {ft['max']} |"
            )
    lines += [
        "",
        "### Adversarial questions (gateway, hops 1, median ms of "
        f"{ADVERSARIAL_TIMES} recalls each; a fact about x😀 stored)",
        "",
        "| facts | question | ms (p50) | ÷ ordinary |",
        "|---:|---|---:|---:|",
    ]
    for size in report["sizes"]:
        rows = size["adversarial"]
        base = rows[0]["ms_p50"]
        for row in rows:
            lines.append(
                f"| {size['facts']:,} | {row['question']} | {_f(row['ms_p50'])} "
                f"| {_f(row['ms_p50'] / base, 1)}x |"
            )
    return "\n".join(lines)


def _print_profile(n_facts: int, profile: cProfile.Profile) -> None:
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out).strip_dirs()
    stats.sort_stats("cumulative").print_stats(30)
    stats.sort_stats("tottime").print_stats(20)
    _log(f"[{n_facts} facts] profile of the hops-2 gateway recalls\n{out.getvalue()}")


def _parse_sizes(text: str) -> list[int]:
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of integers: {text!r}") from None
    if not sizes or min(sizes) < 10:
        raise argparse.ArgumentTypeError("sizes must be integers of at least 10")
    return sizes


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.recall_bench",
        description="Print storing throughput and recall latency for growing stores.",
    )
    parser.add_argument("--sizes", type=_parse_sizes, help="facts per store, e.g. 1000,10000")
    parser.add_argument("--recalls", type=int, help="timed recalls per row (default 500)")
    parser.add_argument("--warmup", type=int, help="untimed recalls first (default 50)")
    parser.add_argument("--messages", type=int, help="messages stored per size (default 2000)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("--quick", action="store_true", help="sizes 1000,5000 only, for CI")
    parser.add_argument(
        "--embeddings",
        choices=("none", "local"),
        default="none",
        help="the embedding model (default none: step 1, as this benchmark measures)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="profile the hops-2 gateway recalls at the largest size (to stderr)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    quick = args.quick
    args.sizes = args.sizes or list(QUICK_SIZES if quick else FULL_SIZES)
    args.recalls = args.recalls or 500
    args.warmup = 50 if args.warmup is None else args.warmup
    args.messages = args.messages or 2_000
    if args.recalls < 2 or args.warmup < 0 or args.messages < 1:
        print("error: --recalls must be at least 2, --messages at least 1", file=sys.stderr)
        return 2

    os.environ["TAISCE_EMBEDDINGS"] = args.embeddings
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    gateway = Gateway(read_api(TEMPLATE))
    gateway.warm()
    sizes = []
    data_dir = os.environ.get("TAISCE_DATA_DIR")
    try:
        for n in args.sizes:
            profile = cProfile.Profile() if args.profile and n == max(args.sizes) else None
            sizes.append(run_size(gateway, n, args, profile))
            if profile is not None:
                _print_profile(n, profile)
    finally:
        if data_dir is None:
            os.environ.pop("TAISCE_DATA_DIR", None)
        else:
            os.environ["TAISCE_DATA_DIR"] = data_dir
    settings = load_settings()
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "machine": describe_machine(),
        "settings": {
            "embeddings": settings.embeddings,
            "bundle_characters": settings.bundle_characters,
            "max_rows": settings.max_rows,
            "recalls": args.recalls,
            "warmup": args.warmup,
            "messages": args.messages,
            "seed": args.seed,
            "batch": BATCH,
        },
        "sizes": sizes,
        # Other work on the machine shows here: a busy machine widens p95 and p99.
        "load_average_1min": {"before": load_before, "after": os.getloadavg()[0]},
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "seconds": time.perf_counter() - started,
    }
    print(markdown(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
