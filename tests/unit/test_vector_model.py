"""The embedded vector index records the model that made its vectors. Opened with
another model (TAISCE_EMBEDDINGS changed), the old vectors, which do not compare with
the new model's, are dropped and everything is marked, so the worker embeds it again;
opened with the same model, nothing is touched."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from taisce.adapters.sqlite.store import SqliteStore
from taisce.adapters.sqlite.vectors import SqliteVectorIndex
from taisce.api.wiring import _adopt_model, open_semantic
from taisce.domain.controls import Limits
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.domain.model import VectorItem
from taisce.domain.recall import Semantic
from taisce.local.worker import Worker
from taisce.service.memory import Memory
from taisce.settings import load_settings

DIMS = 4


class Embedder:
    """A stand-in model: each model points every text one fixed way, so whose vector an
    item holds is visible in a search."""

    dimensions = DIMS

    def __init__(self, name: str, direction: list[float]) -> None:
        self.name = name
        self.direction = direction

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [list(self.direction) for _ in texts]


OLD = Embedder("old", [1.0, 0.0, 0.0, 0.0])
NEW = Embedder("new", [0.0, 1.0, 0.0, 0.0])


def _memory(path: Path, embedder: Embedder) -> tuple[SqliteStore, SqliteVectorIndex, Memory]:
    store, index = SqliteStore(path), SqliteVectorIndex(path, DIMS)
    return store, index, Memory(store, Limits(), semantic=Semantic(embedder, index))


def _stored(memory: Memory) -> None:
    memory.store_messages(
        "p",
        MessagesRequest.model_validate(
            {"messages": [{"id": "m1", "role": "user", "content": "Atlas likes tea."}]}
        ),
    )
    memory.store_facts(
        "p",
        FactsRequest.model_validate(
            {
                "facts": [
                    {
                        "subject": "Atlas",
                        "predicate": "likes",
                        "object": "tea",
                        "source_role": "user",
                    }
                ]
            }
        ),
    )


def _settle(memory: Memory) -> None:
    worker = Worker(memory)
    for _ in range(10):
        worker.run_once()
        if not memory.work_pending():
            return
    raise AssertionError("work still pending")


def _directions(index: SqliteVectorIndex, kind: str) -> dict[str, list[float]]:
    rows = index.file.db().execute(
        "SELECT id, vector FROM vectors WHERE project = 'p' AND kind = ?", (kind,)
    )
    import numpy as np

    return {i: np.frombuffer(v, dtype=np.float32).tolist() for i, v in rows}


def test_a_new_model_drops_the_old_vectors_and_the_worker_embeds_everything_again(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.sqlite3"
    store, index, memory = _memory(path, OLD)
    _adopt_model(store, index, "old/4")
    _stored(memory)
    _settle(memory)
    assert index.recorded_model() == "old/4"
    before = _directions(index, "passage")
    assert before and all(v == OLD.direction for v in before.values())
    # Fact statements keep their vectors (the worker once deleted them as "vanished").
    assert _directions(index, "fact") and _directions(index, "entity")

    store, index, memory = _memory(path, NEW)  # the next start, another model
    _adopt_model(store, index, "new/4")

    assert index.recorded_model() == "new/4"
    for kind in ("passage", "fact", "entity"):
        assert _directions(index, kind) == {}, kind
    # Nothing of the new model's is searched against the old model's vectors meanwhile.
    assert index.search("p", "passage", NEW.direction, 10) == []
    pending = {(v.kind, v.id) for v in store.pending_vectors("p", 100)}
    assert ("passage", next(iter(before))) in pending
    assert {kind for kind, _ in pending} == {"passage", "fact", "entity"}

    _settle(memory)
    after = _directions(index, "passage")
    assert after.keys() == before.keys()
    assert all(v == NEW.direction for v in after.values())
    assert [h.id for h in index.search("p", "passage", NEW.direction, 10)] == list(after)


def test_the_same_model_touches_nothing(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite3"
    store, index, memory = _memory(path, OLD)
    _adopt_model(store, index, "old/4")
    _stored(memory)
    _settle(memory)
    held = _directions(index, "passage")

    store, index, memory = _memory(path, OLD)
    _adopt_model(store, index, "old/4")

    assert _directions(index, "passage") == held
    assert store.pending_vectors("p", 100) == []


def test_a_folder_from_before_models_were_recorded_keeps_its_vectors(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite3"
    store, index = SqliteStore(path), SqliteVectorIndex(path, DIMS)
    index.upsert("p", "passage", [VectorItem("m1#0", OLD.direction, "user", "Atlas likes tea.")])
    assert index.recorded_model() is None

    _adopt_model(store, index, "local-minilm/4")

    assert index.recorded_model() == "local-minilm/4"
    assert [h.id for h in index.search("p", "passage", OLD.direction, 10)] == ["m1#0"]
    assert store.pending_vectors("p", 100) == []


def test_the_service_records_the_configured_model(tmp_path: Path) -> None:
    settings = load_settings({"TAISCE_EMBEDDINGS": "local", "TAISCE_DATA_DIR": str(tmp_path)})
    store = SqliteStore(settings.sqlite_path)
    semantic = open_semantic(settings, store)
    assert semantic is not None  # the model itself loads on first use, not here
    assert isinstance(semantic.index, SqliteVectorIndex)
    assert semantic.index.recorded_model() == "local-minilm/384"


@pytest.mark.parametrize(("setting", "inline"), [(None, True), ("false", False), ("true", True)])
def test_a_local_model_embeds_on_write_unless_told_not_to(
    tmp_path: Path, setting: str | None, inline: bool
) -> None:
    environ = {"TAISCE_EMBEDDINGS": "local", "TAISCE_DATA_DIR": str(tmp_path)}
    if setting is not None:
        environ["TAISCE_EMBED_ON_WRITE"] = setting
    semantic = open_semantic(load_settings(environ))
    assert semantic is not None and semantic.embed_on_write is inline
