"""The DynamoDB calls of another revision against this tree's, call by call: for a change
that must not change what the DynamoDB store sends (a restructuring of the adapter).

    .venv/bin/python -m bench.dynamodb_calls_ab [--base REV]

One fixed scenario runs on the DynamoDB store over moto's server, once with this tree's
package and once with REV's (`git archive REV layers/core/taisce`, first on the path
of its own process): messages and facts stored (a contradiction closed), recall with
hops 1 and 2, a merge, the explorer's pages, a worker pass (reports rebuilt), extraction
marks taken, everything marked for indexing, OpenSearch's document ids, an erasure and
a delete. Every call (botocore's `_make_api_call` and the direct reads) is recorded
with its parameters as JSON. The random parts are fixed in both processes (the hash
seed, `random`, `secrets.token_hex`, `uuid4`, the storing clock); what stays apart is
normalised before comparing: wall-clock times and numbers, tokens, the table's name.
Prints the calls per operation and every call found on one side only.
"""

from __future__ import annotations

import argparse
import collections
import io
import itertools
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_NORMAL = [
    (re.compile(r"20\d\d-\d\d-\d\dT[0-9:.]+Z?(\+00:00)?"), "TIME"),
    (re.compile(r'\\"N\\": \\"1\d{9}\.\d+\\"'), r'\\"N\\": \\"NOW\\"'),
    (re.compile(r'\\"[0-9a-f]{8,64}\\"'), r'\\"TOKEN\\"'),
    (re.compile(r"calls-ab-\w+"), "TABLE"),
]


def _fix_randomness() -> None:
    import random
    import secrets
    import time
    import uuid

    random.seed(0)
    lock = threading.Lock()
    tokens = itertools.count()

    def token_hex(n: int = 32) -> str:
        with lock:
            return f"{next(tokens):0{2 * n}x}"[-2 * n :]

    clock = itertools.count(1_700_000_000_000_000_000, 1000)
    ids = itertools.count()
    secrets.token_hex = token_hex
    time.time_ns = lambda: next(clock)
    uuid.uuid4 = lambda: uuid.UUID(int=next(ids))


def record(out: Path, side: str) -> None:
    """Run the scenario in this process and write its calls, one JSON line each."""
    _fix_randomness()
    from botocore.client import BaseClient

    from taisce.adapters.dynamodb.reads import DirectReads
    from taisce.adapters.dynamodb.store import DynamoDbStore
    from taisce.domain.controls import Limits, RecallRequest
    from taisce.service.memory import Memory
    from taisce.service.work import one_pass
    from tests.contract.factories import fact, message, with_passages
    from tests.moto_server import start_moto

    calls: list[tuple[str, str, str]] = []
    lock = threading.Lock()
    sent = BaseClient._make_api_call
    direct = DirectReads.call

    def through_client(self: Any, operation: str, params: dict[str, Any]) -> Any:
        with lock:
            calls.append(("client", operation, json.dumps(params, sort_keys=True, default=str)))
        return sent(self, operation, params)

    def read_directly(self: Any, operation: str, params: dict[str, Any]) -> Any:
        with lock:
            calls.append(("direct", operation, json.dumps(params, sort_keys=True, default=str)))
        return direct(self, operation, params)

    BaseClient._make_api_call = through_client  # type: ignore[method-assign]
    DirectReads.call = read_directly  # type: ignore[method-assign]
    moto = start_moto(f"calls-ab-{side}")
    try:
        store = DynamoDbStore(moto.table, client=moto.shared_client, mark_extractions=True)
        memory = Memory(store, Limits(bundle_characters=16_000, max_rows=200))
        p = "calls"
        store.put_messages(
            p,
            *with_passages(
                message("Atlas met Bob in Dublin. Atlas works at Acme.", id="m1"),
                message("Bob lives in Cork now.", id="m2"),
            ),
        )
        store.put_facts(
            p,
            [
                fact("Atlas", "knows", "Bob", id="f1"),
                fact("Bob", "lives in", "Dublin", id="f2"),
                fact("Atlas", "works at", "Acme", id="f3"),
            ],
        )
        store.put_facts(p, [fact("Bob", "lives in", "Cork", id="f4")])  # closes f2
        for hops in (1, 2):
            request = {"question": "Where does Bob live?", "hops": hops}
            memory.recall(p, RecallRequest.model_validate(request))
        store.put_facts(p, [fact("Robert", "knows", "Carol", id="f5")])
        store.merge_entities(p, "bob", "Bob", "robert", "Robert")
        memory.list_entities(p, None, 10, None)
        memory.list_messages(p, None, None, 10, None)
        store.aliases(p)
        store.entity_names(p, 10)
        store.entity_keys(p, 10)
        one_pass(memory, p, best_effort=True)
        store.pending_extractions(p, 10)
        store.finish_extraction(p, "m1")
        store.mark_everything(p)
        store.set_document_ids(p, "passage", {"m1#0": ["d1"]})
        store.document_ids(p, "passage", ["m1#0"])
        memory.erase_now(p, "Atlas")
        store.delete_fact(p, "f5")
        store.erasures(p)
        store.vector_projects()
        store.dirty_projects()
    finally:
        moto.stop()
    out.write_text("".join(json.dumps(c) + "\n" for c in calls))


def _normal(line: str) -> str:
    for pattern, replacement in _NORMAL:
        line = pattern.sub(replacement, line)
    return line


def _side(revision: str | None, folder: Path) -> list[str]:
    """The calls of this tree (revision None) or of the revision, normalised, sorted
    (the reads of one wave go out in parallel, in any order)."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    if revision is not None:
        archive = subprocess.run(
            ["git", "archive", revision, "layers/core/taisce"],
            check=True,
            capture_output=True,
            cwd=ROOT,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        env["PYTHONPATH"] = os.pathsep.join([str(folder / "layers" / "core"), str(ROOT)])
    out = folder / "calls.jsonl"
    side = "base" if revision is not None else "tree"
    command = [sys.executable, "-m", "bench.dynamodb_calls_ab", "--record", str(out), side]
    subprocess.run(command, check=True, cwd=ROOT, env=env)
    return sorted(_normal(line) for line in out.read_text().splitlines())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="HEAD", help="the revision to compare with")
    parser.add_argument("--record", nargs=2, metavar=("FILE", "SIDE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.record:
        record(Path(args.record[0]), args.record[1])
        return
    with (
        tempfile.TemporaryDirectory(prefix="taisce-calls-") as tree,
        tempfile.TemporaryDirectory(prefix="taisce-calls-base-") as base,
    ):
        before = _side(args.base, Path(base))
        after = _side(None, Path(tree))
    per_operation = collections.Counter(json.loads(line)[1] for line in after)
    print(f"## DynamoDB calls of one scenario: {args.base} against this tree\n")
    print("| operation | calls (this tree) |\n|---|---:|")
    for operation, n in sorted(per_operation.items()):
        print(f"| {operation} | {n} |")
    only_before = sorted((collections.Counter(before) - collections.Counter(after)).elements())
    only_after = sorted((collections.Counter(after) - collections.Counter(before)).elements())
    print(
        f"\n{len(before)} calls at {args.base}, {len(after)} in this tree; "
        f"{len(only_before)} only at {args.base}, {len(only_after)} only in this tree"
    )
    for label, lines in ((args.base, only_before), ("this tree", only_after)):
        for line in lines:
            print(f"only {label}: {line}")


if __name__ == "__main__":
    main()
