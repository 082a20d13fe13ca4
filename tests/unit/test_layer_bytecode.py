"""The core layer ships bytecode for Lambda's Python (3.12): /opt is read-only there,
so a layer without it is compiled from source on every cold start (docs/aws.md,
"Cold start and size").

Builds the layer's taisce package and compiles it as `sam build` does (layers/core/
Makefile, `runtime` and `bytecode`; the pinned arm64 wheels are left out, they would
come from PyPI), then checks every module has cpython-312 bytecode that 3.12 runs
without looking at the source again. Skipped where no Python 3.12 is at hand (`make
sam` needs one too: Makefile, SAM_PYTHON)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "layers" / "core"
# A pyenv machine names the version its python3.12 shim runs (as `make sam` does).
ENV = {"PYENV_VERSION": "3.12.1", **os.environ}


def _python312() -> str | None:
    found = shutil.which("python3.12")
    if found is None:
        return None
    done = subprocess.run(
        [found, "-c", "import sys; print(sys.implementation.cache_tag)"],
        capture_output=True,
        text=True,
        env=ENV,
        check=False,
    )
    return found if done.returncode == 0 and done.stdout.strip() == "cpython-312" else None


PYTHON = _python312()
pytestmark = pytest.mark.skipif(PYTHON is None, reason="no Python 3.12 (python3.12) here")


@pytest.fixture(scope="module")
def layer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    artifacts = tmp_path_factory.mktemp("core-layer-bytecode")
    # -o dependencies: take the pins as already there (no download here).
    goal = ["-o", "dependencies", "bytecode", f"ARTIFACTS_DIR={artifacts}", f"PYTHON={PYTHON}"]
    subprocess.run(
        ["make", "-s", "-C", str(SOURCE), *goal],
        check=True,
        capture_output=True,
        env=ENV,
    )
    return artifacts / "python"


def test_every_module_of_the_layer_has_bytecode_for_python_312(layer: Path) -> None:
    sources = sorted(layer.joinpath("taisce").rglob("*.py"))
    assert len(sources) > 50
    missing = [
        str(p.relative_to(layer))
        for p in sources
        if not (p.parent / "__pycache__" / f"{p.stem}.cpython-312.pyc").is_file()
    ]
    assert missing == []


def test_python_312_runs_the_layers_bytecode_without_reading_the_source(layer: Path) -> None:
    """Unchecked-hash bytecode: used as built whatever the files' times in the zip.
    A module whose source is changed after the build still runs as compiled."""
    compiled = layer / "taisce" / "credentials.py"
    pyc = compiled.parent / "__pycache__" / "credentials.cpython-312.pyc"
    flags = int.from_bytes(pyc.read_bytes()[4:8], "little")
    assert flags == 0b01  # hash-based, source not checked (PEP 552)
    compiled.write_text('raise SystemExit("compiled from source on import")\n')
    done = subprocess.run(
        [PYTHON or "", "-B", "-c", "import taisce.credentials as c; print(c.PREFIX)"],
        capture_output=True,
        text=True,
        cwd=layer,
        env={**ENV, "PYTHONPATH": str(layer)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "tsk_"
