"""Cold-start cost of each Lambda handler: import time and peak memory, printed as a table.

Each run imports one function's `app` in a fresh interpreter, with the environment the
template gives the functions (DynamoDB store; nothing connects at import). Two import
times per handler:

- "no bytecode": every module compiled from source, as on Lambda when the layer ships
  without `__pycache__` (`sam build` writes none, and /opt is read-only), made here
  with an empty PYTHONPYCACHEPREFIX and PYTHONDONTWRITEBYTECODE;
- "bytecode": the installed packages' cached bytecode is used.

Peak memory is the child's maximum resident set (ru_maxrss) after the import, with
the bare interpreter's shown for reference. Figures are medians of `--runs` runs on
this machine's Python (the dev venv's), not Lambda's arm64 python3.12.

    .venv/bin/python -m bench.cold_start [--runs 5] [--embeddings none]

With `--layer DIR --python PY` it measures a built core layer instead (`make -C
layers/core build-CoreLayer ARTIFACTS_DIR=...`, DIR its `python` folder) as Lambda
loads it: PY (Python 3.12) with the layer and the function's folder on the path,
`import app`, writing no bytecode (/opt is read-only), the layer's own bytecode used.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = """
import importlib, json, resource, sys, time
started = time.perf_counter()
if sys.argv[1]:
    importlib.import_module(sys.argv[1])
elapsed = time.perf_counter() - started
print(json.dumps({
    "ms": elapsed * 1000,
    "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "modules": len(sys.modules),
}))
"""


def functions() -> list[str]:
    return sorted(p.parent.name for p in (ROOT / "functions").glob("*/app.py"))


def environment(embeddings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAISCE_", "PYTHON"))}
    env.update(
        {
            "TAISCE_STORE": "dynamodb",
            "TAISCE_DYNAMODB_TABLE": "taisce",
            "TAISCE_EMBEDDINGS": embeddings,
            "TAISCE_REGION": "us-east-1",
            "TAISCE_OPENSEARCH_ENDPOINT": "https://example.us-east-1.aoss.amazonaws.com",
            "TAISCE_WORK_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/0/work.fifo",
            "AWS_DEFAULT_REGION": "us-east-1",
            "POWERTOOLS_SERVICE_NAME": "taisce",
            "PYTHONPATH": f"{ROOT / 'layers' / 'core'}:{ROOT}",
        }
    )
    return env


def measure(module: str, env: dict[str, str], *, bytecode: bool) -> dict[str, float]:
    run_env = dict(env)
    with tempfile.TemporaryDirectory() as empty:
        if not bytecode:
            run_env["PYTHONPYCACHEPREFIX"] = empty
            run_env["PYTHONDONTWRITEBYTECODE"] = "1"
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, module],
            env=run_env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    return json.loads(out.strip().splitlines()[-1])


def measure_layer(function: str, env: dict[str, str], layer: Path, python: str) -> dict[str, float]:
    """One cold import of a function's `app` from a built layer, as Lambda does it."""
    run_env = dict(env)
    run_env["PYTHONPATH"] = f"{layer}:{ROOT / 'functions' / function}"
    run_env["PYTHONDONTWRITEBYTECODE"] = "1"
    out = subprocess.run(
        [python, "-c", _CHILD, "app"],
        env=run_env,
        cwd=ROOT / "functions" / function,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main_layer(args: argparse.Namespace, env: dict[str, str]) -> None:
    load = os.getloadavg()[0]
    started = time.time()
    print(
        f"date: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(started))}; layer "
        f"{args.layer}; median of {args.runs} runs; TAISCE_EMBEDDINGS={args.embeddings}"
    )
    print()
    print("| handler | import ms, as built | modules |")
    print("|---|---:|---:|")
    for name in functions():
        runs = [measure_layer(name, env, Path(args.layer), args.python) for _ in range(args.runs)]
        ms = statistics.median(r["ms"] for r in runs)
        modules = int(statistics.median(r["modules"] for r in runs))
        print(f"| {name} | {ms:.0f} | {modules} |")
    print(f"\nload (1 min) {load:.2f} before, {os.getloadavg()[0]:.2f} after")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--embeddings", default="none", choices=["none", "bedrock", "local"])
    parser.add_argument("--layer", help="a built core layer's python folder")
    parser.add_argument("--python", default="python3.12", help="the runtime's Python")
    args = parser.parse_args(argv)
    env = environment(args.embeddings)
    if args.layer:
        main_layer(args, env)
        return
    started = time.time()
    load = os.getloadavg()[0]
    rows = []
    for name in ["", *functions()]:
        module = f"functions.{name}.app" if name else ""
        # One warm-up run so that "bytecode" finds every module's cache written.
        measure(module, env, bytecode=True)
        cold = [measure(module, env, bytecode=False) for _ in range(args.runs)]
        warm = [measure(module, env, bytecode=True) for _ in range(args.runs)]
        rows.append(
            (
                name or "(bare interpreter)",
                statistics.median(r["ms"] for r in cold),
                statistics.median(r["ms"] for r in warm),
                statistics.median(r["peak_kb"] for r in warm) / 1024,
                int(statistics.median(r["modules"] for r in warm)),
            )
        )
    print(
        f"date: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(started))}; "
        f"Python {platform.python_version()} {platform.machine()}; {os.cpu_count()} CPUs; "
        f"load (1 min) {load:.2f} before, {os.getloadavg()[0]:.2f} after; "
        f"median of {args.runs} runs; TAISCE_EMBEDDINGS={args.embeddings}"
    )
    print()
    print(
        "| handler | import ms, no bytecode (as built) | import ms, bytecode | "
        "peak RSS MB | modules |"
    )
    print("|---|---:|---:|---:|---:|")
    for name, cold_ms, warm_ms, peak, modules in rows:
        print(f"| {name} | {cold_ms:.0f} | {warm_ms:.0f} | {peak:.1f} | {modules} |")


if __name__ == "__main__":
    main()
