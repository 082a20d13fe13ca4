"""testdata/recall-controls.json for every runner: loading a suite's memory, waiting for
the worker, and comparing an answer or an error with a case (see testdata/README.md).

The HTTP runner (tests/integration/test_recall_fixture.py) and the adapters' runners
(tests/clients/) differ only in how they send; what they load and check is here.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from tests.server import ROOT

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

# Cases the server is known to fail, each with the reason; they run as strict
# xfails so a fix shows up at once. Empty while the server passes every case.
SERVER_BUGS: dict[str, str] = {}


def counted_texts(body: Mapping[str, Any]) -> Iterator[str]:
    """The returned text that the budget counts, value by value."""
    for kind, fields in COUNTED.items():
        for item in body[kind]:
            texts = [item.get(name) for name in fields] + list(item.get("path") or [])
            yield from (t for t in texts if isinstance(t, str))


def recount(body: Mapping[str, Any]) -> int:
    """Code points of the returned text that the budget counts."""
    return sum(len(text) for text in counted_texts(body))


@dataclass(frozen=True)
class Memory:
    """A suite's first project as the fixture gives it: what answers are checked against."""

    facts: dict[str, dict[str, Any]]
    messages: dict[str, dict[str, Any]]

    @classmethod
    def of(cls, suite: Mapping[str, Any]) -> Memory:
        memory = suite["memory"]
        return cls(
            {f["id"]: f for f in memory.get("facts") or []},
            {m["id"]: m for m in memory.get("messages") or []},
        )


def load(
    memory: Mapping[str, Any],
    store: Callable[[str, list[dict[str, Any]]], None],
    delete_fact: Callable[[str], None],
) -> None:
    """Store a suite's facts, then messages, in batches of 100, then delete what it says.

    `store(kind, batch)` sends one batch of "facts" or "messages" and checks it was taken.
    """
    for kind in ("facts", "messages"):
        items = memory.get(kind) or []
        for start in range(0, len(items), 100):
            store(kind, items[start : start + 100])
    for fact_id in memory.get("delete_facts") or []:
        delete_fact(fact_id)


def settle(work_pending: Callable[[], bool]) -> None:
    """Wait until the reports and vectors of the writes are built (GET /v1/health)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while work_pending():
        assert time.monotonic() < deadline, "reports were not built in time"
        time.sleep(0.1)


def params(
    suites: list[dict[str, Any]] | None = None,
    *,
    prefix: str = "",
    skip: Callable[[dict[str, Any]], str | None] = lambda case: None,
) -> list[Any]:
    """(suite name, case) for each case: named by the case, known server bugs as strict
    xfails, and cases `skip` gives a reason for skipped with it."""
    out = []
    for suite in DATA["suites"] if suites is None else suites:
        for case in suite["cases"]:
            marks = []
            if case["name"] in SERVER_BUGS:
                marks.append(pytest.mark.xfail(reason=SERVER_BUGS[case["name"]], strict=True))
            reason = skip(case)
            if reason:
                marks.append(pytest.mark.skip(reason=reason))
            out.append(pytest.param(suite["name"], case, id=prefix + case["name"], marks=marks))
    return out


# -- comparing ------------------------------------------------------------------------------


def check_error(expect: Mapping[str, Any], status: int, error: Mapping[str, Any]) -> None:
    """A refusal: the status, the code, the control (or none), and some message."""
    assert status == expect["status"], error
    assert error["code"] == expect["error"]["code"], error
    if "control" in expect["error"]:
        assert error.get("control") == expect["error"]["control"], error
    else:
        assert error.get("control") is None, error
    assert isinstance(error["message"], str) and error["message"].strip()


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
    texts = list(counted_texts(body))
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


def _check_reports(reports: list[dict[str, Any]], memory: Memory, roles: list[str]) -> None:
    """A report's path ends with its own title, and it cites only messages of this
    project that the facts cite, said in a role the recall asked for."""
    cited = {f["message_id"] for f in memory.facts.values() if f.get("message_id")}
    for report in reports:
        assert isinstance(report["title"], str) and report["title"]
        assert isinstance(report["summary"], str) and report["summary"]
        assert report["path"] and report["path"][-1] == report["title"], report["path"]
        for message_id in report["source_messages"]:
            assert message_id in cited, f"report {report['title']!r} cites {message_id}"
            message = memory.messages.get(message_id)
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


def check_answer(expect: Mapping[str, Any], body: Mapping[str, Any], memory: Memory) -> None:
    """A 200 answer: what the case fixes, then the rules that hold for every answer."""
    assert expect["status"] == 200, f"expected a refusal, got an answer: {body}"
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
    _check_facts_whole(body["facts"], memory.facts)
    _check_reports(body["reports"], memory, roles)
    _check_passages(body["passages"], memory.messages, roles)
