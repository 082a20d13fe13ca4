"""testdata/recall-controls.json run over real HTTP against `taisce serve`.

Each suite gets its own fresh project on a server started with the suite's settings
(on first use, shared by the suites with the same settings, stopped when the module
ends). Every case is one
test, named after the case. See testdata/README.md for the format.

Every suite that runs without an embedding model runs twice: on the embedded store,
and on a server with TAISCE_STORE=dynamodb against moto's server (tests/moto_server.py,
a table of the fixture's own), its cases named "dynamodb-<case>". Suites that need a
model need a vector index, which on AWS is OpenSearch (not served by moto).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from taisce.credentials import new_credential_id, new_secret, secret_hash
from taisce.domain.model import Credential
from tests.moto_server import shared_moto
from tests.recall_fixture import (
    DATA,
    FORMAT,
    LISTS,
    OPTIONAL,
    REQUIRED,
    SERVER_BUGS,
    SUITES,
    Memory,
    check_answer,
    check_error,
    load,
    settle,
)
from tests.server import LocalServer, start_server

JSON_HEADERS = {"Content-Type": "application/json"}


@dataclass
class Loaded:
    server: LocalServer
    http: httpx.Client
    memory: Memory


def _load(http: httpx.Client, memory: Mapping[str, Any]) -> None:
    def store(kind: str, batch: list[dict[str, Any]]) -> None:
        r = http.post(f"/v1/{kind}", json={kind: batch})
        assert r.status_code == (201 if kind == "facts" else 202), r.text

    def delete_fact(fact_id: str) -> None:
        r = http.delete(f"/v1/facts/{fact_id}")
        assert r.status_code == 204, r.text

    load(memory, store, delete_fact)


def _work_pending(http: httpx.Client) -> bool:
    r = http.get("/v1/status")
    assert r.status_code == 200, r.text
    return bool(r.json()["work_pending"])


STORES = ("embedded", "dynamodb")


def fixture_moto() -> Any:
    """The fixture's own table on the session's moto server: each server's worker
    thread works on every project of its table with marks."""
    return shared_moto().table_named("taisce-fixture")


def _on_dynamodb(suite: Mapping[str, Any]) -> bool:
    """Whether a suite also runs on DynamoDB: only without an embedding model."""
    return suite["server"].get("TAISCE_EMBEDDINGS") == "none"


def _new_credential(server: LocalServer, store: str, project: str) -> str:
    if store == "embedded":
        return server.new_credential(project)
    secret = new_secret()
    credential = Credential(new_credential_id(), project, "test", "2026-01-01T00:00:00Z")
    fixture_moto().store().add_credential(credential, secret_hash(secret))
    return secret


class Servers:
    """One running server per store and server settings, started on first use; each
    suite loads its memory into a project of its own on the server with its settings
    (suites with the same settings share a server: each start costs seconds)."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.servers: dict[tuple[str, str], LocalServer] = {}
        self.running: dict[tuple[str, str], Loaded] = {}
        self.others: list[httpx.Client] = []

    def _server(self, suite: Mapping[str, Any], store: str) -> LocalServer:
        settings = json.dumps(suite["server"], sort_keys=True)
        if (store, settings) not in self.servers:
            env = dict(suite["server"])
            if store == "dynamodb":
                env.update(fixture_moto().env)
            place = self.base / f"{store}-{len(self.servers)}"
            self.servers[store, settings] = start_server(place, env)
        return self.servers[store, settings]

    def get(self, name: str, store: str = "embedded") -> Loaded:
        if (store, name) not in self.running:
            suite = SUITES[name]
            server = self._server(suite, store)
            # The table and the servers are shared: each run has projects of its own.
            project = f"fixture-{name}-{uuid.uuid4().hex[:8]}"
            http = server.client(_new_credential(server, store, project))
            memory = suite["memory"]
            self.running[store, name] = Loaded(server, http, Memory.of(suite))
            _load(http, memory)
            loaded = [http]
            if "other_project" in memory:
                other = server.client(_new_credential(server, store, f"{project}-other"))
                self.others.append(other)
                _load(other, memory["other_project"])
                loaded.append(other)
            # Status answers for its credential's project: each loaded project settles.
            settle(lambda: any(_work_pending(c) for c in loaded))
        return self.running[store, name]

    def stop(self) -> None:
        for client in self.others:
            client.close()
        for loaded in self.running.values():
            loaded.http.close()
        for server in self.servers.values():
            server.stop()


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    running = Servers(Path(tmp_path_factory.mktemp("recall-fixture")))
    yield running
    running.stop()


def _send(http: httpx.Client, case: Mapping[str, Any]) -> httpx.Response:
    if "raw_body" in case:
        content = case["raw_body"].encode("utf-8")
    else:
        content = json.dumps(case["request"], ensure_ascii=False).encode("utf-8")
    return http.post("/v1/recalls", content=content, headers=JSON_HEADERS)


def _params() -> list[Any]:
    return [
        pytest.param(
            store,
            suite["name"],
            case,
            id=case["name"] if store == "embedded" else f"{store}-{case['name']}",
            marks=[pytest.mark.xfail(reason=SERVER_BUGS[case["name"]], strict=True)]
            if case["name"] in SERVER_BUGS
            else [],
        )
        for store in STORES
        for suite in DATA["suites"]
        if store == "embedded" or _on_dynamodb(suite)
        for case in suite["cases"]
    ]


@pytest.mark.parametrize(("store", "suite_name", "case"), _params())
def test_recall_case(servers: Servers, store: str, suite_name: str, case: dict[str, Any]) -> None:
    loaded = servers.get(suite_name, store)
    expect = case["expect"]
    r = _send(loaded.http, case)
    assert r.status_code == expect["status"], r.text
    body = r.json()
    if expect["status"] != 200:
        check_error(expect, r.status_code, body["error"])
        # Over the wire, "no control" means no such key at all.
        assert "control" in expect["error"] or "control" not in body["error"], body
        return
    check_answer(expect, body, loaded.memory)


def test_fixture_has_enough_uniquely_named_cases() -> None:
    assert DATA["format"] == FORMAT
    names = [case["name"] for suite in DATA["suites"] for case in suite["cases"]]
    assert len(names) >= 170
    assert len(names) == len(set(names))
    assert set(SERVER_BUGS) <= set(names)
    assert len(SUITES) == len(DATA["suites"])
    # Each suite has its own fact ids (README, "Changing the fixture").
    ids = [
        fact["id"]
        for suite in DATA["suites"]
        for memory in (suite["memory"], suite["memory"].get("other_project", {}))
        for fact in memory.get("facts") or []
    ]
    assert len(ids) == len(set(ids))


def test_fixture_cases_are_well_formed() -> None:
    for suite in DATA["suites"]:
        assert set(suite) >= {"name", "server", "memory", "cases"}
        # Without a model nothing depends on a ranking: every answer is given whole.
        exact = suite["server"].get("TAISCE_EMBEDDINGS") == "none"
        for case in suite["cases"]:
            assert case["rule"].strip(), case["name"]
            assert ("request" in case) != ("raw_body" in case), case["name"]
            expect = case["expect"]
            if expect["status"] != 200:
                assert set(expect) == {"status", "error"}, case["name"]
            elif exact:
                assert set(expect) == REQUIRED | {"characters", *LISTS}, case["name"]
            else:
                assert REQUIRED <= set(expect) <= REQUIRED | OPTIONAL, case["name"]
                for kind in LISTS:
                    loose = {f"{kind}_count", f"{kind}_min"} & set(expect)
                    assert not (kind in expect and loose), f"{case['name']}: {kind} twice"
