"""What layers/core/Makefile deletes from the core layer after pip (UNUSED: grpcio,
opensearch-protobufs and protobuf, which opensearch-py 3 requires and never imports)
is exactly those distributions' files, and no Python file of any other distribution
the layer holds, nor the taisce package, imports them: read from the source (every
`import`, lazy ones included), with the installed distributions' RECORDs, which are
the pins'. (The local model's layer, on top, is checked by running it:
tests/unit/test_local_model_layer.py.)"""

from __future__ import annotations

import ast
import fnmatch
import importlib.metadata as metadata
import re
from pathlib import Path

from tests.layer_pins import DELETED_FROM_CORE, canonical, pins, with_dependencies

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "layers" / "core"
DELETED = DELETED_FROM_CORE
# The modules they hold, as imported.
GONE = ("grpc", "opensearch", "google.protobuf")
# Modules that import them, of utilities taisce never uses (checked below).
UNUSED_UTILITIES = ("aws_lambda_powertools.utilities.kafka",)


def unused() -> list[str]:
    text = (SOURCE / "Makefile").read_text()
    found = re.search(r"^UNUSED := (.+)$", text, re.MULTILINE)
    assert found, "layers/core/Makefile: UNUSED"
    return found.group(1).split()


def top_level(name: str) -> set[str]:
    """The first path part of every file a distribution installed."""
    files = metadata.files(name) or []
    return {f.parts[0] for f in files if not f.parts[0].startswith("..")}


def removes(part: str) -> bool:
    return any(fnmatch.fnmatch(part, pattern) for pattern in unused())


def test_the_makefile_deletes_exactly_the_unused_distributions() -> None:
    held = with_dependencies(pins(SOURCE / "requirements.txt"))
    assert held >= DELETED, "no longer required: take them out of UNUSED"
    for name in DELETED:
        assert top_level(name) and all(removes(part) for part in top_level(name)), name
    for name in held - DELETED:
        assert not any(removes(part) for part in top_level(name)), name


def _imported(path: Path) -> set[str]:
    source = path.read_bytes()
    # Parsed only where the names occur at all (parsing every file takes seconds).
    if not any(
        word in source.replace(b"opensearchpy", b"")
        for word in (b"grpc", b"opensearch", b"protobuf")
    ):
        return set()
    try:
        return _all_imports(path)
    except (SyntaxError, ValueError):
        return set()


def _all_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _in(path: Path, packages: tuple[str, ...]) -> bool:
    return any(f"/{p.replace('.', '/')}/" in path.as_posix() for p in packages)


def _gone(module: str) -> bool:
    return any(module == g or module.startswith(g + ".") for g in GONE)


def _python_files(name: str) -> list[Path]:
    found = metadata.distribution(name)
    return [Path(str(found.locate_file(f))) for f in found.files or [] if f.suffix == ".py"]


def test_nothing_the_layer_keeps_imports_them() -> None:
    held = with_dependencies(pins(SOURCE / "requirements.txt")) - DELETED
    files = [p for name in sorted(held) for p in _python_files(name)]
    ours = sorted((SOURCE / "taisce").rglob("*.py")) + sorted((ROOT / "functions").rglob("*.py"))
    for path in ours:
        assert not [n for n in _all_imports(path) if n.startswith(UNUSED_UTILITIES)], path
    files = [p for p in files if not _in(p, UNUSED_UTILITIES)] + ours
    assert len(files) > 1000
    importers = {str(path): sorted(n for n in _imported(path) if _gone(n)) for path in files}
    assert {k: v for k, v in importers.items() if v} == {}
    assert canonical("opensearch-py") in held
