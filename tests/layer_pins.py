"""The distributions a layer holds, from its requirements.txt: its pins and, for a layer
built with pip's dependencies (the core layer), what they require, read from the dev
venv's installed metadata (the same versions: the pins are the venv's)."""

from __future__ import annotations

import importlib.metadata as metadata
import re
from pathlib import Path


def pins(path: Path) -> list[str]:
    names = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(re.split(r"[=<>~\[ ]", line, maxsplit=1)[0])
    return names


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def with_dependencies(names: list[str]) -> set[str]:
    """The distributions pip installs for these (the core layer is built with deps)."""
    seen: set[str] = set()
    todo = [canonical(n) for n in names]
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
            todo.append(canonical(re.split(r"[=<>~!\[ ;(]", requirement, maxsplit=1)[0]))
    return seen


# What layers/core/Makefile deletes from the core layer after pip (UNUSED): required by
# opensearch-py 3 through opensearch-protobufs, imported by nothing Lambda runs
# (tests/unit/test_layer_unused.py checks both).
DELETED_FROM_CORE = frozenset({"grpcio", "opensearch-protobufs", "protobuf"})


def core_distributions(requirements: Path) -> set[str]:
    """The distributions the built core layer holds: its pins with their dependencies,
    less what its Makefile deletes."""
    return with_dependencies(pins(requirements)) - DELETED_FROM_CORE
