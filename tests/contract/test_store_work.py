"""The Store contract for the worker's side: dirty marks, pending vectors and reports.

Runs on every adapter of conftest.STORES, like test_store.py. Projects are unique per
test, so the "projects with work" lists are checked for membership only.
"""

from __future__ import annotations

from typing import Any

import pytest

from taisce.api.bodies import report
from taisce.domain.model import PendingVector, Report
from taisce.domain.reports import build_reports
from tests.contract.factories import fact, message, unique, with_passages


@pytest.fixture
def project() -> str:
    return unique("proj")


@pytest.fixture
def other() -> str:
    return unique("other")


def clear_all(store: Any, project: str) -> None:
    store.clear_dirty(project, store.dirty_entities(project))
    while pending := store.pending_vectors(project, 100):
        store.clear_pending_vectors(project, pending)


# -- dirty marks ---------------------------------------------------------------------


def test_a_stored_fact_marks_both_entities_dirty_for_its_role(store: Any, project: str) -> None:
    store.put_facts(project, [fact("Atlas", "works at", "Acme Corp", role="tool")])
    store.put_facts(project, [fact("Atlas", "is aged", "41", kind="value")])
    marks = store.dirty_entities(project)
    assert [(role, key) for role, key, _ in marks] == [
        ("tool", "acme corp"),
        ("tool", "atlas"),
        ("user", "atlas"),
    ]
    assert project in store.dirty_projects()


def test_clearing_the_marks_read_leaves_no_work(store: Any, project: str) -> None:
    store.put_facts(project, [fact("Atlas", "works at", "Acme Corp")])
    store.clear_dirty(project, store.dirty_entities(project))
    assert store.dirty_entities(project) == []
    assert project not in store.dirty_projects()


def test_a_mark_rewritten_after_it_was_read_stays(store: Any, project: str) -> None:
    store.put_facts(project, [fact("Atlas", "works at", "Acme Corp")])
    read = store.dirty_entities(project)
    store.put_facts(project, [fact("Atlas", "lives in", "Dublin")])  # during the rebuild
    store.clear_dirty(project, read)
    left = {(role, key) for role, key, _ in store.dirty_entities(project)}
    assert left == {("user", "atlas"), ("user", "dublin")}
    assert project in store.dirty_projects()


def test_a_deleted_fact_marks_both_entities_dirty(store: Any, project: str) -> None:
    stored = fact("Atlas", "works at", "Acme Corp", role="assistant")
    store.put_facts(project, [stored])
    store.clear_dirty(project, store.dirty_entities(project))
    assert store.delete_fact(project, stored.id)
    marks = {(role, key) for role, key, _ in store.dirty_entities(project)}
    assert marks == {("assistant", "atlas"), ("assistant", "acme corp")}


def test_a_fact_stored_again_marks_nothing(store: Any, project: str) -> None:
    stored = fact("Atlas", "works at", "Acme Corp")
    store.put_facts(project, [stored])
    clear_all(store, project)
    store.put_facts(project, [stored])  # a retried request
    assert store.dirty_entities(project) == []
    assert store.pending_vectors(project, 100) == []


def test_marks_stay_in_their_project(store: Any, project: str, other: str) -> None:
    store.put_facts(project, [fact("Atlas", "works at", "Acme Corp")])
    store.put_messages(project, *with_passages(message("Atlas likes tea.")))
    assert store.dirty_entities(other) == []
    assert store.pending_vectors(other, 100) == []
    store.clear_dirty(other, store.dirty_entities(project))  # another project's marks
    assert len(store.dirty_entities(project)) == 2


# -- pending vectors -----------------------------------------------------------------


def test_passages_and_names_wait_for_their_vectors(store: Any, project: str) -> None:
    messages, passages = with_passages(message("Atlas likes tea.", role="assistant"))
    store.put_messages(project, messages, passages)
    stored = fact("Atlas", "works at", "Acme Corp", role="tool")
    store.put_facts(project, [stored])
    pending = store.pending_vectors(project, 100)
    assert set(pending) == {
        # A passage's mark carries its message's storing position (the project's first)
        # and its message's time (recall's month and day factors read it from the hits).
        *(
            PendingVector("passage", p.id, p.quote, "assistant", 1, messages[0].occurred_at)
            for p in passages
        ),
        PendingVector("entity", "tool:atlas", "Atlas", "tool"),
        PendingVector("entity", "tool:acme corp", "Acme Corp", "tool"),
        # A fact's statement, for recall's fact ranking.
        PendingVector("fact", stored.id, "Atlas works at Acme Corp", "tool"),
    }
    assert project in store.vector_projects()


def test_pending_vectors_come_a_batch_at_a_time_and_clear(store: Any, project: str) -> None:
    store.put_messages(project, *with_passages(*(message(f"Note {n}.") for n in range(5))))
    first = store.pending_vectors(project, 3)
    assert len(first) == 3
    store.clear_pending_vectors(project, first)
    rest = store.pending_vectors(project, 100)
    assert len(rest) == 2 and not set(rest) & set(first)
    assert project in store.vector_projects()
    store.clear_pending_vectors(project, rest)
    assert store.pending_vectors(project, 100) == []
    assert project not in store.vector_projects()


def test_a_vector_mark_with_other_text_than_read_stays(store: Any, project: str) -> None:
    store.put_messages(project, *with_passages(message("Atlas likes tea.")))
    (mark,) = store.pending_vectors(project, 100)
    store.clear_pending_vectors(project, [PendingVector(mark.kind, mark.id, "stale", mark.role)])
    assert store.pending_vectors(project, 100) == [mark]


# -- reports ---------------------------------------------------------------------------


def reports_of(*facts: Any) -> list[Report]:
    return build_reports(list(facts))


def wire(reports: list[Report]) -> list[dict[str, object]]:
    return [report(r) for r in reports]


def test_held_facts_are_those_stored_and_not_deleted(store: Any, project: str, other: str) -> None:
    a, b = fact("Atlas", "works at", "Acme"), fact("Bob", "knows", "Atlas")
    store.put_facts(project, [a, b])
    assert store.held_facts(project, [a.id, b.id, "fact_unknown"]) == {a.id, b.id}
    assert store.held_facts(other, [a.id, b.id]) == set()
    assert store.delete_fact(project, a.id)
    assert store.held_facts(project, [a.id, b.id]) == {b.id}


def test_reports_are_stored_and_read_by_id_and_by_entity(store: Any, project: str) -> None:
    facts = [
        fact("Atlas", "works at", "Acme Corp", message_id="m1"),
        fact("Acme Corp", "is based in", "Dublin", message_id="m2"),
    ]
    reports = reports_of(*facts)
    assert reports and all(r.role == "user" for r in reports)
    assert store.replace_reports(project, "user", set(), reports) == []
    ids = [r.id for r in reports]
    assert store.reports_by_ids(project, [*reversed(ids), "rep_unknown"]) == list(reversed(reports))
    level0 = [r for r in reports if r.level == 0 and "atlas" in r.entity_keys]
    assert wire(store.reports_of_entity(project, "atlas", ["user", "tool"])) == wire(level0)
    assert store.reports_of_entity(project, "atlas", ["tool"]) == []
    component = reports[0].component
    assert store.report_components(project, "user", {"dublin", "nobody"}) == {component}
    assert store.report_components(project, "tool", {"dublin"}) == set()


def test_replacing_a_component_drops_its_old_reports(store: Any, project: str) -> None:
    old = reports_of(fact("Atlas", "works at", "Acme Corp"))
    store.replace_reports(project, "user", set(), old)
    new = reports_of(
        fact("Atlas", "works at", "Acme Corp"),
        fact("Atlas", "knows", "Bob"),
        fact("Bob", "lives in", "Dublin"),
    )
    stale = store.report_components(project, "user", {"atlas", "bob"})
    dropped = store.replace_reports(project, "user", stale, new)
    assert set(dropped) == {r.id for r in old} - {r.id for r in new}
    assert store.reports_by_ids(project, [r.id for r in old if r.id in dropped]) == []
    assert store.reports_by_ids(project, [r.id for r in new]) == new
    of_atlas = store.reports_of_entity(project, "atlas", ["user"])
    assert wire(of_atlas) == wire([r for r in new if r.level == 0 and "atlas" in r.entity_keys])


def test_dropping_reports_removes_them_everywhere(store: Any, project: str) -> None:
    old = reports_of(fact("Atlas", "works at", "Acme Corp"))
    store.replace_reports(project, "user", set(), old)
    stale = store.report_components(project, "user", {"atlas"})
    assert store.replace_reports(project, "user", stale, []) == [r.id for r in old]
    assert store.reports_by_ids(project, [r.id for r in old]) == []
    assert store.reports_of_entity(project, "atlas", ["user"]) == []
    assert store.report_components(project, "user", {"atlas", "acme corp"}) == set()


def test_reports_stay_in_their_project_and_role(store: Any, project: str, other: str) -> None:
    reports = reports_of(fact("Atlas", "works at", "Acme Corp", role="tool"))
    store.replace_reports(project, "tool", set(), reports)
    assert store.reports_by_ids(other, [r.id for r in reports]) == []
    assert store.reports_of_entity(other, "atlas", ["tool"]) == []
    assert store.report_components(other, "tool", {"atlas"}) == set()
    assert store.report_components(project, "user", {"atlas"}) == set()


def test_held_facts_once_each_and_per_project(store: Any, project: str, other: str) -> None:
    # The worker asks after embedding fact statements: a fact deleted (or erased) while
    # it was embedded must not keep its vector, a fact still held must.
    store.put_facts(project, [fact("Atlas", "works at", "Acme", id="h1")])
    store.put_facts(project, [fact("Atlas", "likes", "tea", id="h2")])
    store.put_facts(other, [fact("Bob", "knows", "Carol", id="h3")])
    assert store.delete_fact(project, "h2")

    assert store.held_facts(project, ["h1", "h2", "h3", "h1", "never"]) == {"h1"}
    assert store.held_facts(other, ["h3"]) == {"h3"}
    assert store.held_facts(project, []) == set()
