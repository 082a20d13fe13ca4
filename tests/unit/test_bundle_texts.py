"""A bundle never holds two items with the same text: a copy is left out at no cost,
and the items after it still go in."""

from __future__ import annotations

from taisce.domain.budget import Bundle, fact_characters, passage_characters
from taisce.domain.model import Passage
from taisce.domain.recalled import RecalledFact, RecalledPassage
from tests.contract.factories import fact


def passage(pid: str, quote: str) -> RecalledPassage:
    return RecalledPassage(Passage(pid, pid, "user", None, 0, len(quote), quote))


def test_a_statement_said_again_is_left_out_at_no_cost() -> None:
    bundle = Bundle(max_characters=1_000, max_rows=10)
    first = fact("Atlas", "works at", "Acme Corp", id="a")
    copy = fact("Atlas", "works at", "Acme Corp", id="b", source_role="tool")
    other = fact("Atlas", "knows", "Bea", id="c")
    for f in (first, copy, other):
        assert bundle.add("facts", RecalledFact(f), fact_characters(f))
    assert [i.fact.id for i in bundle.facts] == ["a", "c"]
    assert bundle.characters == fact_characters(first) + fact_characters(other)
    assert bundle.rows == 2


def test_a_quote_is_the_same_text_whatever_its_case_and_spacing() -> None:
    bundle = Bundle(max_characters=1_000, max_rows=10)
    quoted = fact("Atlas", "works at", "Acme Corp", id="a", quote="I work at Acme Corp.")
    bundle.add("facts", RecalledFact(quoted), fact_characters(quoted))
    for item in (passage("m1#0", "I work at  acme corp."), passage("m2#0", "Lunch at noon.")):
        assert bundle.add("passages", item, passage_characters(item.passage))
    assert [p.passage.id for p in bundle.passages] == ["m2#0"]


def test_a_copy_does_not_close_a_full_bundle() -> None:
    first = passage("m1#0", "Lunch at noon.")
    size = passage_characters(first.passage)
    bundle = Bundle(max_characters=2 * size, max_rows=10)
    for item in (first, passage("m2#0", "Lunch at noon."), passage("m3#0", "Dinner at six")):
        assert bundle.add("passages", item, passage_characters(item.passage))
    assert [p.passage.id for p in bundle.passages] == ["m1#0", "m3#0"]
    assert not bundle.truncated
