"""`make lint`'s complexity check (.ci/complexity.py): it finds a function past the limit,
nested ones too, and the project's code has none past it but those it lists as pending."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("complexity", ROOT / ".ci" / "complexity.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _branches(name: str, n: int, indent: str = "    ") -> str:
    body = "".join(f"{indent}if x == {i}:\n{indent}    return {i}\n" for i in range(n - 1))
    return f"def {name}(x):\n{body}{indent}return -1\n"


def test_a_function_past_the_limit_is_found(tmp_path: Path) -> None:
    check = _check()
    (tmp_path / "fine.py").write_text(_branches("fine", check.LIMIT))
    (tmp_path / "busy.py").write_text(_branches("busy", check.LIMIT + 1))
    nested = "def outer():\n" + "\n".join(
        "    " + line for line in _branches("inner", check.LIMIT + 1).splitlines()
    )
    (tmp_path / "nested.py").write_text(nested + "\n    return inner\n")
    found = check.too_complex([tmp_path], check.LIMIT)
    assert any("busy.py:1 busy: 21" in line for line in found)
    assert any("nested.py" in line and "inner" in line for line in found)
    assert not any("fine" in line for line in found)


def test_the_project_has_none_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    check = _check()
    monkeypatch.chdir(ROOT)
    assert check.too_complex([Path("layers"), Path("functions")], check.LIMIT) == []
