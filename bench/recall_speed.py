"""Recall latency on real conversations: Taisce through the gateway against the dense
baseline, in the same run, and the answers themselves for before/after checks.

    .venv/bin/python -m bench.recall_speed [FILE] [--limit-conversations N]
        [--budgets 1000,4000,16000] [--embeddings local] [--answers OUT.json]
        [--compare BEFORE.json] [--profile]

FILE is a dataset (docs/quality.md: the LoCoMo data set converted by `taisce bench
convert-locomo`); by default the LoCoMo messages file where a checkout has it beside the
project (read at run time, never copied into the repository; the run says so and stops
where it is absent). Each conversation is
stored in its own project through the local gateway, as `taisce bench quality` stores it
(taisce/evaluation/harness.py: messages, facts, then the worker's pending work); then
every question is recalled at each budget through the gateway (authorizer, Powertools
handler, JSON), and the dense baseline (the same embedder over whole messages: embed the
question, rank, pack) is timed for the same question right after, so both see the same
load. It prints p50/p95 of both per budget and their ratio.

`--answers` writes every answer with the fields that differ between two stores of the
same data (server-made ids, storing times) taken out; `--compare` reads such a file and
counts the answers that differ, printing the first few: an optimisation must change none.
`--profile` runs cProfile over the Taisce recalls and prints the costliest functions.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from taisce.evaluation.baselines import DenseRanker, EmbeddingCache, pack
from taisce.evaluation.dataset import load_dataset
from taisce.evaluation.harness import (
    embed_question,
    embedded_run,
    gateway_run,
    make_local_embedder,
    store_conversation,
)
from taisce.evaluation.machine import describe_machine
from taisce.evaluation.quality import HOPS, ROLES

DEFAULT_FILE = Path("../shared/bench/locomo/locomo-dev.json")
# Fields that differ between two stores of the same data, whatever the code.
_VOLATILE = {"id", "stored_at", "created_at", "updated_at", "recorded_at", "report_id"}


def _percentiles(values: Sequence[float]) -> dict[str, float]:
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": statistics.median(values), "p95": cuts[94]}


def _stable(value: Any) -> Any:
    """The answer less what differs between two stores of the same data."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def run(args: argparse.Namespace) -> dict[str, Any]:

    dataset = load_dataset(str(args.file))
    conversations = dataset.conversations[: args.limit_conversations]
    budgets = sorted(args.budgets)
    embedder = make_local_embedder(args.embeddings)
    embedder.embed(["warm-up"])
    profile = cProfile.Profile() if args.profile else None
    taisce: dict[int, list[float]] = {b: [] for b in budgets}
    dense_ms: dict[int, list[float]] = {b: [] for b in budgets}
    answers: dict[str, Any] = {}
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    with embedded_run("taisce-speed-", args.embeddings, budgets[-1]):
        built, state = gateway_run()
        cache = EmbeddingCache(embedder)
        for n, conversation in enumerate(conversations, start=1):
            client = state.client(f"speed-{n}")
            kept = [m for m, _ in store_conversation(client, conversation)]
            state.settle()
            sizes = [m.characters for m in kept]
            vectors = cache.matrix([m.text for m in kept])
            dense = DenseRanker(vectors, embed_question(embedder))
            for question in conversation.questions:
                for budget in budgets:
                    request = {
                        "question": question.question,
                        "max_characters": budget,
                        "source_roles": list(ROLES),
                        "hops": HOPS,
                    }
                    if profile is not None:
                        profile.enable()
                    status, answer, seconds = client.post("/v1/recalls", request)
                    if profile is not None:
                        profile.disable()
                    if status != 200:
                        raise RuntimeError(f"recall failed: {status} {answer}")
                    taisce[budget].append(seconds * 1000)
                    answers[f"{conversation.id}/{question.id}/{budget}"] = _stable(answer)
                # The dense baseline as the quality harness times it: one ranking per
                # question (embedding included), packed per budget.
                began = time.perf_counter()
                ranking = dense.rank(question.question)
                ranked = time.perf_counter() - began
                for budget in budgets:
                    began = time.perf_counter()
                    pack(ranking, sizes, budget, built.settings.max_rows)
                    dense_ms[budget].append((ranked + time.perf_counter() - began) * 1000)
            print(
                f"[{n}/{len(conversations)}] {conversation.id}: "
                f"{len(conversation.questions)} questions",
                file=sys.stderr,
                flush=True,
            )
        store = built.memory.store
        if hasattr(store, "close"):
            store.close()
    rows = []
    for budget in budgets:
        t, d = _percentiles(taisce[budget]), _percentiles(dense_ms[budget])
        rows.append({"budget": budget, "taisce": t, "dense": d, "p95_ratio": t["p95"] / d["p95"]})
    report = {
        "file": str(args.file),
        "conversations": len(conversations),
        "recalls": sum(len(v) for v in taisce.values()),
        "machine": describe_machine(),
        "seconds": round(time.perf_counter() - started, 1),
        "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "rows": rows,
    }
    if profile is not None:
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(45)
        out.write("\n--- by own time ---\n")
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(30)
        report["profile"] = out.getvalue()
    report["answers"] = answers
    return report


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Keys whose answers differ (or are missing from one side)."""
    keys = sorted(set(before) | set(after))
    return [k for k in keys if before.get(k) != after.get(k)]


def _budgets(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--limit-conversations", type=int, default=None)
    parser.add_argument("--budgets", type=_budgets, default=[1_000, 4_000, 16_000])
    parser.add_argument("--embeddings", default="local")
    parser.add_argument("--answers", type=Path, help="write the answers here")
    parser.add_argument("--compare", type=Path, help="answers of an earlier run to compare")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    if not args.file.is_file():
        print(f"skipped: {args.file} is absent (docs/quality.md says how to make the dataset)")
        return 0
    report = run(args)
    answers = report.pop("answers")
    if "profile" in report:
        print(report.pop("profile"))
    machine = report["machine"]
    print(
        f"- {report['file']}: {report['conversations']} conversations, {report['recalls']} recalls"
    )
    load = report["load_average_1min"]
    print(
        f"- machine: {machine['cpu']}, {machine['cpu_count']} CPUs, Python {machine['python']}; "
        f"load average (1 min) {load[0]} before, {load[1]} after; {report['seconds']} s"
    )
    print()
    print("| budget | taisce p50 / p95 ms | dense p50 / p95 ms | taisce ÷ dense (p95) |")
    print("|---:|---:|---:|---:|")
    for row in report["rows"]:
        t, d = row["taisce"], row["dense"]
        print(
            f"| {row['budget']:,} | {t['p50']:.2f} / {t['p95']:.2f} "
            f"| {d['p50']:.2f} / {d['p95']:.2f} | {row['p95_ratio']:.2f}x |"
        )
    if args.answers:
        args.answers.write_text(json.dumps(answers, sort_keys=True))
    if args.compare:
        differ = compare(json.loads(args.compare.read_text()), answers)
        print(
            f"\nanswers compared with {args.compare}: {len(answers)} answers, {len(differ)} differ"
        )
        for key in differ[:5]:
            print(f"  differs: {key}")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
