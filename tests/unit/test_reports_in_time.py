"""Reports sum up the facts that hold when they are built: a closed fact drops out
of them once the worker rebuilds after the write that closed it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from taisce.adapters.sqlite.store import SqliteStore
from taisce.domain.controls import Limits
from taisce.domain.ingest import FactsRequest
from taisce.service.memory import Memory


def test_a_closed_fact_leaves_the_reports(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "t.sqlite3")
    memory = Memory(store, Limits(), clock=lambda: datetime(2026, 1, 1, tzinfo=UTC))

    def said(obj: str) -> None:
        fact = {"subject": "Ada", "predicate": "lives in", "object": obj, "source_role": "user"}
        memory.store_facts("p", FactsRequest.model_validate({"facts": [fact]}))
        memory.rebuild_reports("p")

    said("Gothenburg")
    assert any("Gothenburg" in r.summary for r in store.reports_of_entity("p", "ada", ["user"]))
    said("Cork")
    summaries = [r.summary for r in store.reports_of_entity("p", "ada", ["user"])]
    assert any("Cork" in s for s in summaries)
    assert not any("Gothenburg" in s for s in summaries)
    assert store.reports_of_entity("p", "gothenburg", ["user"]) == []
    assert not store.dirty_projects()
    store.close()
