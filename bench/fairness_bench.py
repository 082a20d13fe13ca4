"""Fairness benchmark: another project's recall while one project runs its heaviest
erasures through four credentials, against a real `taisce serve` over HTTP.

    .venv/bin/python -m bench.fairness_bench [--seconds 30] [--processes 4]
                                             [--words 20000] [--name-words 160]

A fresh server (embeddings off) on a temporary data folder. Project B holds a seeded
memory (the synthetic graph of `bench.corpus`) and recalls, one request at a time:
alone first (unloaded), then for `--seconds` while project A, through four
credentials of its own on four threads, stores a message of `--words` repeated words
and erases a name of `--name-words` of them, again and again (an erasure of many
repeated words is the costliest there is). Prints B's recall p50/p95/p99 in both
phases, their ratio (the target: loaded p95 within 2x unloaded) and how many
erasures A finished. It asserts nothing: timings belong to the machine.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

from bench.corpus import make_corpus, make_questions
from bench.recall_bench import percentiles
from taisce.evaluation.machine import describe_machine
from tests.draining import drain
from tests.server import LocalServer, start_server

CREDENTIALS = 4
UNLOADED_RECALLS = 200


def _seed(server: LocalServer, secret: str) -> list[str]:
    corpus = make_corpus(1000, 200, seed=7)
    with server.client(secret) as http:
        for start in range(0, len(corpus.facts), 100):
            reply = http.post("/v1/facts", json={"facts": corpus.facts[start : start + 100]})
            assert reply.status_code == 201, reply.text
    return make_questions(random.Random(7), corpus.known(), 50)


def _recalls(http: httpx.Client, questions: list[str], stop: float, most: int) -> list[float]:
    timings: list[float] = []
    n = 0
    while time.monotonic() < stop and len(timings) < most:
        started = time.perf_counter()
        reply = http.post("/v1/recalls", json={"question": questions[n % len(questions)]})
        timings.append((time.perf_counter() - started) * 1000)
        assert reply.status_code == 200, reply.text
        n += 1
    return timings


def _eraser(
    server: LocalServer, secret: str, args: argparse.Namespace, stop: float, done: list[float]
) -> None:
    content = "ab " * args.words
    subject = " ".join(["ab"] * args.name_words)
    n = 0
    with server.client(secret) as http:
        http.timeout = httpx.Timeout(600)
        while time.monotonic() < stop:
            message = {"id": f"m-{secret[-6:]}-{n}", "role": "user", "content": content}
            http.post("/v1/messages", json={"messages": [message]})
            started = time.perf_counter()
            reply = http.post("/v1/erasures", json={"subject": subject})
            if reply.status_code == 200:
                done.append(time.perf_counter() - started)
            n += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--words", type=int, default=20_000)
    parser.add_argument("--name-words", type=int, default=160)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="taisce-fairness-"))
    server = start_server(folder, args=("--processes", str(args.processes)))
    drain(server)
    try:
        other = server.new_credential("bench-other")
        heavy = [server.new_credential("bench-heavy") for _ in range(CREDENTIALS)]
        questions = _seed(server, other)
        with server.client(other) as http:
            _recalls(http, questions, time.monotonic() + 5, 20)  # warm
            unloaded = _recalls(http, questions, time.monotonic() + 60, UNLOADED_RECALLS)
            stop = time.monotonic() + args.seconds
            erasures: list[float] = []
            threads = [
                threading.Thread(target=_eraser, args=(server, s, args, stop, erasures))
                for s in heavy
            ]
            for t in threads:
                t.start()
            time.sleep(1.0)  # the erasures under way
            loaded = _recalls(http, questions, stop, 1_000_000)
            for t in threads:
                t.join()
    finally:
        server.stop()
    before, during = percentiles(unloaded), percentiles(loaded)
    result = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": describe_machine(),
        "settings": vars(args) | {"json": None, "credentials": CREDENTIALS},
        "unloaded_ms": before,
        "loaded_ms": during,
        "recalls": {"unloaded": len(unloaded), "loaded": len(loaded)},
        "erasures_done": len(erasures),
        "erasure_seconds_p50": sorted(erasures)[len(erasures) // 2] if erasures else None,
        "p95_ratio": round(during["p95"] / before["p95"], 2),
    }
    print(json.dumps(result, indent=2, default=str))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    main()
