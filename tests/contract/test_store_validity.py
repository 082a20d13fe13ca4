"""The Store contract for time: contradictions close facts in put_facts, and
facts_about / passages_by_ids apply the recall filters. Runs on every adapter."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from taisce.domain.filters import FactFilter, MessageFilter
from taisce.domain.model import Fact
from taisce.domain.names import normalize_name
from tests.contract.factories import fact, message, unique, with_passages

ALL_ROLES = ("user", "assistant", "system", "tool")
T0 = "2020-01-01T00:00:00Z"
T1 = "2021-01-01T00:00:00Z"
T1_HALF = "2021-01-01T00:00:00.500000Z"
T2 = "2022-01-01T00:00:00Z"
T3 = "2023-01-01T00:00:00Z"


@pytest.fixture
def project() -> str:
    return unique("time")


def about(store: Any, project: str, *names: str, filters: FactFilter | None = None, **kw: Any):
    keys = [normalize_name(n) for n in names]
    return list(store.facts_about(project, keys, kw.get("roles", ALL_ROLES), 10_000, (), filters))


def validity(store: Any, project: str, subject: str) -> dict[str, tuple[str | None, str | None]]:
    return {
        f.id: (f.valid_from, f.valid_to)
        for f in store.facts_with_subject(project, normalize_name(subject))
    }


def lives(obj: str, **fields: Any) -> Fact:
    return fact("Ada", "lives in", obj, **fields)


# -- put_facts closes what a new fact contradicts -------------------------------------


def test_a_contradicting_fact_closes_the_open_one(store: Any, project: str) -> None:
    store.put_facts(project, [lives("Gothenburg", id="g", valid_from=T0)])
    store.put_facts(project, [lives("Cork", id="c", valid_from=T2)])
    assert validity(store, project, "Ada") == {"g": (T0, T2), "c": (T2, None)}
    # Nothing else about the closed fact changed, on both of its copies.
    closed = store.facts_with_subject(project, "ada")[0]
    assert closed == lives("Gothenburg", id="g", valid_from=T0, valid_to=T2)
    assert about(store, project, "Gothenburg") == [closed]


def test_the_start_is_when_it_was_recorded_without_valid_from(store: Any, project: str) -> None:
    store.put_facts(project, [lives("Gothenburg", id="g", recorded_at=T0)])
    store.put_facts(project, [lives("Cork", id="c", recorded_at=T1_HALF)])
    assert validity(store, project, "Ada")["g"] == (None, T1_HALF)


def test_another_role_never_closes_what_the_user_said(store: Any, project: str) -> None:
    store.put_facts(project, [lives("Gothenburg", id="g", valid_from=T0)])
    store.put_facts(project, [lives("Cork", id="c", role="tool", valid_from=T2)])
    store.put_facts(project, [fact("Ada", "likes", "Cork", id="l", valid_from=T2)])
    assert validity(store, project, "Ada") == {"g": (T0, None), "c": (T2, None), "l": (T2, None)}


def test_resending_a_stored_fact_changes_nothing(store: Any, project: str) -> None:
    g, c = lives("Gothenburg", id="g", valid_from=T0), lives("Cork", id="c", valid_from=T2)
    store.put_facts(project, [g, c])
    before = store.facts_with_subject(project, "ada")
    store.put_facts(project, [g])
    store.put_facts(project, [c, g])
    assert store.facts_with_subject(project, "ada") == before
    assert validity(store, project, "Ada") == {"g": (T0, T2), "c": (T2, None)}


def test_resending_a_mixed_batch_stores_it_once(store: Any, project: str) -> None:
    batch = [
        fact("Ada", "knows", "Bo", id="k"),
        lives("Gothenburg", id="g", valid_from=T0),
        fact("Bo", "likes", "tea", id="t", kind="value"),
        lives("Cork", id="c", valid_from=T2),
    ]
    store.put_facts(project, batch)
    store.put_facts(project, batch)
    store.put_facts(project, [*batch[2:], fact("Ada", "likes", "jazz", id="j", kind="value")])
    assert validity(store, project, "Ada") == {
        "k": (None, None),
        "g": (T0, T2),
        "c": (T2, None),
        "j": (None, None),
    }
    assert [f.id for f in about(store, project, "Bo")] == ["k", "t"]


def test_a_batch_closes_its_own_earlier_fact(store: Any, project: str) -> None:
    store.put_facts(project, [lives("Gothenburg", id="g"), lives("Cork", id="c")])
    at = fact("x", "y", "z").recorded_at
    assert validity(store, project, "Ada") == {"g": (None, at), "c": (None, None)}


def test_a_fact_out_of_time_order_fits_into_the_timeline(store: Any, project: str) -> None:
    store.put_facts(project, [lives("Gothenburg", id="g", valid_from=T0)])
    store.put_facts(project, [lives("Cork", id="c", valid_from=T2)])
    store.put_facts(project, [lives("Oslo", id="o", valid_from=T1)])
    assert validity(store, project, "Ada") == {"g": (T0, T1), "c": (T2, None), "o": (T1, T2)}


def test_a_failed_batch_closes_nothing(store: Any, project: str) -> None:
    store.put_facts(project, [lives("Gothenburg", id="g", valid_from=T0)])
    bad = dataclasses.replace(fact("Bo", "knows", "Cy"), statement=None)
    with pytest.raises(Exception):  # noqa: B017 - any error, as long as nothing changed
        store.put_facts(project, [lives("Cork", id="c", valid_from=T2), bad])
    assert validity(store, project, "Ada") == {"g": (T0, None)}


def test_closing_keeps_counts_and_names(store: Any, project: str) -> None:
    store.put_facts(project, [lives("Gothenburg", id="g", valid_from=T0)])
    store.put_facts(project, [lives("Cork", id="c", valid_from=T2)])
    # A closed fact is still stored: its names stay known, and it can be deleted.
    assert store.known_names(project, {"gothenburg", "cork"}, ["user"]) == {"gothenburg", "cork"}
    assert store.delete_fact(project, "g")
    assert store.known_names(project, {"gothenburg"}, ["user"]) == set()


# -- facts_about applies the filters ----------------------------------------------------


@pytest.fixture
def timeline(store: Any, project: str) -> Any:
    store.put_facts(
        project,
        [
            lives("Gothenburg", id="g", valid_from=T0, recorded_at=T0),
            fact("Ada", "knows", "Bo", id="k", recorded_at=T1),
            fact("Bo", "works at", "Acme", id="b", recorded_at=T1_HALF),
        ],
    )
    store.put_facts(project, [lives("Cork", id="c", valid_from=T2, recorded_at=T3)])
    return store


def ids(facts: list[Fact]) -> list[str]:
    return [f.id for f in facts]


def test_no_filter_returns_closed_facts_too(timeline: Any, project: str) -> None:
    assert ids(about(timeline, project, "Ada")) == ["g", "k", "c"]


@pytest.mark.parametrize(
    ("at", "expected"),
    [
        ("2019-12-31T23:59:59.999999Z", ["k"]),
        (T0, ["g", "k"]),
        ("2021-12-31T23:59:59.999999Z", ["g", "k"]),
        (T2, ["k", "c"]),
        ("9999-12-31T23:59:59.999999Z", ["k", "c"]),
    ],
)
def test_valid_at_keeps_facts_holding_then(
    timeline: Any, project: str, at: str, expected: list[str]
) -> None:
    assert ids(about(timeline, project, "Ada", filters=FactFilter(valid_at=at))) == expected


@pytest.mark.parametrize(
    ("after", "before", "expected"),
    [
        (T1, None, ["k", "c", "b"]),  # grouped by key: Ada's, then Bo's
        ("2021-01-01T00:00:00.000001Z", None, ["c", "b"]),
        (None, T1, ["g"]),
        (None, T1_HALF, ["g", "k"]),
        (T1, T1_HALF, ["k"]),
        (T1_HALF, T3, ["b"]),
    ],
)
def test_the_recording_window_is_after_inclusive_before_exclusive(
    timeline: Any, project: str, after: str | None, before: str | None, expected: list[str]
) -> None:
    window = FactFilter(recorded_after=after, recorded_before=before)
    assert ids(about(timeline, project, "Ada", "Bo", filters=window)) == expected


def test_subjects_keep_facts_with_one_at_either_end(timeline: Any, project: str) -> None:
    only_bo = FactFilter(subjects=frozenset({"bo"}))
    assert ids(about(timeline, project, "Ada", "Acme", filters=only_bo)) == ["k", "b"]
    only_cork = FactFilter(subjects=frozenset({"cork", "nobody"}))
    assert ids(about(timeline, project, "Ada", filters=only_cork)) == ["c"]


def test_filters_combine_and_keep_roles_and_limits(timeline: Any, project: str) -> None:
    both = FactFilter(valid_at=T3, subjects=frozenset({"ada"}), recorded_after=T1)
    assert ids(about(timeline, project, "Ada", filters=both)) == ["k", "c"]
    assert ids(about(timeline, project, "Ada", filters=both, roles=["tool"])) == []
    keys = [normalize_name("Ada")]
    assert ids(timeline.facts_about(project, keys, ALL_ROLES, 1, (), both)) == ["k"]
    assert ids(timeline.facts_about(project, keys, ALL_ROLES, 9, ["k"], both)) == ["c"]


def test_a_filter_read_is_lazy_past_many_hidden_facts(store: Any, project: str) -> None:
    hidden = [fact("Hub", "p", f"o{n}", recorded_at=T0) for n in range(120)]
    shown = [fact("Hub", "p", f"late{n}", recorded_at=T3) for n in range(3)]
    store.put_facts(project, hidden + shown)
    late = FactFilter(recorded_after=T2)
    found = store.facts_about(project, ["hub"], ALL_ROLES, 2, (), late)
    assert ids(list(found)) == ids(shown[:2])


# -- passages_by_ids applies the message filter -----------------------------------------


def test_passages_of_messages_the_filter_admits(store: Any, project: str) -> None:
    old = message("Ada lived in Gothenburg.", id="old", occurred_at=T0, recorded_at=T1)
    new = message("Ada lives in Cork.", id="new", occurred_at=T2, recorded_at=T3)
    messages, passages = with_passages(old, new)
    store.put_messages(project, messages, passages)
    wanted = ["new#0", "old#0"]
    assert [p.id for p in store.passages_by_ids(project, wanted)] == wanted
    assert [p.id for p in store.passages_by_ids(project, wanted, MessageFilter())] == wanted

    def seen(**kw: str) -> list[str]:
        return [p.id for p in store.passages_by_ids(project, wanted, MessageFilter(**kw))]

    assert seen(occurred_by=T1) == ["old#0"]
    assert seen(occurred_by=T2) == wanted
    assert seen(recorded_after=T2) == ["new#0"]
    assert seen(recorded_before=T3) == ["old#0"]
    assert seen(occurred_by=T0, recorded_after=T2) == []


def test_passages_carry_their_message_time_when_asked(store: Any, project: str) -> None:
    # Recall reads the time when the question names a month (domain/passage_ranking.py).
    old = message("Ada lived in Gothenburg.", id="old", occurred_at=T0, recorded_at=T1)
    new = message("Ada lives in Cork.", id="new", occurred_at=T2, recorded_at=T3)
    messages, passages = with_passages(old, new)
    store.put_messages(project, messages, passages)
    found = store.passages_by_ids(project, ["new#0", "old#0"], times=True)
    assert [(p.id, p.occurred_at) for p in found] == [("new#0", T2), ("old#0", T0)]
    filtered = store.passages_by_ids(project, ["old#0"], MessageFilter(occurred_by=T1), True)
    assert [(p.id, p.occurred_at) for p in filtered] == [("old#0", T0)]


def test_a_closing_write_marks_the_closed_facts_entities_for_their_reports(store: Any) -> None:
    project = unique("proj")
    store.put_facts(project, [fact("Atlas", "lives in", "Cork", valid_from="2020-01-01T00:00:00Z")])
    store.clear_dirty(project, store.dirty_entities(project))
    store.put_facts(
        project, [fact("Atlas", "lives in", "Dublin", valid_from="2024-01-01T00:00:00Z")]
    )
    marked = {(role, key) for role, key, _ in store.dirty_entities(project)}
    assert {("user", "atlas"), ("user", "dublin"), ("user", "cork")} <= marked
