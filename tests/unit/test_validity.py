"""When facts hold: single-valued predicates, contradictions, and the filters' rules."""

from __future__ import annotations

import dataclasses

from taisce.domain.filters import FactFilter, MessageFilter
from taisce.domain.validity import (
    SINGLE_VALUED_PREDICATES,
    contradiction_key,
    plan_closings,
    sortable,
    start_of,
    unsortable,
    valid_at,
)
from tests.contract.factories import fact

T0 = "2020-01-01T00:00:00Z"
T1 = "2021-01-01T00:00:00Z"
T2 = "2022-01-01T00:00:00Z"
T3 = "2023-01-01T00:00:00Z"


def lives(obj: str, *, id: str, role: str = "user", **fields: object):
    return fact("Ada", "lives in", obj, id=id, role=role, **fields)


def valid_to(facts, fact_id: str) -> str | None:
    return next(f.valid_to for f in facts if f.id == fact_id)


# -- which predicates ---------------------------------------------------------------


def test_the_list_is_normalised_and_short() -> None:
    assert all(p == p.casefold().strip() for p in SINGLE_VALUED_PREDICATES)
    assert {"lives in", "works at", "works for", "is based in", "is married to"} <= (
        SINGLE_VALUED_PREDICATES
    )


def test_the_role_is_part_of_the_key() -> None:
    user, tool = lives("Cork", id="a"), lives("Cork", id="b", role="tool")
    assert contradiction_key(user) != contradiction_key(tool)
    assert contradiction_key(fact("Ada", "knows", "Bo")) is None


# -- closing ------------------------------------------------------------------------


def test_a_new_fact_closes_the_open_one_at_its_start() -> None:
    old = lives("Gothenburg", id="old", valid_from=T0)
    new = lives("Cork", id="new", valid_from=T2)
    planned, closings = plan_closings([old], [new])
    assert planned == [new]
    assert [(c.fact, c.valid_to, c.by) for c in closings] == [(old, T2, "new")]


def test_without_valid_from_the_start_is_when_it_was_recorded() -> None:
    old = lives("Gothenburg", id="old", recorded_at=T0)
    new = lives("Cork", id="new", recorded_at=T1)
    _, closings = plan_closings([old], [new])
    assert [c.valid_to for c in closings] == [T1]


def test_another_role_or_predicate_or_subject_closes_nothing() -> None:
    old = lives("Gothenburg", id="old", valid_from=T0)
    others = [
        lives("Cork", id="tool", role="tool", valid_from=T1),
        fact("Ada", "likes", "Cork", id="likes", valid_from=T1),
        fact("Bo", "lives in", "Cork", id="bo", valid_from=T1),
    ]
    planned, closings = plan_closings([old], others)
    assert planned == others and closings == []


def test_the_same_object_said_again_closes_nothing() -> None:
    old = lives("Cork", id="old", valid_from=T0)
    again = lives("  CORK ", id="again", valid_from=T1)
    assert plan_closings([old], [again]) == ([again], [])


def test_a_fact_already_closed_before_the_start_stays_as_it_is() -> None:
    old = lives("Gothenburg", id="old", valid_from=T0, valid_to=T1)
    new = lives("Cork", id="new", valid_from=T2)
    assert plan_closings([old], [new]) == ([new], [])


def test_a_fact_ending_later_is_ended_at_the_new_start() -> None:
    old = lives("Gothenburg", id="old", valid_from=T0, valid_to=T3)
    new = lives("Cork", id="new", valid_from=T1)
    _, closings = plan_closings([old], [new])
    assert [c.valid_to for c in closings] == [T1]


def test_a_fact_out_of_time_order_is_ended_by_the_later_one() -> None:
    current = lives("Cork", id="current", valid_from=T2)
    earlier = lives("Gothenburg", id="earlier", valid_from=T0)
    planned, closings = plan_closings([current], [earlier])
    assert closings == []
    assert planned == [dataclasses.replace(earlier, valid_to=T2)]


def test_a_fact_between_two_fits_into_the_timeline() -> None:
    first = lives("Gothenburg", id="first", valid_from=T0, valid_to=T2)
    last = lives("Cork", id="last", valid_from=T2)
    between = lives("Oslo", id="between", valid_from=T1)
    planned, closings = plan_closings([first, last], [between])
    assert [(c.fact.id, c.valid_to) for c in closings] == [("first", T1)]
    assert valid_to(planned, "between") == T2


def test_in_one_batch_the_later_fact_closes_the_earlier() -> None:
    a = lives("Gothenburg", id="a", recorded_at=T1)
    b = lives("Cork", id="b", recorded_at=T1)
    planned, closings = plan_closings([], [a, b])
    assert closings == []
    assert planned == [dataclasses.replace(a, valid_to=T1), b]


def test_a_stored_fact_closed_twice_in_one_batch_is_closed_once_at_the_end() -> None:
    old = lives("Gothenburg", id="old", valid_from=T0)
    later = lives("Cork", id="later", valid_from=T3)
    sooner = lives("Oslo", id="sooner", valid_from=T1)
    planned, closings = plan_closings([old], [later, sooner])
    assert [(c.fact, c.valid_to, c.by) for c in closings] == [(old, T1, "sooner")]
    assert valid_to(planned, "sooner") == T3
    assert valid_to(planned, "later") is None


def test_a_historic_fact_recorded_after_it_ended_starts_by_its_end() -> None:
    ended = lives("Gothenburg", id="ended", valid_to=T1, recorded_at=T3)
    assert start_of(ended) == T1
    new = lives("Cork", id="new", valid_from=T2)
    assert plan_closings([ended], [new]) == ([new], [])


# -- time order and the filters -------------------------------------------------------


def test_sortable_times_sort_as_times() -> None:
    times = ["2024-05-01T12:00:00.250000Z", "2024-05-01T12:00:00Z", "2024-05-01T11:59:59.999999Z"]
    assert sorted(times, key=sortable) == [times[2], times[1], times[0]]
    assert all(unsortable(sortable(t)) == t for t in times)


def test_valid_at_is_inclusive_at_the_start_and_exclusive_at_the_end() -> None:
    f = lives("Cork", id="x", valid_from=T1, valid_to=T2)
    assert [valid_at(f, t) for t in (T0, T1, T2, T3)] == [False, True, False, False]
    assert valid_at(lives("Cork", id="open"), T0)


def test_fact_filter_admits_by_time_window_and_subject() -> None:
    f = fact("Ada", "lives in", "Cork", recorded_at=T1)
    assert FactFilter(valid_at=T2).admits(f)
    assert FactFilter(recorded_after=T1, recorded_before=T2).admits(f)
    assert not FactFilter(recorded_after="2021-01-01T00:00:00.000001Z").admits(f)
    assert not FactFilter(recorded_before=T1).admits(f)
    assert FactFilter(subjects=frozenset({"cork"})).admits(f)
    assert not FactFilter(subjects=frozenset({"bo"})).admits(f)


def test_message_filter_uses_when_it_occurred_and_was_recorded() -> None:
    assert MessageFilter(occurred_by=T1).admits(T1, T3)
    assert not MessageFilter(occurred_by=T1).admits(T2, T0)
    assert not MessageFilter(recorded_before=T1).admits(T0, T1)
    assert not MessageFilter().active
