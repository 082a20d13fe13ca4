"""Credentials minted, listed and revoked through the API, and what each kind may do,
over real HTTP against the local server (the same handlers Lambda runs): an admin
mints and revokes in its own project only; other kinds are refused 403; a user
credential acts only as its user (filled in when a request names none); a revoked
credential stops on the very next request."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.server import LocalServer

FACT = {"subject": "Atlas", "predicate": "likes", "object": "tea", "source_role": "user"}


def _project() -> str:
    return f"creds-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def admin(server: LocalServer) -> Iterator[tuple[httpx.Client, str]]:
    name = _project()
    with server.client(server.new_credential(name, "admin")) as http:
        yield http, name


def _error(r: httpx.Response, status: int, code: str) -> str:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    error = r.json()["error"]
    assert error["code"] == code, error
    return str(error["message"])


def _listed(http: httpx.Client) -> dict[str, dict[str, object]]:
    r = http.get("/v1/credentials", params={"limit": 100})
    assert r.status_code == 200, r.text
    return {c["id"]: c for c in r.json()["credentials"]}


def test_an_admin_mints_credentials_that_work_and_lists_them_without_secrets(
    server: LocalServer, admin: tuple[httpx.Client, str]
) -> None:
    http, _ = admin
    made = http.post("/v1/credentials", json={"user": "ana@example.com", "label": "phone"})
    assert made.status_code == 201, made.text
    user_cred = made.json()
    assert set(user_cred) == {"id", "kind", "user", "label", "created_at", "secret"}
    assert (user_cred["kind"], user_cred["user"]) == ("user", "ana@example.com")
    plain = http.post("/v1/credentials", json={})
    assert plain.status_code == 201, plain.text
    project_cred = plain.json()
    assert project_cred["kind"] == "project" and "user" not in project_cred

    with server.client(project_cred["secret"]) as other:
        assert other.post("/v1/facts", json={"facts": [FACT]}).status_code == 201
    listed = _listed(http)
    assert listed[project_cred["id"]]["last_used_at"] is not None  # just used
    assert listed[user_cred["id"]]["last_used_at"] is None  # never used
    assert listed[user_cred["id"]]["user"] == "ana@example.com"
    assert sorted(c["kind"] for c in listed.values()) == ["admin", "project", "user"]
    text = http.get("/v1/credentials").text
    assert user_cred["secret"] not in text and project_cred["secret"] not in text
    assert "tsk_" not in text


def test_the_listing_is_paged_by_id(admin: tuple[httpx.Client, str]) -> None:
    http, _ = admin
    for _ in range(2):
        assert http.post("/v1/credentials", json={}).status_code == 201
    seen: list[str] = []
    cursor = None
    for _ in range(4):
        params = {"limit": 1} | ({"cursor": cursor} if cursor else {})
        page = http.get("/v1/credentials", params=params).json()
        seen += [c["id"] for c in page["credentials"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == sorted(seen) and len(seen) == 3  # the admin and the two minted
    _error(http.get("/v1/credentials", params={"cursor": "edited"}), 400, "invalid_request")
    _error(http.get("/v1/credentials", params={"limit": 0}), 400, "invalid_request")


def test_a_revoked_credential_stops_on_the_next_request_and_only_in_its_project(
    server: LocalServer, admin: tuple[httpx.Client, str]
) -> None:
    http, _ = admin
    minted = http.post("/v1/credentials", json={"user": "bo"}).json()
    with server.client(server.new_credential(_project(), "admin")) as stranger:
        # Another project's admin cannot see or revoke it: 404 as for an unknown id.
        _error(stranger.delete(f"/v1/credentials/{minted['id']}"), 404, "not_found")
        assert minted["id"] not in _listed(stranger)
    with server.client(minted["secret"]) as bo:
        assert bo.post("/v1/recalls", json={"question": "Atlas?"}).status_code == 200
        assert http.delete(f"/v1/credentials/{minted['id']}").status_code == 204
        _error(bo.post("/v1/recalls", json={"question": "Atlas?"}), 401, "unauthorized")
    assert _listed(http)[minted["id"]]["revoked_at"]
    _error(http.delete(f"/v1/credentials/{minted['id']}"), 404, "not_found")
    _error(http.delete("/v1/credentials/cred_unknown"), 404, "not_found")


@pytest.mark.parametrize(
    "body", [{"user": "a b"}, {"user": ""}, {"user": 7}, {"kind": "admin"}, {"label": ""}]
)
def test_a_wrong_mint_request_is_refused_and_mints_nothing(
    admin: tuple[httpx.Client, str], body: dict[str, object]
) -> None:
    http, _ = admin
    before = _listed(http)
    _error(http.post("/v1/credentials", json=body), 400, "invalid_request")
    assert _listed(http) == before


@pytest.mark.parametrize("kind", ["project", "user"])
def test_only_an_admin_may_mint_list_or_revoke(server: LocalServer, kind: str) -> None:
    name = _project()
    user = "ana" if kind == "user" else None
    with server.client(server.new_credential(name, kind, user)) as http:  # type: ignore[arg-type]
        for r in (
            http.post("/v1/credentials", json={}),
            http.get("/v1/credentials"),
            http.delete("/v1/credentials/cred_x"),
        ):
            assert "admin" in _error(r, 403, "forbidden")


def test_a_user_credential_acts_only_as_its_user(server: LocalServer) -> None:
    name = _project()
    with (
        server.client(server.new_credential(name, "user", "ana")) as ana,
        server.client(server.new_credential(name)) as project,
    ):
        # Naming no user, it acts as its own; naming its own is the same.
        assert ana.post("/v1/facts", json={"facts": [FACT]}).status_code == 201
        assert ana.get("/v1/facts", params={"subject": "Atlas", "user": "ana"}).json()["facts"]
        assert ana.get("/v1/facts", params={"subject": "Atlas"}).json()["facts"]
        # So the fact is ana's: seen with her user, not in the shared memory.
        mine = project.get("/v1/facts", params={"subject": "Atlas", "user": "ana"}).json()
        assert [f["object"] for f in mine["facts"]] == ["tea"]
        assert project.get("/v1/facts", params={"subject": "Atlas"}).json()["facts"] == []
        # Another user is refused, whatever the route, and nothing is stored.
        for r in (
            ana.post("/v1/facts", json={"facts": [FACT], "user": "bo"}),
            ana.post("/v1/recalls", json={"question": "Atlas?", "user": "bo"}),
            ana.get("/v1/facts", params={"subject": "Atlas", "user": "bo"}),
            ana.get("/v1/messages", params={"user": "bo"}),
        ):
            _error(r, 403, "forbidden")
        assert project.get("/v1/facts", params={"subject": "Atlas", "user": "bo"}).json() == {
            "facts": [],
            "next_cursor": None,
        }
