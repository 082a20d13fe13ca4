"""testdata/recall-controls.json run over real HTTP against `taisce serve`.

Each suite gets its own server (started with the suite's settings, on first use,
and stopped when the module ends) and its own fresh project. Every case is one
test, named after the case. See testdata/README.md for the format.

Every suite that runs without an embedding model runs twice: on the embedded store,
and on a server with TAISCE_STORE=dynamodb against moto's server (tests/moto_server.py,
a table of the fixture's own), its cases named "dynamodb-<case>". Suites that need a
model need a vector index, which on AWS is OpenSearch (not served by moto).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from taisce.credentials import new_credential_id, new_secret, secret_hash
from taisce.ports import Credential
from tests.moto_server import shared_moto
from tests.server import ROOT, LocalServer, start_server

FIXTURE = ROOT / "testdata" / "recall-controls.json"
FORMAT = "taisce-recall-fixture/2"
DATA: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
SUITES: dict[str, dict[str, Any]] = {suite["name"]: suite for suite in DATA["suites"]}
LISTS = ("facts", "reports", "passages")
# What every answer's `expect` holds, and what it may hold besides (README, "Matchers").
REQUIRED = {"status", "controls", "truncated", "degraded", "facts"}
MATCHERS = {
    *(f"{kind}_{how}" for kind in LISTS for how in ("count", "min")),
    "reports_titles_include",
    "reports_ancestors_first",
    "passages_first_message",
    "passages_include",
    "texts_exclude",
}
OPTIONAL = {"characters", "reports", "passages"} | MATCHERS
# Reports are built by a background worker after fact writes.
SETTLE_SECONDS = 60

# The API's counting rule (shared/spec/API.md, "Budget"), written out again here
# on purpose rather than imported from taisce.domain.budget.
COUNTED: dict[str, tuple[str, ...]] = {
    "facts": ("subject", "predicate", "object", "statement", "source_role", "quote", "context"),
    "reports": ("title", "summary"),
    "passages": ("role", "source", "quote"),
}
JSON_HEADERS = {"Content-Type": "application/json"}


def _counted_texts(body: Mapping[str, Any]) -> Iterator[str]:
    """The returned text that the budget counts, value by value."""
    for kind, fields in COUNTED.items():
        for item in body[kind]:
            texts = [item.get(name) for name in fields] + list(item.get("path") or [])
            yield from (t for t in texts if isinstance(t, str))


def recount(body: Mapping[str, Any]) -> int:
    """Code points of the returned text that the budget counts."""
    return sum(len(text) for text in _counted_texts(body))


@dataclass
class Loaded:
    server: LocalServer
    http: httpx.Client
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)


def _load(http: httpx.Client, memory: Mapping[str, Any]) -> None:
    for kind, created in (("facts", 201), ("messages", 202)):
        items = memory.get(kind) or []
        for start in range(0, len(items), 100):
            r = http.post(f"/v1/{kind}", json={kind: items[start : start + 100]})
            assert r.status_code == created, r.text
    for fact_id in memory.get("delete_facts") or []:
        r = http.delete(f"/v1/facts/{fact_id}")
        assert r.status_code == 204, r.text


def _settle(http: httpx.Client) -> None:
    """Wait until the reports of the writes are built (GET /v1/health, work_pending)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        r = http.get("/v1/health")
        assert r.status_code == 200, r.text
        if not r.json().get("work_pending", False):
            return
        assert time.monotonic() < deadline, "reports were not built in time"
        time.sleep(0.1)


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
    """One running server per suite and store, started on first use."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.running: dict[tuple[str, str], Loaded] = {}
        self.others: list[httpx.Client] = []

    def get(self, name: str, store: str = "embedded") -> Loaded:
        if (store, name) not in self.running:
            suite = SUITES[name]
            env = dict(suite["server"])
            # The table is shared by the session: each run has projects of its own.
            project = f"fixture-{name}"
            if store == "dynamodb":
                env.update(fixture_moto().env)
                project += f"-{uuid.uuid4().hex[:8]}"
            server = start_server(self.base / f"{store}-{name}", env)
            http = server.client(_new_credential(server, store, project))
            memory = suite["memory"]
            self.running[store, name] = Loaded(
                server,
                http,
                {f["id"]: f for f in memory.get("facts") or []},
                {m["id"]: m for m in memory.get("messages") or []},
            )
            _load(http, memory)
            if "other_project" in memory:
                other = server.client(_new_credential(server, store, f"{project}-other"))
                self.others.append(other)
                _load(other, memory["other_project"])
            _settle(http)
        return self.running[store, name]

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


def _label(item: Mapping[str, Any]) -> str:
    return str(item.get("id") or item.get("title") or item.get("message_id"))


def _check_items(kind: str, got: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    """Exactly these items in this order; ids compared when the fixture gives them."""
    if all("id" in item for item in want):
        assert [item.get("id") for item in got] == [item["id"] for item in want], kind
    assert len(got) == len(want), f"{kind}: got {[_label(i) for i in got]}"
    for actual, expected in zip(got, want, strict=True):
        if kind == "facts" and "path" not in expected:
            assert "path" not in actual, f"{actual['id']} is hop 1 and must carry no path"
        for key, value in expected.items():
            assert actual.get(key) == value, f"{kind} {_label(expected)}: {key}"


def _matches(item: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    return all(item.get(key) == value for key, value in want.items())


def _check_matchers(expect: Mapping[str, Any], body: Mapping[str, Any]) -> None:
    """What a client can rely on when the order comes from a model (README, "Matchers")."""
    for kind in LISTS:
        found = [_label(item) for item in body[kind]]
        if f"{kind}_count" in expect:
            assert len(body[kind]) == expect[f"{kind}_count"], f"{kind}: got {found}"
        if f"{kind}_min" in expect:
            assert len(body[kind]) >= expect[f"{kind}_min"], f"{kind}: got {found}"
    reports, passages = body["reports"], body["passages"]
    titles = [r["title"] for r in reports]
    for title in expect.get("reports_titles_include", []):
        assert title in titles, f"no report titled {title!r} in {titles}"
    if expect.get("reports_ancestors_first"):
        seen: list[list[str]] = []
        for report in reports:
            parent = report["path"][:-1]
            assert not parent or parent in seen, f"{report['path']} came before its parent"
            seen.append(report["path"])
    if "passages_first_message" in expect:
        assert passages, "no passages"
        first = passages[0]["message_id"]
        assert first == expect["passages_first_message"], [p["message_id"] for p in passages]
    for want in expect.get("passages_include", []):
        assert any(_matches(p, want) for p in passages), f"no passage like {want}"
    texts = list(_counted_texts(body))
    for unwanted in expect.get("texts_exclude", []):
        assert not [t for t in texts if unwanted in t], f"{unwanted!r} was returned"


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


def _check_reports(reports: list[dict[str, Any]], loaded: Loaded, roles: list[str]) -> None:
    """A report's path ends with its own title, and it cites only messages of this
    project that the facts cite, said in a role the recall asked for."""
    cited = {f["message_id"] for f in loaded.facts.values() if f.get("message_id")}
    for report in reports:
        assert isinstance(report["title"], str) and report["title"]
        assert isinstance(report["summary"], str) and report["summary"]
        assert report["path"] and report["path"][-1] == report["title"], report["path"]
        for message_id in report["source_messages"]:
            assert message_id in cited, f"report {report['title']!r} cites {message_id}"
            message = loaded.messages.get(message_id)
            if message is not None:
                assert message["role"] in roles, f"report {report['title']!r} cites {message_id}"


def _check_passages(
    passages: list[dict[str, Any]], messages: Mapping[str, dict[str, Any]], roles: list[str]
) -> None:
    """A passage quotes a stored message of this project at its code-point offsets."""
    for passage in passages:
        message = messages[passage["message_id"]]
        content = message["content"]
        assert passage["role"] == message["role"] and passage["role"] in roles
        assert passage["source"] == message.get("source")
        assert 0 <= passage["start"] < passage["end"] <= len(content), passage
        assert content[passage["start"] : passage["end"]] == passage["quote"], passage


# Cases the server fails because it is wrong (not the fixture): strict, so that a fix
# shows up as a failure here until the entry is removed.
# Cases the server is known to fail, each with the reason; they run as strict
# xfails so a fix shows up at once. Empty while the server passes every case.
SERVER_BUGS: dict[str, str] = {}


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
        error = body["error"]
        assert error["code"] == expect["error"]["code"], body
        if "control" in expect["error"]:
            assert error.get("control") == expect["error"]["control"], body
        else:
            assert "control" not in error, body
        assert isinstance(error["message"], str) and error["message"].strip()
        return

    assert body["controls"] == expect["controls"]
    if "characters" in expect:
        assert body["characters"] == expect["characters"]
    assert body["truncated"] is expect["truncated"]
    assert body["degraded"] == expect["degraded"]
    for kind in LISTS:
        if kind in expect:
            _check_items(kind, body[kind], expect[kind])
    _check_matchers(expect, body)

    # Rules that hold for every answer, whatever the case.
    controls = body["controls"]
    roles = controls["source_roles"]
    assert body["characters"] == recount(body)
    assert body["characters"] <= controls["max_characters"]
    assert sum(len(body[kind]) for kind in LISTS) <= controls["max_rows"]
    for kind in LISTS:
        if kind not in controls["surfaces"]:
            assert body[kind] == [], f"{kind} is not in surfaces"
    assert all(f["source_role"] in roles for f in body["facts"])
    _check_facts_whole(body["facts"], loaded.facts)
    _check_reports(body["reports"], loaded, roles)
    _check_passages(body["passages"], loaded.messages, roles)


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
