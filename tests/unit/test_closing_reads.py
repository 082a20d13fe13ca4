"""What both stores read before planning a batch's closings (domain.validity
keyed_ids and closing_reads)."""

from __future__ import annotations

from taisce.domain.validity import ClosingReads, closing_reads, keyed_ids, sortable
from tests.contract.factories import fact

T1 = "2021-01-01T00:00:00Z"
T2 = "2022-01-01T00:00:00Z"


def test_only_the_ids_that_can_contradict_are_checked_each_once() -> None:
    lives = fact("Ada", "lives in", "Cork", id="a")
    likes = fact("Ada", "likes", "tea", id="b", kind="value")
    assert keyed_ids([lives, likes, lives]) == ["a"]
    assert keyed_ids([likes]) == []


def test_new_first_copies_in_order_and_the_earliest_start_per_subject_and_role() -> None:
    later = fact("Ada", "lives in", "Cork", id="a", valid_from=T2)
    again = fact("Ada", "lives in", "Paris", id="a", valid_from=T1)  # a repeated id
    earlier = fact("Ada", "works at", "Acme", id="b", valid_from=T1)
    tool = fact("Ada", "lives in", "Rome", id="c", role="tool", valid_from=T2)
    other = fact("Bo", "likes", "tea", id="d", kind="value")
    stored = fact("Ada", "lives in", "Oslo", id="s")
    reads = closing_reads([later, again, earlier, tool, other, stored], stored={"s"})
    assert reads == ClosingReads(
        [later, earlier, tool, other],
        {("ada", "user"): sortable(T1), ("ada", "tool"): sortable(T2)},
    )


def test_a_batch_all_stored_reads_nothing() -> None:
    lives = fact("Ada", "lives in", "Cork", id="a")
    assert closing_reads([lives], stored={"a"}) == ClosingReads([], {})
