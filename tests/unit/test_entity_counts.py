"""domain.entity_counts: how facts count for the entities they name, on every store."""

from __future__ import annotations

from taisce.domain.entity_counts import end_counts, end_names, moved_counts, new_to_role
from tests.contract.factories import fact


def test_each_end_counts_one_and_a_fact_about_itself_two() -> None:
    assert end_counts("ada", "acme") == {"ada": 1, "acme": 1}
    assert end_counts("ada", None) == {"ada": 1}
    assert end_counts("ada", "ada") == {"ada": 2}


def test_a_merge_moves_the_alias_ends_per_role() -> None:
    facts = [
        ("user", "bob", "acme"),
        ("user", "maya", "bob"),
        ("tool", "bob", "bob"),
        ("tool", "bob", None),
        ("system", "maya", "acme"),  # names no alias: moves nothing
    ]
    assert moved_counts(facts, "bob") == {"user": 2, "tool": 3}
    assert moved_counts([], "bob") == {}


def test_a_name_is_new_to_a_role_only_with_its_first_live_fact() -> None:
    assert new_to_role(0, 1)
    assert new_to_role(0, 3)
    assert not new_to_role(1, 1)
    assert not new_to_role(0, 0)


def test_the_names_of_the_ends_subject_first() -> None:
    assert end_names(fact("Ada", "works at", "ACME", kind="entity")) == {
        "ada": "Ada",
        "acme": "ACME",
    }
    assert end_names(fact("Ada", "likes", "tea", kind="value")) == {"ada": "Ada"}
    assert end_names(fact("Ada", "admires", "ADA")) == {"ada": "Ada"}
