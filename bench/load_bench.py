"""Load benchmark: concurrent recalls and writes from several projects against a real
`taisce serve` over HTTP.

    .venv/bin/python -m bench.load_bench [--seconds 60] [--clients 8] [--rate 100]
                                         [--projects 4] [--embeddings none|local]
                                         [--processes 4]
                                         [--quick] [--json FILE]

A fresh server is started on a temporary data folder; each project gets a credential
and a seeded memory (the synthetic graph and messages of `bench.corpus`). Then:

1. unloaded: one client recalls alone, one request at a time (the baseline);
2. loaded: `--clients` clients spread over the projects send recalls, fact batches and
   message batches, paced to `--rate` requests/s in all, for `--seconds`;
3. saturated: the same clients with no pacing, for a third of `--seconds`, to show the
   most the server takes and whether anything fails at that point.

It prints a table per phase (requests, throughput, p50/p95/p99 ms, errors) and the
loaded ÷ unloaded recall p95. Afterwards every write the server acknowledged is looked
up in the SQLite file: "lost" counts acknowledged ids that are not there. It asserts
nothing: timings belong to the machine, which is shared; compare within one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from bench.corpus import make_corpus, make_questions
from bench.recall_bench import percentiles
from taisce.evaluation.machine import describe_machine
from tests.draining import drain
from tests.server import LocalServer, start_server

SEED_BATCH = 100
FACTS_PER_WRITE = 10
MESSAGES_PER_WRITE = 5
# What an agent does most: recall before each model call; store now and then.
MIX = (("recall", 70), ("facts", 15), ("messages", 15))
EXPECTED = {"recall": 200, "facts": 201, "messages": 202}
TIMEOUT = 30.0


@dataclass
class Project:
    name: str
    secret: str
    known: list[str]
    questions: list[str]


@dataclass
class Sample:
    op: str
    ms: float
    ok: bool


@dataclass
class Acked:
    facts: dict[str, set[str]] = field(default_factory=dict)
    messages: dict[str, set[str]] = field(default_factory=dict)


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# -- seeding ------------------------------------------------------------------------


def seed(server: LocalServer, count: int, facts: int, messages: int, seed: int) -> list[Project]:
    projects = []
    for n in range(count):
        name = f"load-{n}"
        secret = server.new_credential(name)
        corpus = make_corpus(facts, messages, seed + n)
        with server.client(secret) as http:
            for i in range(0, len(corpus.facts), SEED_BATCH):
                reply = http.post("/v1/facts", json={"facts": corpus.facts[i : i + SEED_BATCH]})
                reply.raise_for_status()
            for i in range(0, len(corpus.messages), SEED_BATCH):
                batch = corpus.messages[i : i + SEED_BATCH]
                http.post("/v1/messages", json={"messages": batch}).raise_for_status()
        known = corpus.known()
        questions = make_questions(random.Random(seed + n), known, 200)
        projects.append(Project(name, secret, known, questions))
    return projects


# -- the requests -------------------------------------------------------------------


class Requests:
    """Makes the body of each kind of request; write ids are unique per run."""

    def __init__(self, rng: random.Random, run: str) -> None:
        self.rng = rng
        self.run = run
        self.count = 0

    def _id(self, kind: str) -> str:
        self.count += 1
        return f"{kind}-{self.run}-{self.count}"

    def recall(self, project: Project) -> dict[str, Any]:
        return {
            "question": self.rng.choice(project.questions),
            "hops": self.rng.choice((1, 2)),
            "source_roles": ["user", "assistant", "tool", "system"],
        }

    def facts(self, project: Project) -> dict[str, Any]:
        facts = []
        for _ in range(FACTS_PER_WRITE):
            a, b = self.rng.sample(project.known, 2)
            facts.append(
                {
                    "id": self._id("f"),
                    "subject": a,
                    "predicate": self.rng.choice(("knows", "met", "works with")),
                    "object": b,
                    "source_role": self.rng.choice(("user", "assistant")),
                }
            )
        return {"facts": facts}

    def messages(self, project: Project) -> dict[str, Any]:
        messages = []
        for _ in range(MESSAGES_PER_WRITE):
            a, b = self.rng.sample(project.known, 2)
            messages.append(
                {
                    "id": self._id("m"),
                    "role": self.rng.choice(("user", "assistant")),
                    "content": f"Talked to {a} about {b} today. {a} will follow up next week.",
                    "source": f"chat:{self.run}",
                }
            )
        return {"messages": messages}


ROUTES = {"recall": "/v1/recalls", "facts": "/v1/facts", "messages": "/v1/messages"}


async def _one(
    http: httpx.AsyncClient, op: str, body: dict[str, Any], project: Project, acked: Acked
) -> Sample:
    started = time.perf_counter()
    try:
        reply = await http.post(ROUTES[op], json=body)
        ok = reply.status_code == EXPECTED[op]
    except httpx.HTTPError:
        ok = False
    ms = (time.perf_counter() - started) * 1000
    if ok and op != "recall":
        # The ids the server answered: a fact identical to a stored one is answered with
        # the stored fact's id, and its own id is not kept (docs/API.md, "Never twice").
        ids = {item["id"] for item in reply.json()[op]}
        (acked.facts if op == "facts" else acked.messages).setdefault(project.name, set()).update(
            ids
        )
    return Sample(op, ms, ok)


async def _client(
    url: str,
    project: Project,
    requests: Requests,
    ops: Sequence[str],
    until: float,
    interval: float,
    acked: Acked,
) -> list[Sample]:
    samples: list[Sample] = []
    headers = {"Authorization": f"Bearer {project.secret}"}
    weights = [w for _, w in MIX]
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=TIMEOUT) as http:
        due = time.perf_counter() + requests.rng.uniform(0, interval)
        while True:
            if interval:
                # Paced: send at the scheduled time (late stays late: no catching up).
                await asyncio.sleep(max(0.0, due - time.perf_counter()))
                due = max(due + interval, time.perf_counter())
            if time.perf_counter() >= until:
                return samples
            op = requests.rng.choices(ops, weights)[0]
            body = getattr(requests, op)(project)
            samples.append(await _one(http, op, body, project, acked))


async def _mixed(
    url: str,
    projects: Sequence[Project],
    clients: int,
    seconds: float,
    rate: float | None,
    run: str,
    seed: int,
    acked: Acked,
) -> tuple[list[Sample], float]:
    ops = [op for op, _ in MIX]
    interval = clients / rate if rate else 0.0
    started = time.perf_counter()
    until = started + seconds
    tasks = [
        _client(
            url,
            projects[c % len(projects)],
            Requests(random.Random(seed * 1000 + c), f"{run}c{c}"),
            ops,
            until,
            interval,
            acked,
        )
        for c in range(clients)
    ]
    results = await asyncio.gather(*tasks)
    return [s for r in results for s in r], time.perf_counter() - started


def unloaded(
    server: LocalServer, projects: Sequence[Project], count: int, seed: int
) -> list[float]:
    rng = random.Random(seed)
    requests = Requests(rng, "unloaded")
    by_project = {p.name: server.client(p.secret) for p in projects}
    times: list[float] = []
    try:
        for n in range(count + count // 10):  # the first tenth warms up, untimed
            project = projects[n % len(projects)]
            started = time.perf_counter()
            reply = by_project[project.name].post("/v1/recalls", json=requests.recall(project))
            ms = (time.perf_counter() - started) * 1000
            reply.raise_for_status()
            if n >= count // 10:
                times.append(ms)
    finally:
        for http in by_project.values():
            http.close()
    return times


# -- checking what was acknowledged --------------------------------------------------


def lost(data_dir: Path, acked: Acked) -> dict[str, int]:
    """Acknowledged ids missing from the store, per kind."""
    db = sqlite3.connect(f"file:{data_dir / 'taisce.sqlite3'}?mode=ro", uri=True, timeout=30)
    try:
        missing = {"facts": 0, "messages": 0}
        for kind, table in (("facts", acked.facts), ("messages", acked.messages)):
            for project, ids in table.items():
                stored = {
                    r[0] for r in db.execute(f"SELECT id FROM {kind} WHERE project = ?", (project,))
                }
                missing[kind] += len(ids - stored)
        return missing
    finally:
        db.close()


# -- figures -------------------------------------------------------------------------


def summarise(samples: Sequence[Sample], seconds: float) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for op in [op for op, _ in MIX] + ["all"]:
        chosen = [s for s in samples if op in ("all", s.op)]
        times = [s.ms for s in chosen]
        rows[op] = {
            "requests": len(chosen),
            "per_second": len(chosen) / seconds if seconds else 0.0,
            "ms": percentiles(times) if times else {"p50": 0.0, "p95": 0.0, "p99": 0.0},
            "errors": sum(not s.ok for s in chosen),
        }
    return rows


def _f(value: float, digits: int = 2) -> str:
    return f"{value:,.{digits}f}"


def markdown(report: dict[str, Any]) -> str:
    m, s, load = report["machine"], report["settings"], report["load_average_1min"]
    base = report["unloaded"]
    lines = [
        "## Taisce load benchmark",
        "",
        f"- date: {report['date']}",
        f"- machine: {m['cpu']}, {m['cpu_count']} CPUs, Python {m['python']}, "
        f"SQLite {m['sqlite']}; load average (1 min) {_f(load['before'])} before, "
        f"{_f(load['after'])} after (client and server share the machine)",
        f"- settings: `taisce serve --processes {s['processes']}`, embeddings "
        f"{s['embeddings']}; {s['projects']} projects of "
        f"{s['facts']:,} facts and {s['messages']:,} messages; {s['clients']} clients "
        f"(asyncio + httpx, one keep-alive connection each); mix recall 70% (hops 1 or 2, all "
        f"roles) / facts 15% ({FACTS_PER_WRITE} a batch) / messages 15% "
        f"({MESSAGES_PER_WRITE} a batch); total {_f(report['seconds'], 1)} s",
        "",
        "| phase | operation | requests | throughput /s | p50 ms | p95 ms | p99 ms | errors |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
        "| unloaded (1 client, sequential; half before, half after) | recall "
        f"| {base['requests']:,} "
        f"| {_f(base['per_second'], 1)} | {_f(base['ms']['p50'])} | {_f(base['ms']['p95'])} "
        f"| {_f(base['ms']['p99'])} | 0 |",
    ]
    for phase in report["phases"]:
        label = (
            f"loaded ({_f(phase['rate'], 0)}/s offered, {_f(phase['seconds'], 0)} s)"
            if phase["rate"]
            else f"saturated (no pacing, {_f(phase['seconds'], 0)} s)"
        )
        for op, row in phase["rows"].items():
            lines.append(
                f"| {label} | {op} | {row['requests']:,} | {_f(row['per_second'], 1)} "
                f"| {_f(row['ms']['p50'])} | {_f(row['ms']['p95'])} | {_f(row['ms']['p99'])} "
                f"| {row['errors']} |"
            )
    lines.append("")
    for phase in report["phases"]:
        name = "loaded" if phase["rate"] else "saturated"
        lines.append(
            f"- {name} ÷ unloaded recall p95: **{_f(phase['recall_p95_ratio'])}x**; "
            f"errors {phase['rows']['all']['errors']}"
        )
    miss = report["lost"]
    lines.append(
        f"- acknowledged writes missing from the store afterwards: facts {miss['facts']}, "
        f"messages {miss['messages']} (of {report['acked']['facts']:,} facts and "
        f"{report['acked']['messages']:,} messages acknowledged)"
    )
    return "\n".join(lines)


# -- main ----------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.load_bench",
        description="Concurrent recalls and writes against a real taisce serve over HTTP.",
    )
    parser.add_argument("--seconds", type=float, help="loaded phase length (default 60)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
    parser.add_argument("--rate", type=float, help="requests/s offered in all (default 100)")
    parser.add_argument("--projects", type=int, default=4)
    parser.add_argument("--facts", type=int, help="facts seeded per project (default 2000)")
    parser.add_argument("--messages", type=int, help="messages seeded per project (default 500)")
    parser.add_argument("--recalls", type=int, help="unloaded recalls timed (default 1000)")
    parser.add_argument("--embeddings", choices=("none", "local"), default="none")
    parser.add_argument(
        "--processes", type=int, default=4, help="the server's handler processes (default 4)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="a short run for CI (about 20 s)")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    quick = args.quick
    seconds = args.seconds or (10.0 if quick else 60.0)
    rate = args.rate or 100.0
    facts = args.facts or (500 if quick else 2_000)
    messages = args.messages or (100 if quick else 500)
    recalls = args.recalls or (400 if quick else 1_000)
    if (
        args.clients < 1
        or args.projects < 1
        or args.processes < 1
        or seconds <= 0
        or rate <= 0
        or recalls < 10
    ):
        print(
            "error: clients, projects, processes, seconds and rate must be positive",
            file=sys.stderr,
        )
        return 2

    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    data_dir = Path(tempfile.mkdtemp(prefix="taisce-load-"))
    server = start_server(
        data_dir, {"TAISCE_EMBEDDINGS": args.embeddings}, ["--processes", str(args.processes)]
    )
    drain(server)
    acked = Acked()
    try:
        _log(f"seeding {args.projects} projects of {facts} facts and {messages} messages")
        projects = seed(server, args.projects, facts, messages, args.seed)
        # The baseline is timed half before and half after the load, so drift in the
        # machine's other work (it is shared) weighs on both sides of the ratio.
        _log(f"unloaded: {recalls // 2} recalls")
        base_times = unloaded(server, projects, recalls // 2, args.seed)
        phases = []
        for phase_rate, phase_seconds in ((rate, seconds), (None, max(3.0, seconds / 3))):
            _log(f"mixed load: {args.clients} clients, rate {phase_rate or 'unpaced'}, "
                 f"{phase_seconds:.0f} s")  # fmt: skip
            samples, took = asyncio.run(
                _mixed(
                    server.url,
                    projects,
                    args.clients,
                    phase_seconds,
                    phase_rate,
                    "loaded" if phase_rate else "saturated",
                    args.seed,
                    acked,
                )
            )
            phases.append({"rate": phase_rate, "seconds": took, "rows": summarise(samples, took)})
        _log(f"unloaded again: {recalls - recalls // 2} recalls")
        base_times += unloaded(server, projects, recalls - recalls // 2, args.seed + 1)
        base_seconds = sum(base_times) / 1000
        for phase in phases:
            phase["recall_p95_ratio"] = (
                phase["rows"]["recall"]["ms"]["p95"] / percentiles(base_times)["p95"]
            )
        missing = lost(data_dir, acked)
    finally:
        server.stop()
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "machine": describe_machine(),
        "settings": {
            "embeddings": args.embeddings,
            "processes": args.processes,
            "projects": args.projects,
            "facts": facts,
            "messages": messages,
            "clients": args.clients,
            "seed": args.seed,
        },
        "unloaded": {
            "requests": len(base_times),
            "per_second": len(base_times) / base_seconds if base_seconds else 0.0,
            "ms": percentiles(base_times),
        },
        "phases": phases,
        "lost": missing,
        "acked": {
            "facts": sum(len(v) for v in acked.facts.values()),
            "messages": sum(len(v) for v in acked.messages.values()),
        },
        "load_average_1min": {"before": load_before, "after": os.getloadavg()[0]},
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "seconds": time.perf_counter() - started,
    }
    shutil.rmtree(data_dir, ignore_errors=True)
    print(markdown(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    failed = sum(p["rows"]["all"]["errors"] for p in report["phases"])
    # Errors or a lost write fail the run (CI sees it); slow figures do not.
    return 1 if failed or sum(missing.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
