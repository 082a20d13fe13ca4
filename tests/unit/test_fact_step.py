"""domain.fact_step: which end of a fact the walk reached it through."""

from __future__ import annotations

import pytest

from taisce.domain.fact_step import _reached_through
from tests.contract.factories import fact


def test_the_end_ranked_first_and_the_subject_on_a_tie() -> None:
    ab, ba, aa = fact("A", "knows", "B"), fact("B", "knows", "A"), fact("A", "knows", "A")
    order = {"a": 0, "b": 1}
    assert _reached_through(ab, order) == "a"
    assert _reached_through(ba, order) == "a"
    assert _reached_through(aa, order) == "a"
    assert _reached_through(ab, {"b": 0}) == "b"
    assert _reached_through(ba, {"b": 0}) == "b"
    assert _reached_through(fact("A", "likes", "tea", kind="value"), order) == "a"


def test_a_fact_with_no_end_in_the_walk_is_refused() -> None:
    with pytest.raises(ValueError):
        _reached_through(fact("C", "knows", "D"), {"a": 0})
