"""The contract of the Store and CredentialStore ports, run against every adapter.

See conftest.py: each test runs once per entry of STORES. Projects and ids are
unique per test, so the suite also suits a backend shared between tests.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from taisce.domain.model import Fact
from taisce.domain.names import normalize_name
from tests.contract.factories import (
    credential,
    fact,
    in_threads,
    message,
    placed,
    unique,
    with_passages,
)

ALL_ROLES = ("user", "assistant", "system", "tool")
BIG = 10_000


@pytest.fixture
def project() -> str:
    return unique("proj")


@pytest.fixture
def other() -> str:
    return unique("other")


def about(store: Any, project: str, *names: str, roles=ALL_ROLES, limit=BIG, exclude=()):
    keys = [normalize_name(n) for n in names]
    return list(store.facts_about(project, keys, roles, limit, exclude))


def ids(facts: list[Fact]) -> list[str]:
    return [f.id for f in facts]


# -- put_facts ---------------------------------------------------------------


def test_a_stored_fact_comes_back_whole(store: Any, project: str) -> None:
    f = fact(
        "Zoë Ó Briain",
        "works at",
        "Acme Corp 🚀",
        role="tool",
        statement="Zoë Ó Briain has worked at Acme Corp 🚀 since 2021",
        quote="«I work at Acme» — Zoë",
        context="since 2021",
        message_id="msg-1",
        valid_from="2021-01-01T00:00:00Z",
        valid_to="2030-01-01T00:00:00Z",
    )
    store.put_facts(project, [f])
    assert store.facts_with_subject(project, normalize_name("ZOË Ó BRIAIN")) == [f]
    assert about(store, project, "acme corp 🚀") == [f]


def test_put_facts_is_idempotent_by_id(store: Any, project: str) -> None:
    first = fact("Atlas", "works at", "Acme", id="f-1")
    second = dataclasses.replace(
        fact("Hermes", "works at", "Globex", id="f-1"), statement="a different text"
    )
    store.put_facts(project, [first])
    store.put_facts(project, [second])
    assert store.facts_with_subject(project, "atlas") == [first]
    assert store.facts_with_subject(project, "hermes") == []
    assert about(store, project, "atlas", "acme", "hermes", "globex") == [first]
    # The ignored record made no entities either.
    assert store.known_names(project, {"atlas", "acme", "hermes", "globex"}) == {"atlas", "acme"}


def test_a_repeated_id_in_one_batch_is_stored_once_first_wins(store: Any, project: str) -> None:
    first = fact("Atlas", "works at", "Acme", id="dup")
    again = fact("Atlas", "works at", "Globex", id="dup")
    later = fact("Atlas", "lives in", "Dublin")
    store.put_facts(project, [first, again, later])
    assert store.facts_with_subject(project, "atlas") == [first, later]


def test_re_putting_a_stored_fact_keeps_its_place_in_storing_order(
    store: Any, project: str
) -> None:
    a, b, c = (fact("Atlas", "p", str(n), id=f"id-{9 - n}") for n in range(3))
    store.put_facts(project, [a, b])
    store.put_facts(project, [dataclasses.replace(a, predicate="changed"), c])
    assert store.facts_with_subject(project, "atlas") == [a, b, c]


@pytest.mark.parametrize("bad_at", [0, 1, 2])
@pytest.mark.parametrize("field", ["subject", "subject_key", "predicate", "statement"])
def test_a_batch_that_fails_part_way_stores_nothing(
    store: Any, project: str, bad_at: int, field: str
) -> None:
    batch = [fact("Atlas", "works at", "Acme"), fact("Dublin", "is in", "Ireland")]
    batch.insert(bad_at, dataclasses.replace(fact("Hermes", "knows", "Zeus"), **{field: None}))
    with pytest.raises(Exception):  # noqa: B017 - any error, as long as nothing is stored
        store.put_facts(project, batch)
    names = {"atlas", "acme", "dublin", "ireland", "hermes", "zeus"}
    assert about(store, project, *names) == []
    assert store.facts_with_subject(project, "atlas") == []
    assert store.known_names(project, names) == set()
    # The store is still usable, and the valid facts can be stored afterwards.
    good = [f for f in batch if getattr(f, field) is not None]
    store.put_facts(project, good)
    assert ids(about(store, project, "atlas", "dublin")) == ids(good)


def test_a_failed_batch_does_not_undo_earlier_batches(store: Any, project: str) -> None:
    kept = fact("Atlas", "works at", "Acme")
    store.put_facts(project, [kept])
    with pytest.raises(Exception):  # noqa: B017
        store.put_facts(
            project,
            [fact("Atlas", "lives in", "Dublin"), dataclasses.replace(kept, id="x", object=None)],
        )
    assert store.facts_with_subject(project, "atlas") == [kept]


def test_an_empty_batch_is_fine(store: Any, project: str) -> None:
    store.put_facts(project, [])
    store.put_messages(project, [], [])
    assert store.known_names(project, {"atlas"}) == set()


# -- facts_about --------------------------------------------------------------


@pytest.fixture
def linked(store: Any, project: str) -> dict[str, Fact]:
    """Facts about Atlas, Acme Corp and Dublin, stored in three batches.

    Ids run against storing order, so storing order is not id order.
    """
    f = {
        "atlas_acme": fact("Atlas", "works at", "Acme Corp", id="z5"),
        "dublin_ireland": fact("Dublin", "is in", "Ireland", id="z4"),
        "acme_dublin": fact("ACME corp", "is based in", "Dublin", id="z3", role="tool"),
        "atlas_dublin": fact("atlas", "lives in", "DUBLIN", id="z2", role="assistant"),
        "bob_atlas": fact("Bob", "knows", "Atlas", id="z1"),
        "atlas_age": fact("Atlas", "is aged", "Dublin", id="z0", kind="value"),
    }
    values = list(f.values())
    store.put_facts(project, values[:2])
    store.put_facts(project, values[2:4])
    store.put_facts(project, values[4:])
    return f


def test_facts_about_groups_by_key_in_the_order_given(
    store: Any, project: str, linked: dict[str, Fact]
) -> None:
    f = linked
    assert about(store, project, "Dublin", "Atlas") == [
        f["dublin_ireland"],  # subject Dublin
        f["acme_dublin"],  # object Dublin
        f["atlas_dublin"],  # object Dublin
        f["atlas_acme"],  # then Atlas: each fact once, storing order
        f["bob_atlas"],
        f["atlas_age"],
    ]
    assert about(store, project, "Atlas", "Dublin") == [
        f["atlas_acme"],
        f["atlas_dublin"],
        f["bob_atlas"],
        f["atlas_age"],
        f["dublin_ireland"],
        f["acme_dublin"],
    ]


def test_facts_about_merges_both_directions_in_storing_order(
    store: Any, project: str, linked: dict[str, Fact]
) -> None:
    f = linked
    assert about(store, project, "acme corp") == [f["atlas_acme"], f["acme_dublin"]]
    assert about(store, project, "ireland") == [f["dublin_ireland"]]
    assert about(store, project, "bob") == [f["bob_atlas"]]


def test_value_objects_are_not_matched_by_object(
    store: Any, project: str, linked: dict[str, Fact]
) -> None:
    assert linked["atlas_age"] not in about(store, project, "Dublin")
    assert linked["atlas_age"] in about(store, project, "Atlas")
    store.put_facts(project, [fact("Hermes", "likes", "Zeus", kind="value")])
    assert about(store, project, "zeus") == []
    assert store.known_names(project, {"hermes", "zeus"}) == {"hermes"}


def test_facts_about_lists_each_fact_once(store: Any, project: str) -> None:
    self_link = fact("Atlas", "admires", "ATLAS")
    other_link = fact("Atlas", "works at", "Acme")
    store.put_facts(project, [self_link, other_link])
    assert about(store, project, "atlas") == [self_link, other_link]
    assert about(store, project, "atlas", "acme", "atlas") == [self_link, other_link]


def test_facts_about_leaves_out_excluded_ids(
    store: Any, project: str, linked: dict[str, Fact]
) -> None:
    f = linked
    exclude = {f["atlas_acme"].id, f["bob_atlas"].id, "no-such-id"}
    assert about(store, project, "Atlas", exclude=exclude) == [f["atlas_dublin"], f["atlas_age"]]
    # An excluded fact does not take a place under a later key either.
    assert about(store, project, "Atlas", "Acme Corp", exclude={f["atlas_acme"].id}) == [
        f["atlas_dublin"],
        f["bob_atlas"],
        f["atlas_age"],
        f["acme_dublin"],
    ]


@pytest.mark.parametrize("limit", [0, 1, 2, 3, 5, 6, 7, 100])
def test_facts_about_stops_at_the_limit(
    store: Any, project: str, linked: dict[str, Fact], limit: int
) -> None:
    everything = about(store, project, "Atlas", "Dublin")
    assert len(everything) == 6
    assert about(store, project, "Atlas", "Dublin", limit=limit) == everything[:limit]


def test_facts_about_keeps_only_the_roles_asked_for(
    store: Any, project: str, linked: dict[str, Fact]
) -> None:
    f = linked
    assert about(store, project, "Atlas", "Dublin", roles=["user"]) == [
        f["atlas_acme"],
        f["bob_atlas"],
        f["atlas_age"],
        f["dublin_ireland"],
    ]
    assert about(store, project, "Atlas", "Dublin", roles=["tool"]) == [f["acme_dublin"]]
    assert about(store, project, "Dublin", roles=["tool", "assistant"]) == [
        f["acme_dublin"],
        f["atlas_dublin"],
    ]
    assert about(store, project, "Atlas", roles=["system"]) == []
    assert about(store, project, "Atlas", roles=[]) == []


def test_a_limit_counts_only_facts_of_the_roles_asked_for(
    store: Any, project: str, linked: dict[str, Fact]
) -> None:
    f = linked
    assert about(store, project, "Dublin", "Atlas", roles=["user"], limit=2) == [
        f["dublin_ireland"],
        f["atlas_acme"],
    ]


def test_facts_about_unknown_or_no_keys(store: Any, project: str, linked: dict) -> None:
    assert about(store, project, "Nobody") == []
    assert list(store.facts_about(project, [], ALL_ROLES, BIG)) == []
    # Keys are normalised names: the store does not normalise them itself.
    assert list(store.facts_about(project, ["Atlas"], ALL_ROLES, BIG)) == []


def test_facts_about_after_a_partial_read_leaves_the_store_writable(
    store: Any, project: str
) -> None:
    store.put_facts(project, [fact("Atlas", "p", str(n)) for n in range(50)])
    assert len(about(store, project, "Atlas", limit=1)) == 1
    store.put_facts(project, [fact("Atlas", "p", "last")])
    assert store.delete_fact(project, about(store, project, "Atlas", limit=1)[0].id)
    assert len(about(store, project, "Atlas")) == 50


# -- facts_with_subject, delete_fact, known_names ------------------------------


def test_facts_with_subject_is_subject_side_only(
    store: Any, project: str, linked: dict[str, Fact]
) -> None:
    f = linked
    assert store.facts_with_subject(project, "atlas") == [
        f["atlas_acme"],
        f["atlas_dublin"],
        f["atlas_age"],
    ]
    assert store.facts_with_subject(project, "dublin") == [f["dublin_ireland"]]
    assert store.facts_with_subject(project, "ireland") == []


def test_delete_fact(store: Any, project: str, linked: dict[str, Fact]) -> None:
    f = linked
    assert store.delete_fact(project, f["atlas_dublin"].id) is True
    assert f["atlas_dublin"] not in about(store, project, "Atlas", "Dublin")
    assert f["atlas_dublin"] not in store.facts_with_subject(project, "atlas")
    assert len(about(store, project, "Atlas", "Dublin")) == 5
    assert store.delete_fact(project, f["atlas_dublin"].id) is False
    assert store.delete_fact(project, "no-such-fact") is False


def test_known_names(store: Any, project: str, linked: dict[str, Fact]) -> None:
    asked = {"atlas", "acme corp", "dublin", "ireland", "bob", "nobody", "Atlas", ""}
    assert store.known_names(project, asked) == {"atlas", "acme corp", "dublin", "ireland", "bob"}
    assert store.known_names(project, set()) == set()
    # Entities of facts of every role are names the project knows.
    store.put_facts(project, [fact("Hermes", "is", "Olympian", role="system")])
    assert store.known_names(project, ["hermes", "olympian"]) == {"hermes", "olympian"}


def test_known_names_with_many_keys(store: Any, project: str) -> None:
    store.put_facts(project, [fact("Name 7", "p", "Name 1499")])
    asked = [f"name {n}" for n in range(1500)]
    assert store.known_names(project, asked) == {"name 7", "name 1499"}


# -- project isolation ----------------------------------------------------------


def test_projects_are_isolated_for_facts(store: Any, project: str, other: str) -> None:
    mine = fact("Atlas", "works at", "Acme", id="same-id")
    theirs = fact("Atlas", "works at", "Globex", id="same-id", role="tool")
    store.put_facts(project, [mine])
    store.put_facts(other, [theirs])
    assert store.facts_with_subject(project, "atlas") == [mine]
    assert store.facts_with_subject(other, "atlas") == [theirs]
    assert about(store, project, "Atlas", "Globex") == [mine]
    assert about(store, other, "Atlas", "Acme") == [theirs]
    assert store.known_names(project, {"acme", "globex"}) == {"acme"}
    assert store.known_names(other, {"acme", "globex"}) == {"globex"}
    assert store.known_names(unique("empty"), {"atlas"}) == set()
    assert about(store, unique("empty"), "Atlas") == []


def test_delete_fact_reaches_only_its_own_project(store: Any, project: str, other: str) -> None:
    mine = fact("Atlas", "works at", "Acme", id="shared")
    store.put_facts(project, [mine])
    assert store.delete_fact(other, "shared") is False
    assert store.facts_with_subject(project, "atlas") == [mine]
    store.put_facts(other, [dataclasses.replace(mine, object="Globex")])
    assert store.delete_fact(other, "shared") is True
    assert store.facts_with_subject(project, "atlas") == [mine]


def test_projects_are_isolated_for_messages(store: Any, project: str, other: str) -> None:
    store.put_messages(project, *with_passages(message("Mine. Only mine.", id="m")))
    store.put_messages(other, *with_passages(message("Theirs!", id="m", role="tool")))
    assert [p.quote for p in store.passages_of(project, "m")] == ["Mine. Only mine."]
    assert [(p.quote, p.role) for p in store.passages_of(other, "m")] == [("Theirs!", "tool")]
    assert store.passages_of(unique("empty"), "m") == []


def test_projects_are_isolated_for_credentials(store: Any, project: str, other: str) -> None:
    mine, theirs = credential(project), credential(other)
    store.add_credential(mine, unique("hash-a"))
    store.add_credential(theirs, unique("hash-b"))
    assert store.list_credentials(project) == [mine]
    assert store.list_credentials(other) == [theirs]


# -- messages and passages --------------------------------------------------------


def test_passages_come_back_whole_in_order(store: Any, project: str) -> None:
    long = " ".join(f"Sentence {n} about Zoë and 北京 🚀." for n in range(40))
    m = message(long, role="tool", source="docs/handbook.md")
    messages, passages = with_passages(m)
    assert len(passages) > 2
    store.put_messages(project, messages, list(reversed(passages)))
    got = store.passages_of(project, m.id)
    assert got == placed(passages, 1)  # the project's first message
    assert all(m.content[p.start : p.end] == p.quote for p in got)


def test_put_messages_is_idempotent_passages_of_the_first_are_kept(
    store: Any, project: str
) -> None:
    first = message("First words. " * 40, id="m-1")
    second = message("Other words entirely.", id="m-1", role="tool", source="elsewhere")
    _, first_passages = with_passages(first)
    store.put_messages(project, *with_passages(first))
    store.put_messages(project, *with_passages(second))
    assert store.passages_of(project, "m-1") == placed(first_passages, 1)
    # The same message again, split with another limit, changes nothing.
    store.put_messages(project, *with_passages(first, limit=10))
    assert store.passages_of(project, "m-1") == placed(first_passages, 1)


def test_a_repeated_message_id_in_one_batch_is_stored_once_first_wins(
    store: Any, project: str
) -> None:
    first = message("First. Short.", id="m-dup")
    again = message("Second, and quite a lot longer. " * 20, id="m-dup")
    _, first_passages = with_passages(first)
    store.put_messages(project, *with_passages(first, again))
    assert store.passages_of(project, "m-dup") == placed(first_passages, 1)


def test_a_message_batch_that_fails_part_way_stores_nothing(store: Any, project: str) -> None:
    good = message("Stored? No.", id="m-good")
    bad = message("x", id="m-bad", role=None)
    with pytest.raises(Exception):  # noqa: B017
        store.put_messages(project, *with_passages(good, bad))
    assert store.passages_of(project, "m-good") == []
    # Nothing of it was kept: the same ids can now be stored with their passages.
    messages, passages = with_passages(good)
    store.put_messages(project, messages, passages)
    # The failed batch took no position either.
    assert store.passages_of(project, "m-good") == placed(passages, 1)


def test_passages_of_an_unknown_message(store: Any, project: str) -> None:
    assert store.passages_of(project, "nope") == []


# -- credentials --------------------------------------------------------------


def test_credentials_add_lookup_list_revoke(store: Any, project: str) -> None:
    older = credential(project, created_at="2024-01-01T00:00:00Z", label="ci")
    newer = credential(project, created_at="2024-02-01T00:00:00Z")
    hash_older, hash_newer = unique("h"), unique("h")
    store.add_credential(newer, hash_newer)
    store.add_credential(older, hash_older)

    assert store.project_for(hash_older) == project
    assert store.project_for(hash_newer) == project
    assert store.project_for(unique("unknown")) is None
    assert store.list_credentials(project) == [older, newer]
    everyone = store.list_credentials()
    assert older in everyone and newer in everyone

    assert store.revoke_credential(older.id, "2024-03-01T00:00:00Z") is True
    assert store.project_for(hash_older) is None
    assert store.project_for(hash_newer) == project
    revoked = dataclasses.replace(older, revoked_at="2024-03-01T00:00:00Z")
    assert store.list_credentials(project) == [revoked, newer]
    # Revoking again changes nothing, not even the time.
    assert store.revoke_credential(older.id, "2024-04-01T00:00:00Z") is False
    assert store.list_credentials(project) == [revoked, newer]
    assert store.revoke_credential(unique("no-such-cred"), "2024-04-01T00:00:00Z") is False


def test_credentials_are_listed_by_creation_time_then_id(store: Any, project: str) -> None:
    same_time = [
        dataclasses.replace(credential(project), id=f"cred-{n}-{unique('x')}") for n in (2, 1, 3)
    ]
    for c in same_time:
        store.add_credential(c, unique("h"))
    assert store.list_credentials(project) == sorted(same_time, key=lambda c: c.id)


def test_credential_kinds_users_and_last_use(store: Any, project: str) -> None:
    legacy = credential(project, created_at="2024-01-01T00:00:00Z")
    bound = dataclasses.replace(
        credential(project, created_at="2024-01-02T00:00:00Z"), kind="user", user="ana@x.io"
    )
    admin = dataclasses.replace(
        credential(project, created_at="2024-01-03T00:00:00Z"), kind="admin"
    )
    hashes = {c.id: unique("h") for c in (legacy, bound, admin)}
    for c in (legacy, bound, admin):
        store.add_credential(c, hashes[c.id])
    assert store.credential_for(hashes[bound.id]) == bound
    assert store.credential_for(hashes[legacy.id]).kind == "project"
    assert store.list_credentials(project) == [legacy, bound, admin]

    # A use is recorded unless a later one than the cutoff is already there.
    store.record_use(hashes[bound.id], "2025-01-01T00:00:00Z", "2024-12-31T23:59:00Z")
    store.record_use(hashes[bound.id], "2025-01-01T00:00:30Z", "2024-12-31T23:59:30Z")
    used = dataclasses.replace(bound, last_used_at="2025-01-01T00:00:00Z")
    assert store.credential_for(hashes[bound.id]) == used
    store.record_use(hashes[bound.id], "2025-01-01T00:02:00Z", "2025-01-01T00:01:00Z")
    used = dataclasses.replace(bound, last_used_at="2025-01-01T00:02:00Z")
    assert store.list_credentials(project) == [legacy, used, admin]


def test_credential_pages_go_by_id_within_the_project(store: Any, project: str, other: str) -> None:
    # Ids are unique across projects: these share a prefix, so the other project's
    # sorts among them.
    base = unique("cred")
    mine = [dataclasses.replace(credential(project), id=f"{base}_{n}") for n in (3, 1, 2, 4)]
    for c in mine:
        store.add_credential(c, unique("h"))
    store.add_credential(dataclasses.replace(credential(other), id=f"{base}_15"), unique("h"))
    by_id = sorted(mine, key=lambda c: c.id)
    assert store.credential_page(project, 2, None) == by_id[:2]
    assert store.credential_page(project, 2, by_id[1].id) == by_id[2:]
    assert store.credential_page(project, 5, by_id[3].id) == []


def test_a_credential_is_revoked_only_within_its_project(
    store: Any, project: str, other: str
) -> None:
    theirs = credential(other)
    store.add_credential(theirs, hashed := unique("h"))
    assert store.revoke_credential(theirs.id, "2025-01-01T00:00:00Z", project) is False
    assert store.project_for(hashed) == other
    assert store.revoke_credential(theirs.id, "2025-01-01T00:00:00Z", other) is True
    assert store.credential_for(hashed) is None


# -- durability and concurrency ---------------------------------------------------


def test_everything_survives_reopening(open_store: Callable[[], Any], project: str) -> None:
    store = open_store()
    kept = fact("Atlas", "works at", "Acme Corp", quote="I work at Acme", context="since 2021")
    m = message("Atlas works at Acme Corp. " * 30, id="m-kept", source="chat:1")
    messages, passages = with_passages(m)
    cred = credential(project, label="laptop")
    revoked = credential(project, created_at="2025-01-01T00:00:00Z")
    store.put_facts(project, [kept])
    store.put_messages(project, messages, passages)
    store.add_credential(cred, "hash-kept-" + project)
    store.add_credential(revoked, "hash-revoked-" + project)
    store.revoke_credential(revoked.id, "2025-02-01T00:00:00Z")
    getattr(store, "close", lambda: None)()

    again = open_store()
    assert again.facts_with_subject(project, "atlas") == [kept]
    assert about(again, project, "acme corp") == [kept]
    assert again.known_names(project, {"atlas", "acme corp"}) == {"atlas", "acme corp"}
    assert again.passages_of(project, "m-kept") == placed(passages, 1)
    assert again.project_for("hash-kept-" + project) == project
    assert again.project_for("hash-revoked-" + project) is None
    assert [c.id for c in again.list_credentials(project)] == [cred.id, revoked.id]
    # Ids stay taken, and storing order goes on after the facts already kept.
    later = fact("Atlas", "lives in", "Dublin")
    again.put_facts(project, [dataclasses.replace(kept, object="Globex"), later])
    again.put_messages(project, *with_passages(message("Changed.", id="m-kept")))
    assert again.facts_with_subject(project, "atlas") == [kept, later]
    assert again.passages_of(project, "m-kept") == placed(passages, 1)


def test_concurrent_batches_are_all_stored(store: Any, project: str) -> None:
    def writer(n: int) -> None:
        for b in range(10):
            store.put_facts(project, [fact("Atlas", f"w{n}", f"b{b} {i}") for i in range(5)])
            assert len(about(store, project, "Atlas")) >= 5

    assert in_threads(writer, 4) == []
    stored = about(store, project, "Atlas")
    assert len(stored) == 4 * 10 * 5
    # Each batch went in whole: its five facts sit together in storing order.
    for start in range(0, len(stored), 5):
        batch = stored[start : start + 5]
        assert len({(f.predicate, f.object.split()[0]) for f in batch}) == 1
        assert [f.object.split()[1] for f in batch] == ["0", "1", "2", "3", "4"]
