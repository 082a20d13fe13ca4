"""The entity-resolution part of the Store contract (merges, aliases, resolving names),
run against every adapter of conftest.STORES."""

from __future__ import annotations

from typing import Any

import pytest

from taisce.adapters.dynamodb.keys import project_prefix
from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.api import bodies
from taisce.domain.controls import Limits
from taisce.domain.errors import InvalidRequest
from taisce.domain.model import Fact, MergeResult
from taisce.domain.names import normalize_name
from taisce.domain.scope import scope
from taisce.service.memory import Memory
from tests.contract.factories import fact, unique

ALL_ROLES = ("user", "assistant", "system", "tool")
BIG = 10_000


@pytest.fixture
def project() -> str:
    return unique("alias")


def merge(store: Any, project: str, alias: str, into: str) -> MergeResult:
    return store.merge_entities(project, normalize_name(alias), alias, normalize_name(into), into)


def about(store: Any, project: str, *names: str, roles=ALL_ROLES) -> list[Fact]:
    keys = [normalize_name(n) for n in names]
    return list(store.facts_about(project, keys, roles, BIG))


def everything(store: Any, project: str, names: list[str]) -> dict[str, Fact]:
    return {f.id: f for f in about(store, project, *names)}


@pytest.fixture
def bob(store: Any, project: str) -> dict[str, Fact]:
    """Facts naming "Bob" and "Robert Smith", each way round, in several roles."""
    f = {
        "bob_acme": fact("Bob", "works at", "Acme", id="b1"),
        "maya_bob": fact("Maya", "manages", "bob", id="b2", role="tool"),
        "bob_age": fact("Bob", "is aged", "41", id="b3", kind="value", role="assistant"),
        "robert_dublin": fact("Robert Smith", "lives in", "Dublin", id="r1"),
        "bob_robert": fact("Bob", "is short for", "Robert Smith", id="br"),
        "bob_self": fact("Bob", "admires", "BOB", id="bb", role="system"),
    }
    store.put_facts(project, list(f.values()))
    return f


NAMES = ["bob", "robert smith", "acme", "maya", "dublin"]


def test_a_merge_moves_every_fact_and_keeps_its_words(
    store: Any, project: str, bob: dict[str, Fact]
) -> None:
    before = everything(store, project, NAMES)
    result = merge(store, project, "bob", "robert SMITH")
    assert result == MergeResult("Bob", "Robert Smith", 5, 0)
    after = everything(store, project, NAMES)
    assert set(after) == set(before)  # nothing lost, nothing added
    for fact_id, old in before.items():
        new = after[fact_id]
        # The words as said stay; only the keys move to the entity.
        assert bodies.fact(new) == bodies.fact(old)
        assert new.subject_key == ("robert smith" if old.subject_key == "bob" else old.subject_key)
        if old.object_key == "bob":
            assert new.object_key == "robert smith"
    assert about(store, project, "bob") == []
    assert {f.id for f in about(store, project, "Robert Smith")} == {
        "b1",
        "b2",
        "b3",
        "r1",
        "br",
        "bb",
    }
    # Subject side: the alias's facts as subject now list under the entity, in storing order.
    assert [f.id for f in store.facts_with_subject(project, "robert smith")] == [
        "b1",
        "b3",
        "r1",
        "br",
        "bb",
    ]
    assert store.facts_with_subject(project, "bob") == []
    # Facts of the other ends still reach the moved facts.
    assert [f.id for f in about(store, project, "maya")] == ["b2"]


def test_names_and_role_counts_follow_a_merge(
    store: Any, project: str, bob: dict[str, Fact]
) -> None:
    assert store.known_names(project, {"robert smith"}, ["tool"]) == set()
    merge(store, project, "Bob", "Robert Smith")
    for role in ALL_ROLES:
        assert store.known_names(project, {"robert smith"}, [role]) == {"robert smith"}
        assert store.known_names(project, {"bob"}, [role]) == set()
        assert store.resolve_names(project, {"bob", "maya"}, [role]) == (
            {"bob": "robert smith", "maya": "maya"} if role == "tool" else {"bob": "robert smith"}
        )
    assert store.known_names(project, {"bob", "robert smith"}) == {"robert smith"}
    assert store.resolve_names(project, {"bob", "nobody"}) == {"bob": "robert smith"}
    # Counts move exactly: deleting the alias's facts leaves the entity unnamed by them.
    for fact_id in ("b2",):
        assert store.delete_fact(project, fact_id)
    assert store.known_names(project, {"robert smith"}, ["tool"]) == set()
    assert store.known_names(project, {"maya"}, ["tool"]) == set()


def test_later_facts_naming_the_alias_resolve_on_write(
    store: Any, project: str, bob: dict[str, Fact]
) -> None:
    merge(store, project, "Bob", "Robert Smith")
    store.put_facts(
        project,
        [fact("bob", "plays", "Chess", id="n1"), fact("Globex", "hired", "Bob", id="n2")],
    )
    assert about(store, project, "bob") == []
    found = {f.id: f for f in about(store, project, "robert smith")}
    assert {"n1", "n2"} <= set(found)
    assert found["n1"].subject == "bob" and found["n1"].subject_key == "robert smith"
    assert found["n2"].object == "Bob" and found["n2"].object_key == "robert smith"
    assert store.known_names(project, {"bob"}) == set()


def test_merging_again_into_the_same_entity_changes_nothing(
    store: Any, project: str, bob: dict[str, Fact]
) -> None:
    merge(store, project, "Bob", "Robert Smith")
    before = everything(store, project, NAMES)
    again = merge(store, project, "BOB", "Robert Smith")
    assert again == MergeResult("Bob", "Robert Smith", 0, 0)
    assert everything(store, project, NAMES) == before
    assert [(a.alias, a.into) for a in store.aliases(project)] == [("Bob", "Robert Smith")]


@pytest.mark.parametrize(
    ("alias", "into", "says"),
    [
        ("Bob", " bob ", "into itself"),
        ("Bob", "Nobody", "no entity"),
        ("Robert Smith", "Bob", "cycle"),  # Bob is already Robert Smith's alias
        ("Bob", "Acme", "already merged"),
        ("Robert Smith", "Robert Smith", "into itself"),
    ],
)
def test_refused_merges_change_nothing(
    store: Any, project: str, bob: dict[str, Fact], alias: str, into: str, says: str
) -> None:
    merge(store, project, "Bob", "Robert Smith")
    before = everything(store, project, NAMES)
    with pytest.raises(InvalidRequest, match=says):
        merge(store, project, alias, into)
    assert everything(store, project, NAMES) == before
    assert [(a.alias, a.into) for a in store.aliases(project)] == [("Bob", "Robert Smith")]


def test_an_unknown_target_is_refused_even_before_any_merge(store: Any, project: str) -> None:
    store.put_facts(project, [fact("Bob", "works at", "Acme")])
    with pytest.raises(InvalidRequest, match="no entity"):
        merge(store, project, "Bob", "Robert")
    assert store.aliases(project) == []
    assert store.known_names(project, {"bob"}) == {"bob"}


def test_chains_stay_flat(store: Any, project: str) -> None:
    store.put_facts(
        project,
        [
            fact("Bobby", "likes", "Tea", id="c1"),
            fact("Bob", "likes", "Coffee", id="c2"),
            fact("Robert Smith", "likes", "Water", id="c3"),
            fact("Rob", "likes", "Milk", id="c4"),
        ],
    )
    merge(store, project, "Bobby", "Bob")
    # Bob, which has an alias, becomes an alias itself: Bobby (and its fact) follow.
    assert merge(store, project, "Bob", "Robert Smith") == MergeResult("Bob", "Robert Smith", 2, 1)
    # Into an alias means into its entity.
    assert merge(store, project, "Rob", "bobby") == MergeResult("Rob", "Robert Smith", 1, 0)
    assert [(a.alias, a.into) for a in store.aliases(project)] == [
        ("Bob", "Robert Smith"),
        ("Bobby", "Robert Smith"),
        ("Rob", "Robert Smith"),
    ]
    assert [f.id for f in about(store, project, "robert smith")] == ["c1", "c2", "c3", "c4"]
    assert store.resolve_names(project, {"bob", "bobby", "rob"}) == {
        "bob": "robert smith",
        "bobby": "robert smith",
        "rob": "robert smith",
    }
    with pytest.raises(InvalidRequest, match="cycle"):
        merge(store, project, "Robert Smith", "Bobby")


def test_an_alias_no_fact_names_yet_can_be_declared(store: Any, project: str) -> None:
    store.put_facts(project, [fact("Robert Smith", "lives in", "Dublin", id="d1")])
    assert merge(store, project, "Bob", "Robert Smith") == MergeResult("Bob", "Robert Smith", 0, 0)
    store.put_facts(project, [fact("Bob", "works at", "Acme", id="d2")])
    assert [f.id for f in about(store, project, "Robert Smith")] == ["d1", "d2"]
    assert store.known_names(project, {"bob"}) == set()


def test_entity_names_lists_live_entities_not_aliases(
    store: Any, project: str, bob: dict[str, Fact]
) -> None:
    merge(store, project, "Bob", "Robert Smith")
    listed = {e.key: (e.name, e.facts) for e in store.entity_names(project, 100)}
    # Robert Smith: r1, br (twice: both ends now), the five of Bob's ends, bb twice.
    assert listed == {
        "acme": ("Acme", 1),
        "dublin": ("Dublin", 1),
        "maya": ("Maya", 1),
        "robert smith": ("Robert Smith", 8),
    }
    assert [e.key for e in store.entity_names(project, 2)] == ["acme", "dublin"]
    # From an offset (where a proposals request's window starts), by key.
    assert [e.key for e in store.entity_names(project, 2, 1)] == ["dublin", "maya"]
    assert [e.key for e in store.entity_names(project, 2, 3)] == ["robert smith"]
    assert store.entity_names(project, 2, 4) == []


def test_a_partitions_proposal_offset_is_kept_apart_without_its_user_id(
    store: Any, project: str
) -> None:
    user = unique("user")
    mine = scope(project, user)
    assert store.proposal_offset(project) == 0 and store.proposal_offset(mine) == 0
    store.set_proposal_offset(project, 500)
    store.set_proposal_offset(mine, 21)
    store.set_proposal_offset(mine, 42)  # replaced, not added
    assert (store.proposal_offset(project), store.proposal_offset(mine)) == (500, 42)
    assert store.proposal_offset(unique("other")) == 0
    if isinstance(store, DynamoDbStore):
        kept = store.table.client.query(
            TableName=store.table.table_name,
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": f"{project_prefix(project)}PROPOSALS"}},
        )["Items"]
        assert len(kept) == 2 and user not in repr(kept)


def test_merges_stay_in_their_project(store: Any, project: str, bob: dict[str, Fact]) -> None:
    other = unique("other")
    store.put_facts(other, [fact("Bob", "works at", "Globex", id="o1")])
    store.put_facts(other, [fact("Robert Smith", "lives in", "Cork", id="o2")])
    merge(store, project, "Bob", "Robert Smith")
    assert [f.id for f in about(store, other, "bob")] == ["o1"]
    assert store.aliases(other) == []
    assert store.resolve_names(other, {"bob"}) == {"bob": "bob"}


# -- DynamoDB: a merge spans transactions, so a crash part-way must be re-runnable ----


def test_a_merge_interrupted_part_way_completes_when_sent_again(
    store: Any, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not isinstance(store, DynamoDbStore):
        pytest.skip("the embedded store merges in one transaction")
    facts = [fact("Bob", "knows", f"Person {n}", id=f"k{n:02d}") for n in range(45)]
    facts.append(fact("Robert Smith", "lives in", "Dublin", id="r1"))
    store.put_facts(project, facts)
    names = ["bob", "robert smith", "dublin"] + [f"person {n}" for n in range(45)]
    before = everything(store, project, names)
    real = store.alias_store._move_copies
    calls = []

    def crash_on_second(*args: Any) -> int:
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("the process died")
        return real(*args)

    monkeypatch.setattr(store.alias_store, "_move_copies", crash_on_second)
    with pytest.raises(RuntimeError):
        merge(store, project, "Bob", "Robert Smith")
    monkeypatch.setattr(store.alias_store, "_move_copies", real)
    # Part-way: what moved is under the entity, the rest still under the alias, and a
    # question naming either finds all of it (the alias resolves to the entity).
    assert len(about(store, project, "robert smith")) == 16 + 1  # one transaction: 16 facts
    assert store.resolve_names(project, {"bob"}, ["user"]) == {"bob": "robert smith"}
    moved = merge(store, project, "Bob", "Robert Smith")
    assert moved == MergeResult("Bob", "Robert Smith", 45 - 16, 0)
    after = everything(store, project, names)
    assert set(after) == set(before)
    assert len(about(store, project, "robert smith")) == 46
    assert about(store, project, "bob") == []
    assert store.known_names(project, {"bob"}, ["user"]) == set()
    listed = {e.key: e.facts for e in store.entity_names(project, 100)}
    assert listed["robert smith"] == 46


def test_report_and_vector_marks_follow_a_merge(store: Any, project: str) -> None:
    store.put_facts(
        project,
        [
            fact("Bob", "works at", "Acme", id="v1", role="tool"),
            fact("Robert Smith", "lives in", "Dublin", id="v2"),
        ],
    )
    store.clear_dirty(project, store.dirty_entities(project))
    store.clear_pending_vectors(project, store.pending_vectors(project, 100))
    merge(store, project, "Bob", "Robert Smith")
    marks = {(role, key) for role, key, _ in store.dirty_entities(project)}
    assert marks == {("tool", "bob"), ("tool", "robert smith")}
    # The entity is new to the tool role: its name is marked for a vector of that role.
    pending = [(p.kind, p.id, p.text, p.role) for p in store.pending_vectors(project, 100)]
    assert pending == [("entity", "tool:robert smith", "Robert Smith", "tool")]


def test_a_copy_without_its_claim_does_not_stop_a_merge(store: Any, project: str) -> None:
    if not isinstance(store, DynamoDbStore):
        pytest.skip("only DynamoDB keeps a fact as a claim and copies")
    from taisce.adapters.dynamodb.keys import FACT_SK, fact_pk

    facts = [fact("Bob", "knows", f"Person {n}", id=f"o{n:02d}") for n in range(25)]
    store.put_facts(project, [*facts, fact("Robert Smith", "lives in", "Cork", id="r1")])
    # A copy whose claim is gone is not a stored fact: the merge must step past it.
    store.client.delete_item(
        TableName=store.table_name,
        Key={"PK": {"S": fact_pk(project, "o03")}, "SK": {"S": FACT_SK}},
    )
    assert merge(store, project, "Bob", "Robert Smith").facts_moved == 24
    assert [f.id for f in about(store, project, "bob")] == ["o03"]
    assert len(about(store, project, "robert smith")) == 25


def test_a_users_erasure_drops_where_its_proposals_stood(store: Any, project: str) -> None:
    memory = Memory(store, Limits())
    mine = scope(project, unique("user"))
    store.set_proposal_offset(project, 500)
    store.set_proposal_offset(mine, 42)
    status = memory.erase_user(mine)
    if status.status == "pending":  # DynamoDB: the worker's pages
        memory.complete_erasure(project, status.id)
    assert (store.proposal_offset(project), store.proposal_offset(mine)) == (500, 0)
