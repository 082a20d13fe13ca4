"""The core layer carries only what Lambda runs (layers/core/Makefile leaves out the CLI,
the local server and worker, the demo and the evaluation; requirements.txt pins only
what they need). These checks build the layer's taisce package as `sam build` does
(`make runtime`) and fail if a handler, or a module the layer holds, needs something
it left out.

Each handler is imported in a fresh interpreter as Lambda imports it: its CodeUri
folder and the layer on the path, the checkout's own taisce (the editable install)
taken off. Third-party packages come from the dev venv, and every one it loads must be
a distribution the layer holds (its pins and their dependencies).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from taisce.ui.serving import ASSETS
from tests.function_events import load_template
from tests.layer_pins import canonical, core_distributions
from tests.moto_server import TEMPLATE

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "layers" / "core"

# Runs in a fresh interpreter: argv = the function's code folder, the layer's python/
# folder, the checkout's layers/core (taken off the path). Prints which taisce modules
# it loaded from outside the layer, and the explorer's files when it serves them.
_PROBE = """
import importlib, json, os, sys
before = set(sys.modules)  # what the interpreter loaded at start (site, .pth files)
import importlib.metadata as md
code, layer, source = (os.path.realpath(p) for p in sys.argv[1:4])
sys.path[:] = [code, layer] + [
    p for p in sys.path if p and os.path.realpath(p) not in (source, os.getcwd())
]
importlib.import_module("app")
loaded = set(sys.modules) - before
def where(name):
    return os.path.realpath(getattr(sys.modules[name], "__file__", None) or layer)
outside = sorted(
    name for name in loaded if name.split(".")[0] == "taisce" and not where(name).startswith(layer)
)
owners = md.packages_distributions()
used = sorted({d for name in loaded for d in owners.get(name.split(".")[0], [])})
serving = sys.modules.get("taisce.ui.serving")
print(json.dumps({
    "outside": outside,
    "distributions": used,
    "assets": sorted(serving.ASSETS) if serving else None,
}))
"""

# Modules of the layer that import a local-only module on a path Lambda never takes.
TOOLS = {
    # build_document: the OpenAPI generator (`make openapi`); Lambda serves the
    # committed document (served_document).
    "taisce.api.openapi": {"taisce.local.routes"},
}


@pytest.fixture(scope="module")
def layer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    artifacts = tmp_path_factory.mktemp("core-layer")
    subprocess.run(
        ["make", "-s", "-C", str(SOURCE), "runtime", f"ARTIFACTS_DIR={artifacts}"],
        check=True,
        capture_output=True,
    )
    return artifacts / "python"


def _functions() -> list[tuple[str, Path]]:
    resources = load_template(TEMPLATE)["Resources"]
    return [
        (name, ROOT / str(resource["Properties"]["CodeUri"]))
        for name, resource in sorted(resources.items())
        if resource["Type"] == "AWS::Serverless::Function"
    ]


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, root: Path) -> set[str]:
    """The taisce modules this file imports, anywhere in it (lazy imports too)."""
    package = _module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.add(module)
            # `from . import x` and `from .m import x`: x may be a module itself.
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.split(".")[0] == "taisce"}


def _held(module: str, root: Path) -> bool:
    path = root.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def test_the_layer_leaves_out_what_lambda_never_runs(layer: Path) -> None:
    taisce = layer / "taisce"
    for local_only in ("cli.py", "client_commands.py", "demo.py", "local", "evaluation"):
        assert not (taisce / local_only).exists(), local_only
    assert (taisce / "api" / "openapi.json").is_file()  # served by GET /v1/openapi.json
    assert (taisce / "adapters" / "embedders" / "minilm").is_dir()  # Embeddings=local
    assert not list(taisce.rglob("__pycache__"))


@pytest.mark.parametrize(("function", "code"), _functions(), ids=lambda v: str(v))
def test_each_handler_imports_from_the_layer_alone(function: str, code: Path, layer: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(code), str(layer), str(SOURCE)],
        capture_output=True,
        text=True,
        cwd=layer.parent,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert done.returncode == 0, f"{function} does not import on the layer:\n{done.stderr}"
    answer = json.loads(done.stdout.splitlines()[-1])
    assert answer["outside"] == []
    held = core_distributions(SOURCE / "requirements.txt") | {"taisce", "taisce-server"}
    assert {canonical(d) for d in answer["distributions"]} - held == set()
    if answer["assets"] is not None:  # the explorer's function: every file ships
        assert answer["assets"] == sorted(ASSETS)


def test_no_module_of_the_layer_imports_one_it_left_out(layer: Path) -> None:
    missing: dict[str, set[str]] = {}
    for path in sorted(layer.joinpath("taisce").rglob("*.py")):
        module = _module_name(path, layer)
        wanted = {
            name
            for name in _imports(path, layer)
            # A module of the source package (not a name inside one) the layer lacks.
            if _held(name, SOURCE) and not _held(name, layer)
        }
        if wanted - TOOLS.get(module, set()):
            missing[module] = wanted
    assert missing == {}
