"""testdata/recall-controls.json run over real HTTP against `taisce serve`.

Each suite gets its own server (started with the suite's settings, on first use,
and stopped when the module ends) and its own fresh project. Every case is one
test, named after the case. See testdata/README.md for the format.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server import ROOT, LocalServer, start_server

FIXTURE = ROOT / "testdata" / "recall-controls.json"
DATA: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
SUITES: dict[str, dict[str, Any]] = {suite["name"]: suite for suite in DATA["suites"]}
LISTS = ("facts", "reports", "passages")

# The API's counting rule (shared/spec/API.md, "Budget"), written out again here
# on purpose rather than imported from taisce.domain.budget.
COUNTED: dict[str, tuple[str, ...]] = {
    "facts": ("subject", "predicate", "object", "statement", "source_role", "quote", "context"),
    "reports": ("title", "summary"),
    "passages": ("role", "source", "quote"),
}
JSON_HEADERS = {"Content-Type": "application/json"}


def recount(body: Mapping[str, Any]) -> int:
    """Code points of the returned text that the budget counts."""
    total = 0
    for kind, fields in COUNTED.items():
        for item in body[kind]:
            texts = [item.get(name) for name in fields] + list(item.get("path") or [])
            total += sum(len(t) for t in texts if isinstance(t, str))
    return total


@dataclass
class Loaded:
    server: LocalServer
    http: httpx.Client
    facts: dict[str, dict[str, Any]]


def _load(http: httpx.Client, memory: Mapping[str, Any]) -> None:
    for kind, created in (("facts", 201), ("messages", 202)):
        items = memory.get(kind) or []
        for start in range(0, len(items), 100):
            r = http.post(f"/v1/{kind}", json={kind: items[start : start + 100]})
            assert r.status_code == created, r.text
    for fact_id in memory.get("delete_facts") or []:
        r = http.delete(f"/v1/facts/{fact_id}")
        assert r.status_code == 204, r.text


class Servers:
    """One running server per suite, started on first use."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.running: dict[str, Loaded] = {}
        self.others: list[httpx.Client] = []

    def get(self, name: str) -> Loaded:
        if name not in self.running:
            suite = SUITES[name]
            server = start_server(self.base / name, suite["server"])
            http = server.client(server.new_credential(f"fixture-{name}"))
            self.running[name] = Loaded(server, http, {})
            memory = suite["memory"]
            _load(http, memory)
            self.running[name].facts = {f["id"]: f for f in memory.get("facts") or []}
            if "other_project" in memory:
                other = server.client(server.new_credential(f"fixture-{name}-other"))
                self.others.append(other)
                _load(other, memory["other_project"])
        return self.running[name]

    def stop(self) -> None:
        for client in self.others:
            client.close()
        for loaded in self.running.values():
            loaded.http.close()
            loaded.server.stop()


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


def _check_items(kind: str, got: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    assert [item.get("id") for item in got] == [item["id"] for item in want], kind
    for actual, expected in zip(got, want, strict=True):
        if kind == "facts" and "path" not in expected:
            assert "path" not in actual, f"{actual['id']} is hop 1 and must carry no path"
        for key, value in expected.items():
            assert actual.get(key) == value, f"{kind} {expected['id']}: {key}"


def _check_facts_whole(facts: list[dict[str, Any]], stored: Mapping[str, dict[str, Any]]) -> None:
    """Facts come back whole and unaltered: the texts as they were stored."""
    for fact in facts:
        given = stored[fact["id"]]
        default = f"{given['subject']} {given['predicate']} {given['object']}"
        assert fact["subject"] == given["subject"]
        assert fact["predicate"] == given["predicate"]
        assert fact["object"] == given["object"]
        assert fact["object_kind"] == given.get("object_kind", "entity")
        assert fact["statement"] == given.get("statement", default)
        assert fact["source_role"] == given["source_role"]
        assert fact.get("quote") == given.get("quote")
        assert fact.get("context") == given.get("context")


def _params() -> list[Any]:
    return [
        pytest.param(suite["name"], case, id=case["name"])
        for suite in DATA["suites"]
        for case in suite["cases"]
    ]


@pytest.mark.parametrize(("suite_name", "case"), _params())
def test_recall_case(servers: Servers, suite_name: str, case: dict[str, Any]) -> None:
    loaded = servers.get(suite_name)
    expect = case["expect"]
    r = _send(loaded.http, case)
    assert r.status_code == expect["status"], r.text
    body = r.json()

    if expect["status"] != 200:
        error = body["error"]
        assert error["code"] == expect["error"]["code"], body
        if "control" in expect["error"]:
            assert error.get("control") == expect["error"]["control"], body
        else:
            assert "control" not in error, body
        assert isinstance(error["message"], str) and error["message"].strip()
        return

    assert body["controls"] == expect["controls"]
    assert body["characters"] == expect["characters"]
    assert body["truncated"] is expect["truncated"]
    assert body["degraded"] == expect["degraded"]
    for kind in LISTS:
        _check_items(kind, body[kind], expect[kind])

    # Rules that hold for every answer, whatever the case.
    controls = body["controls"]
    assert body["characters"] == recount(body)
    assert body["characters"] <= controls["max_characters"]
    assert sum(len(body[kind]) for kind in LISTS) <= controls["max_rows"]
    assert all(f["source_role"] in controls["source_roles"] for f in body["facts"])
    if "facts" not in controls["surfaces"]:
        assert body["facts"] == []
    _check_facts_whole(body["facts"], loaded.facts)


def test_fixture_has_enough_uniquely_named_cases() -> None:
    assert DATA["format"] == "taisce-recall-fixture/1"
    names = [case["name"] for suite in DATA["suites"] for case in suite["cases"]]
    assert len(names) >= 45
    assert len(names) == len(set(names))
    assert len(SUITES) == len(DATA["suites"])


def test_fixture_cases_are_well_formed() -> None:
    for suite in DATA["suites"]:
        assert set(suite) >= {"name", "server", "memory", "cases"}
        for case in suite["cases"]:
            assert case["rule"].strip(), case["name"]
            assert ("request" in case) != ("raw_body" in case), case["name"]
            expect = case["expect"]
            if expect["status"] == 200:
                assert set(expect) == {"status", "controls", "characters", "truncated"} | {
                    "degraded",
                    *LISTS,
                }, case["name"]
            else:
                assert set(expect) == {"status", "error"}, case["name"]
