"""The rules of entity resolution: which merges are allowed, and which are proposed."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pytest
from pydantic import ValidationError

from taisce.adapters.sqlite.vectors import SqliteVectorIndex
from taisce.domain.aliases import (
    PROPOSAL_NAMES,
    MergePlan,
    MergeRequest,
    NameState,
    plan_merge,
    proposal_window,
    propose_merges,
)
from taisce.domain.errors import InvalidRequest
from taisce.domain.model import EntityName, VectorItem


def entity(key: str) -> NameState:
    return NameState(key, None, True)


def alias_of(key: str, target: str) -> NameState:
    return NameState(key, target, False)


def unknown(key: str) -> NameState:
    return NameState(key, None, False)


def test_an_entity_or_a_new_name_merges_into_an_entity() -> None:
    assert plan_merge(entity("bob"), entity("rob"), "Bob", "Rob") == MergePlan("bob", "rob", False)
    assert plan_merge(unknown("bob"), entity("rob"), "Bob", "Rob") == MergePlan("bob", "rob", False)


def test_into_an_alias_is_into_its_entity() -> None:
    plan = plan_merge(entity("bob"), alias_of("bobby", "rob"), "Bob", "Bobby")
    assert plan == MergePlan("bob", "rob", False)


def test_the_same_merge_again_runs_again() -> None:
    plan = plan_merge(alias_of("bob", "rob"), entity("rob"), "Bob", "Rob")
    assert plan == MergePlan("bob", "rob", True)
    plan = plan_merge(alias_of("bob", "rob"), alias_of("bobby", "rob"), "Bob", "Bobby")
    assert plan == MergePlan("bob", "rob", True)


@pytest.mark.parametrize(
    ("alias", "target", "says"),
    [
        (entity("bob"), entity("bob"), "into itself"),
        (unknown("bob"), unknown("bob"), "into itself"),
        (entity("bob"), unknown("rob"), "no entity is named 'Rob'"),
        (entity("rob"), alias_of("bob", "rob"), "cycle"),
        (alias_of("bob", "ann"), entity("rob"), "already merged"),
    ],
)
def test_refused_merges_say_why(alias: NameState, target: NameState, says: str) -> None:
    with pytest.raises(InvalidRequest, match=says):
        plan_merge(alias, target, "Bob" if alias.key == "bob" else "Rob", "Rob")


@pytest.mark.parametrize(
    "body",
    [
        {"alias": "Bob"},
        {"alias": "", "into": "Rob"},
        {"alias": " \t", "into": "Rob"},
        {"alias": "Bob", "into": 1},
        {"alias": "Bob", "into": "Rob", "extra": True},
        {"alias": "B" * 501, "into": "Rob"},
    ],
)
def test_a_merge_request_is_checked(body: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        MergeRequest.model_validate(body)


class Fixed:
    """An embedder with chosen vectors (unit length): the rules, not the model, are tested."""

    name = "fixed"
    dimensions = 2

    def __init__(self, angles: dict[str, float]) -> None:
        self.angles = angles

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[math.cos(self.angles[t]), math.sin(self.angles[t])] for t in texts]


def test_proposals_pair_names_above_the_floor(tmp_path: Path) -> None:
    # cos(0.3) = 0.955, cos(0.6) = 0.825, cos(0.9) = 0.62.
    angles = {"Maya Okafor": 0.0, "Maya Okafour": 0.3, "Dublin": 0.6, "Galway": 1.5}
    names = [
        EntityName("dublin", "Dublin", 2),
        EntityName("galway", "Galway", 1),
        EntityName("maya okafor", "Maya Okafor", 3),
        EntityName("maya okafour", "Maya Okafour", 1),
    ]
    embedder = Fixed(angles)
    index = SqliteVectorIndex(tmp_path / "v.sqlite3", 2)
    # Entity vectors are kept per role; both roles' copies count once.
    items = [
        VectorItem(f"{role}:{n.key}", embedder.embed([n.name])[0], role)
        for n in names
        for role in ("user", "tool")
    ]
    index.upsert("p", "entity", items)
    proposals, complete = propose_merges("p", names, embedder, index, floor=0.8)
    assert complete
    # Most similar first (ties by alias, then entity); the name with fewer facts is the
    # alias of the other; Galway is too far from every other name.
    assert [(p.alias, p.into) for p in proposals] == [
        ("Maya Okafour", "Dublin"),
        ("Maya Okafour", "Maya Okafor"),
        ("Dublin", "Maya Okafor"),
    ]
    assert proposals[0].similarity == pytest.approx(math.cos(0.3), abs=1e-3)
    # Only names still listed are proposed (an alias is not), and the floor holds.
    fewer = propose_merges("p", names[:3], embedder, index, floor=0.9)
    assert fewer == ([], True)
    index.close()


@pytest.mark.parametrize("count", [0, 1, 499, 500, 501, 1000, 1234, 2600])
def test_successive_proposal_windows_cover_every_name(count: int) -> None:
    """ceil(N / 500) successive windows compare every one of N names (and no window
    holds a name twice or more than 500), whichever window the runs start from."""
    names = [EntityName(f"n{i:05d}", f"N{i:05d}", 1) for i in range(count)]

    def names_from(limit: int, offset: int) -> list[EntityName]:
        return names[offset : offset + limit]

    runs = max(1, -(-count // PROPOSAL_NAMES))
    for start in (0, 7, max(0, count - 3)):
        offset, seen = start, []
        for _ in range(runs):
            window = proposal_window(names_from, offset)
            keys = [n.key for n in window.names]
            assert len(keys) == len(set(keys)) == min(count, PROPOSAL_NAMES)
            seen += keys
            offset = window.following
        assert set(seen) == {n.key for n in names}


def test_a_window_past_shrunken_names_starts_again() -> None:
    names = [EntityName(f"n{i}", f"N{i}", 1) for i in range(3)]
    window = proposal_window(lambda limit, offset: names[offset : offset + limit], 1_000)
    assert [n.key for n in window.names] == ["n0", "n1", "n2"] and window.following == 0
