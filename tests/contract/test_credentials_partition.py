"""DynamoDB: a project's credential listing reads its own partition (CREDS#<project>),
whatever the number of other projects' credentials; credentials stored before those
copies existed are copied once, the first time their project is listed."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from taisce.adapters.dynamodb.keys import project_credential_key
from tests.contract.factories import credential
from tests.moto_server import shared_moto


@pytest.fixture
def store() -> Any:
    return shared_moto().table_named(f"creds-{uuid.uuid4().hex[:8]}").store()


def queried(store: Any) -> list[str]:
    """The partition of every Query the store sends from now on."""
    seen: list[str] = []

    def record(params: dict[str, Any], **_: Any) -> None:
        seen.append(params["ExpressionAttributeValues"][":pk"]["S"])

    store.client.meta.events.register("provide-client-params.dynamodb.Query", record)
    return seen


def test_a_project_lists_its_credentials_without_reading_other_projects(store: Any) -> None:
    mine = [credential("mine") for _ in range(3)]
    for c in mine:
        store.add_credential(c, uuid.uuid4().hex)
    for n in range(40):
        store.add_credential(credential(f"other-{n % 4}"), uuid.uuid4().hex)
    store.list_credentials("mine")  # the first listing copies older credentials, if any
    seen = queried(store)
    assert {c.id for c in store.list_credentials("mine")} == {c.id for c in mine}
    page = store.credential_page("mine", 2, None)
    assert store.credential_page("mine", 5, page[-1].id) == sorted(mine, key=lambda c: c.id)[2:]
    assert seen and set(seen) == {"CREDS#mine"}
    # The CLI's listing of every project still reads them all.
    assert len(store.list_credentials()) == 43


def test_credentials_stored_before_the_copies_are_listed_and_revoked(store: Any) -> None:
    older = [credential("legacy") for _ in range(2)]
    hashes = [uuid.uuid4().hex for _ in older]
    for c, h in zip(older, hashes, strict=True):
        store.add_credential(c, h)
        # As an earlier version stored it: no copy in the project's partition.
        store.client.delete_item(
            TableName=store.table.table_name, Key=project_credential_key("legacy", c.id)
        )
    seen = queried(store)
    assert {c.id for c in store.list_credentials("legacy")} == {c.id for c in older}
    assert "CREDS" in seen  # copied from the listing of all, this once
    # Revoked after the copy: the listing reads the revocation from the item by hash.
    assert store.revoke_credential(older[0].id, "2026-01-01T00:00:00Z") is True
    seen.clear()
    listed = {c.id: c for c in store.list_credentials("legacy")}
    assert listed[older[0].id].revoked_at == "2026-01-01T00:00:00Z"
    assert listed[older[1].id].revoked_at is None
    assert set(seen) == {"CREDS#legacy"}
    assert store.credential_for(hashes[0]) is None and store.credential_for(hashes[1])


def test_the_backfill_marker_is_read_once_per_process(store: Any) -> None:
    for _ in range(2):
        store.add_credential(credential("marked"), uuid.uuid4().hex)
    table = store.table.table_name
    gets: list[str] = []

    def record(params: dict[str, Any], **_: Any) -> None:
        if params["TableName"] == table:
            gets.append(params["Key"]["PK"]["S"])

    # The tests' stores share one client, so this sees the second store's calls too.
    store.client.meta.events.register("provide-client-params.dynamodb.GetItem", record)
    store.list_credentials("marked")  # reads the marker (absent), copies, writes it
    assert gets == ["CREDS#marked"]
    for _ in range(3):
        assert len(store.list_credentials("marked")) == 2
        store.credential_page("marked", 1, None)
    assert gets == ["CREDS#marked"]
    # Another process over the same table reads the marker once, finds it, copies nothing.
    other = shared_moto().table_named(table).store()
    queries = queried(other)
    assert len(other.list_credentials("marked")) == 2
    assert len(other.list_credentials("marked")) == 2
    assert gets == ["CREDS#marked"] * 2
    assert "CREDS" not in queries
