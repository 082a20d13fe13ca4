"""Recall before and after a change, interleaved in one process on one store: another
revision's package against this tree's, question by question, with the dense baseline
timed in the same loop, and every answer compared exactly.

    .venv/bin/python -m bench.recall_ab [FILE] [--base REV] [--limit-conversations N]
        [--rounds R] [--budgets 1000,4000,16000] [--explain] [--deadline]

The base revision's `layers/core/taisce` is taken with `git archive REV` into a
temporary folder and imported as `taisce_base` (its imports are relative). Each
conversation of FILE (a dataset, docs/quality.md; by default the LoCoMo facts file
where a checkout has it beside the project, read at run time, never copied) is stored
once through this tree's gateway, as bench/recall_speed.py stores it; then both
packages open the same store (their own wiring, same folder) and recall each question
at each budget (Memory.recall: the domain and the adapters, not the gateway, which
both share), alternating which side goes first. Both see the same load, and on one
store the answers must be identical, server-made ids and reports included (two stores
of the facts file differ: docs/benchmarks.md, "Recall speed with question-aware
ranking"). Prints p50/p95 of both and of the dense baseline (the question embedded,
ranked), and the count of answers that differ. With --explain every recall asks for
`why`, so the signals each item carries are compared too.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.recall_speed import _budgets, _percentiles
from taisce.evaluation.baselines import DenseRanker, EmbeddingCache
from taisce.evaluation.dataset import load_dataset
from taisce.evaluation.harness import (
    embed_question,
    embedded_run,
    gateway_run,
    make_local_embedder,
    store_conversation,
)
from taisce.evaluation.quality import HOPS, ROLES

DEFAULT_FILE = Path("../shared/bench/locomo/locomo-dev-facts.json")
SIDES = ("before", "after")


def _import_base(revision: str, folder: Path) -> None:
    """Put the revision's package in `folder` as taisce_base, importable."""
    archive = subprocess.run(
        ["git", "archive", revision, "layers/core/taisce"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    (folder / "layers" / "core" / "taisce").rename(folder / "taisce_base")
    sys.path.insert(0, str(folder))


def _answering(memory: Any, package: str, deadline: bool) -> Callable[[str, Any], object]:
    """A side's recall as its body: a revision whose Memory.recall answers with the
    domain's record has its body made by that revision's api/bodies.py. With `deadline`,
    each recall gets one a minute away, as the recall function gives it from Lambda's
    time left (the calls it bounds then run as the function runs them)."""
    bodies = importlib.import_module(f"{package}.api.bodies")
    later = importlib.import_module(f"{package}.domain.deadline").Deadline.after

    def answer(project: str, request: Any) -> object:
        found = (
            memory.recall(project, request, later(60.0))
            if deadline
            else memory.recall(project, request)
        )
        return found if isinstance(found, dict) else bodies.recall(found)

    return answer


def run(args: argparse.Namespace) -> dict[str, Any]:
    from taisce.domain.controls import RecallRequest

    dataset = load_dataset(str(args.file))
    conversations = dataset.conversations[: args.limit_conversations]
    budgets = sorted(args.budgets)
    embedder = make_local_embedder("local")
    embedder.embed(["warm-up"])
    times: dict[str, dict[int, list[float]]] = {
        side: {b: [] for b in budgets} for side in (*SIDES, "dense")
    }
    differ: list[str] = []
    with tempfile.TemporaryDirectory(prefix="taisce-base-") as base_folder:
        _import_base(args.base, Path(base_folder))
        with embedded_run("taisce-ab-", "local", budgets[-1]):
            built, state = gateway_run()
            stored = []
            for n, conversation in enumerate(conversations, start=1):
                client = state.client(f"ab-{n}")
                kept = [m for m, _ in store_conversation(client, conversation)]
                state.settle()
                stored.append((f"ab-{n}", conversation, kept))
            # The base package's own wiring over the same folder (the environment is set).
            base = importlib.import_module("taisce_base.api.wiring").services()
            base_request = importlib.import_module("taisce_base.domain.controls").RecallRequest
            sides = {
                "before": (_answering(base.memory, "taisce_base", args.deadline), base_request),
                "after": (_answering(built.memory, "taisce", args.deadline), RecallRequest),
            }
            cache = EmbeddingCache(embedder)
            embed = embed_question(embedder)
            turn = 0
            for _ in range(args.rounds):
                for project, conversation, kept in stored:
                    dense = DenseRanker(cache.matrix([m.text for m in kept]), embed)
                    for question in conversation.questions:
                        for budget in budgets:
                            answers = {}
                            order = SIDES if turn % 2 else SIDES[::-1]
                            turn += 1
                            for side in order:
                                answering, request_type = sides[side]
                                request = request_type(
                                    question=question.question,
                                    max_characters=budget,
                                    source_roles=list(ROLES),
                                    hops=HOPS,
                                    explain=args.explain or None,
                                )
                                began = time.perf_counter()
                                answer = answering(project, request)
                                times[side][budget].append((time.perf_counter() - began) * 1000)
                                answers[side] = json.dumps(answer, sort_keys=True)
                            if answers["before"] != answers["after"]:
                                differ.append(f"{project}/{question.id}/{budget}")
                            began = time.perf_counter()
                            dense.rank(question.question)
                            times["dense"][budget].append((time.perf_counter() - began) * 1000)
    rows = []
    for budget in budgets:
        b, a, d = (_percentiles(times[s][budget]) for s in (*SIDES, "dense"))
        rows.append({"budget": budget, "before": b, "after": a, "dense": d})
    return {
        "recalls": sum(len(v) for v in times["after"].values()),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "rows": rows,
        "differ": differ,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--base", default="main", help="the revision measured as before")
    parser.add_argument("--limit-conversations", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--budgets", type=_budgets, default=[1_000, 4_000, 16_000])
    parser.add_argument("--explain", action="store_true", help="ask every recall for `why`")
    parser.add_argument(
        "--deadline", action="store_true", help="give every recall a deadline, as Lambda does"
    )
    args = parser.parse_args(argv)
    if not args.file.is_file():
        print(f"skipped: {args.file} is absent (docs/quality.md says how to make the dataset)")
        return 0
    report = run(args)
    print(
        f"- {args.file}: {args.limit_conversations} conversation(s) x {args.rounds} rounds, "
        f"{report['recalls']} recalls a side; before = {args.base}, after = this tree; "
        f"load average (1 min) {report['load_average_1min']}"
    )
    print()
    print(
        "| budget | before p50 / p95 ms | after p50 / p95 ms | dense p50 / p95 ms "
        "| before ÷ dense (p95) | after ÷ dense (p95) |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for row in report["rows"]:
        b, a, d = row["before"], row["after"], row["dense"]
        print(
            f"| {row['budget']:,} | {b['p50']:.2f} / {b['p95']:.2f} "
            f"| {a['p50']:.2f} / {a['p95']:.2f} | {d['p50']:.2f} / {d['p95']:.2f} "
            f"| {b['p95'] / d['p95']:.2f}x | {a['p95'] / d['p95']:.2f}x |"
        )
    differ = report["differ"]
    print(f"\nanswers: {len(differ)} of {report['recalls']} differ")
    for key in differ[:5]:
        print(f"  differs: {key}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
