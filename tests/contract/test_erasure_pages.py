"""An erasure planned a page at a time (domain/erasure_pages.py): the project's pages
read every item once on every store; on a store that defers erasure (DynamoDB) the
plan never reads the whole project at once, stops between pages when time runs out,
and a retry goes on from the cursor kept in the pending erasure instead of reading
the project again from the start."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from taisce.domain import erasure_pages
from taisce.domain.controls import Limits
from taisce.service import erasure_cases
from taisce.service.memory import Memory
from tests.contract.factories import unique
from tests.contract.test_erasure_requests import seed


def every_page(read: Callable[[str | None], tuple[list[Any], str | None]]) -> list[Any]:
    out: list[Any] = []
    after: str | None = None
    while True:
        page, after = read(after)
        out += page
        if after is None:
            return out


@pytest.mark.parametrize("size", [1, 3, 50])
def test_the_project_pages_hold_every_item_once(store: Any, size: int) -> None:
    project = unique("pages")
    seed(store, project, facts=7, lines=5)
    facts = every_page(lambda a: store.fact_page(project, a, size))
    assert sorted(f.id for f in facts) == sorted(f.id for f in store.project_facts(project))
    keys = every_page(lambda a: store.entity_key_page(project, a, size))
    assert sorted(keys) == sorted(store.project_entities(project))
    messages = every_page(lambda a: store.message_page_of_project(project, a, size))
    assert sorted(messages, key=lambda m: m.id) == sorted(
        store.project_messages(project), key=lambda m: m.id
    )


@pytest.fixture
def small_pages(monkeypatch: pytest.MonkeyPatch) -> list[erasure_pages.PlanCursor]:
    """Pages of 1 entity key, 2 facts, 3 messages, each saved; every page planned is
    recorded (by its cursor)."""
    monkeypatch.setattr(erasure_pages, "ENTITY_PAGE", 1)
    monkeypatch.setattr(erasure_pages, "FACT_PAGE", 2)
    monkeypatch.setattr(erasure_pages, "MESSAGE_PAGE", 3)
    monkeypatch.setattr(erasure_cases, "SAVE_EVERY", 1)
    planned: list[erasure_pages.PlanCursor] = []
    real = erasure_cases.plan_page

    def counted(store: Any, project: str, names: Any, cursor: Any, spared: Any = ()) -> Any:
        planned.append(cursor)
        return real(store, project, names, cursor, spared)

    monkeypatch.setattr(erasure_cases, "plan_page", counted)
    return planned


def test_a_paged_erasure_never_reads_the_whole_project(
    dynamo: Any, small_pages: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = unique("paged")
    seed(dynamo, project, facts=7, lines=8)
    for whole in ("project_facts", "project_entities", "project_messages"):
        monkeypatch.setattr(dynamo, whole, _refused)
    memory = Memory(dynamo, Limits(bundle_characters=16_000, max_rows=200))
    done = memory.erase_now(project, "Atlas")
    assert done["facts"] == 7 and done["entities"] == 1 and done["messages"] == 8
    assert len(small_pages) > 10


def _refused(*_: Any) -> None:
    raise AssertionError("the erasure read the whole project at once")


def test_a_paged_erasure_stops_for_time_and_resumes_from_its_cursor(
    dynamo: Any, small_pages: list[Any]
) -> None:
    memory = Memory(dynamo, Limits(bundle_characters=16_000, max_rows=200))
    # The pages of an erasure done in one go, for the same memory.
    whole = unique("whole")
    seed(dynamo, whole, facts=7, lines=8)
    expected = memory.erase_now(whole, "Atlas")
    small_pages.clear()

    project = unique("resumed")
    seed(dynamo, project, facts=7, lines=8)
    accepted = memory.request_erasure(project, "Atlas", defer=True)
    # Time for 12 pages (the first look sets the hold), then none.
    clock = iter([1000.0] * 13 + [0.0] * 100)
    partial = memory.complete_erasure(project, accepted.id, lambda: next(clock))
    assert partial is not None and partial.status == "pending"
    assert len(small_pages) == 12
    held = dynamo.pending_erasure(project, accepted.id)
    assert held.cursor is not None and held.counts == partial.counts
    assert dynamo.erasures(project) == []
    # The retry starts at the cursor kept and reads no page the first attempt read.
    # (How many pages an erasure takes depends on where the project's random ids fall
    # in the store's order, so it is not compared with another project's.)
    first = [c.dumps() for c in small_pages]
    small_pages.clear()
    done = memory.complete_erasure(project, accepted.id)
    assert done is not None and done.status == "done"
    retried = [c.dumps() for c in small_pages]
    assert retried[0] == held.cursor
    assert not set(first) & set(retried)
    assert done.counts == expected
    assert [r.counts() for r in dynamo.erasures(project)] == [done.counts]
    assert not [f for f in dynamo.project_facts(project) if "atlas" in f.statement.lower()]
