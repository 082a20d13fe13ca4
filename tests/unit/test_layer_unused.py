"""What layers/core/Makefile deletes from the core layer after pip (UNUSED: grpcio and
opensearch-protobufs, which opensearch-py 3 requires and never imports) is exactly
those two distributions' files, and no Python file of any other distribution the layer
holds, nor the taisce package, imports them: read from the source (every `import`,
lazy ones included), with the installed distributions' RECORDs, which are the pins'."""

from __future__ import annotations

import ast
import fnmatch
import importlib.metadata as metadata
import re
from pathlib import Path

from tests.layer_pins import canonical, pins, with_dependencies

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "layers" / "core"
DELETED = {"grpcio", "opensearch-protobufs"}


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
    if b"grpc" not in source and b"opensearch" not in source.replace(b"opensearchpy", b""):
        return set()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _python_files(name: str) -> list[Path]:
    found = metadata.distribution(name)
    return [Path(str(found.locate_file(f))) for f in found.files or [] if f.suffix == ".py"]


def test_nothing_the_layer_keeps_imports_them() -> None:
    gone = ("grpc", "opensearch")
    held = with_dependencies(pins(SOURCE / "requirements.txt")) - DELETED
    files = [p for name in sorted(held) for p in _python_files(name)]
    files += sorted((SOURCE / "taisce").rglob("*.py"))
    assert len(files) > 1000
    importers = {
        str(path): sorted(n for n in _imported(path) if n.split(".")[0] in gone) for path in files
    }
    assert {k: v for k, v in importers.items() if v} == {}
    assert canonical("opensearch-py") in held
