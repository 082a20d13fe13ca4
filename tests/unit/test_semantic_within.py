"""A recall's deadline bounds only the calls that cross a network (domain/semantic.py):
a thread per call is what bounding costs, and an in-process model or index never waits
on anything it could be cut off from."""

from __future__ import annotations

from typing import Any

import pytest

from taisce.api.wiring import open_semantic
from taisce.domain.deadline import Deadline, DeadlineEmbedder, DeadlineIndex
from taisce.domain.semantic import Semantic
from taisce.settings import Settings

DEADLINE = Deadline.after(5.0)


class Model:
    name, dimensions = "model", 3

    def embed(self, texts: Any) -> list[list[float]]:
        return [[1.0, 0.0, 0.0] for _ in texts]


@pytest.mark.parametrize(
    ("local_model", "local_index"), [(False, False), (True, False), (False, True), (True, True)]
)
def test_only_the_parts_across_a_network_are_bounded(local_model: bool, local_index: bool) -> None:
    model, index = Model(), object()
    semantic = Semantic(model, index, local_model=local_model, local_index=local_index)  # type: ignore[arg-type]
    bounded = semantic.within(DEADLINE)
    assert (bounded.embedder is model) == local_model
    assert isinstance(bounded.embedder, DeadlineEmbedder) != local_model
    assert (bounded.index is index) == local_index
    assert isinstance(bounded.index, DeadlineIndex) != local_index
    # No deadline, nothing bounded.
    assert semantic.within(None) is semantic


def test_the_embedded_deployment_is_all_in_process(tmp_path: Any) -> None:
    settings = Settings(sqlite_path=str(tmp_path / "taisce.sqlite3"), embeddings="local")
    semantic = open_semantic(settings)
    assert semantic is not None
    assert semantic.local_model and semantic.local_index
    assert semantic.within(DEADLINE) is semantic
    # A model across the network is bounded even beside the embedded index.
    remote = Semantic(semantic.embedder, semantic.index, local_index=True)
    assert isinstance(remote.within(DEADLINE).embedder, DeadlineEmbedder)
