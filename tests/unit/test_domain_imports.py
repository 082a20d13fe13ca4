"""The domain's imports point one way (issue 14): adapters -> domain, never back, and
no cycle among domain modules, counting imports made only for type checking."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import taisce.domain

DOMAIN = Path(taisce.domain.__file__).parent


def _module(path: Path) -> str:
    parts = path.relative_to(DOMAIN.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module this file imports, at run time or under TYPE_CHECKING."""
    name = _module(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            # `from . import x` and `from .ports import store` name modules too.
            found.update(f"{target}.{a.name}" for a in node.names)
    return found


FILES = sorted(DOMAIN.rglob("*.py"))
MODULES = {_module(p): p for p in FILES}
GRAPH = {m: {i for i in _imports(p) if i in MODULES and i != m} for m, p in MODULES.items()}


def test_the_domain_imports_no_adapter_nor_the_service_layer() -> None:
    for module, path in MODULES.items():
        for imported in _imports(path):
            assert not imported.startswith(
                ("taisce.adapters", "taisce.api", "taisce.service", "boto3")
            ), module
            assert imported != "taisce.ports", module


def test_no_import_cycle_among_domain_modules() -> None:
    state: dict[str, int] = {}  # 1 on the current path, 2 done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for imported in sorted(GRAPH[module]):
            if state.get(imported) == 1:
                cycle = [*path[path.index(imported) :], imported]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if imported not in state:
                visit(imported, [*path, imported])
        state[module] = 2

    for module in sorted(GRAPH):
        if module not in state:
            visit(module, [module])


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_domain_module_imports(module: str) -> None:
    importlib.import_module(module)
