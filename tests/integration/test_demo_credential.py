"""The demo's credential on the embedded store: made once per data folder, kept in a file
only its owner can read, reused while live, replaced (earlier ones revoked) when not."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from taisce.adapters.sqlite.store import SqliteStore
from taisce.credentials import new_secret, secret_hash
from taisce.domain.model import Credential
from taisce.local.demo_credential import FILE_NAME, demo_credential


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    made = SqliteStore(tmp_path / "taisce.sqlite3")
    yield made
    made.close()


def _live(store: SqliteStore, project: str = "demo") -> list[Credential]:
    return [c for c in store.list_credentials(project) if c.revoked_at is None]


def _add(store: SqliteStore, id_: str, project: str, label: str | None) -> str:
    secret = new_secret()
    credential = Credential(id_, project, label, "2026-11-01T00:00:00Z")
    store.add_credential(credential, secret_hash(secret))
    return secret


def test_the_first_start_makes_one_and_keeps_it_for_its_owner_only(
    store: SqliteStore, tmp_path: Path
) -> None:
    made = demo_credential(store, tmp_path)
    assert made.made is not None and made.revoked == ()
    assert made.path == tmp_path / FILE_NAME
    assert made.path.read_text() == made.secret + "\n"
    assert stat.S_IMODE(made.path.stat().st_mode) == 0o600
    assert store.project_for(secret_hash(made.secret)) == "demo"
    assert [c.id for c in _live(store)] == [made.made]
    assert not list(tmp_path.glob(".demo-credential.*"))  # no temporary file left


def test_later_starts_reuse_it(store: SqliteStore, tmp_path: Path) -> None:
    first = demo_credential(store, tmp_path)
    first.path.chmod(0o644)  # loosened by hand: made private again
    again = demo_credential(store, tmp_path)
    assert again.secret == first.secret and again.made is None
    assert stat.S_IMODE(again.path.stat().st_mode) == 0o600
    assert len(store.list_credentials("demo")) == 1


def test_a_revoked_one_is_replaced(store: SqliteStore, tmp_path: Path) -> None:
    first = demo_credential(store, tmp_path)
    assert first.made is not None
    assert store.revoke_credential(first.made, "2026-12-01T00:00:00Z")
    second = demo_credential(store, tmp_path)
    assert second.made not in (None, first.made) and second.secret != first.secret
    assert second.path.read_text().strip() == second.secret
    assert store.project_for(secret_hash(first.secret)) is None
    assert [c.id for c in _live(store)] == [second.made]


@pytest.mark.parametrize("content", ["", "tsk_never-issued-anywhere", "not a credential\n"])
def test_a_file_without_a_live_demo_secret_is_replaced(
    store: SqliteStore, tmp_path: Path, content: str
) -> None:
    (tmp_path / FILE_NAME).write_text(content)
    made = demo_credential(store, tmp_path)
    assert made.made is not None
    assert store.project_for(secret_hash(made.secret)) == "demo"


def test_a_kept_secret_of_another_project_is_not_the_demos(
    store: SqliteStore, tmp_path: Path
) -> None:
    other = _add(store, "cred_other00001", "my-agent", "demo")
    (tmp_path / FILE_NAME).write_text(other)
    made = demo_credential(store, tmp_path)
    assert made.secret != other
    assert store.project_for(secret_hash(other)) == "my-agent"  # left alone


def test_earlier_demo_credentials_are_revoked_when_one_is_made(
    store: SqliteStore, tmp_path: Path
) -> None:
    # What earlier versions left: a live demo credential from every start.
    old = [_add(store, f"cred_olddemo{i:04d}", "demo", "demo") for i in range(3)]
    by_hand = _add(store, "cred_byhand0001", "demo", "laptop")  # another label: kept
    elsewhere = _add(store, "cred_elsewhere01", "my-agent", "demo")  # another project: kept
    made = demo_credential(store, tmp_path)
    assert sorted(made.revoked) == [f"cred_olddemo{i:04d}" for i in range(3)]
    for secret in old:
        assert store.project_for(secret_hash(secret)) is None
    assert store.project_for(secret_hash(by_hand)) == "demo"
    assert store.project_for(secret_hash(elsewhere)) == "my-agent"
    assert sorted(c.id for c in _live(store)) == sorted([made.made, "cred_byhand0001"])
