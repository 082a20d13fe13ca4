"""Bad input over real HTTP: the API's error shape, never a 500, and nothing stored.

These tests run against a server of their own (not the shared session server): a
500 makes the server log a traceback on its stdout, and the session server's pipes
are never read, so a few of them could fill the pipe and stall it for everyone.
"""

from __future__ import annotations

import http.client
import json
import socket
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.server import LocalServer, start_server
from tests.unit.test_problems import assert_plain

ERROR_CODES = {
    "invalid_request",
    "invalid_recall_controls",
    "unauthorized",
    "not_found",
    "method_not_allowed",
    "payload_too_large",
}
MIB = 1024 * 1024


# -- a server whose output is read, so that logged tracebacks cannot stall it ----------


def _drain(stream: TextIO | None) -> None:
    if stream is None:
        return
    try:
        for _ in iter(stream.readline, ""):
            pass
    except (OSError, ValueError):
        pass  # closed by stop()


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    running = start_server(Path(tmp_path_factory.mktemp("errors-data")))
    for stream in (running.process.stdout, running.process.stderr):
        threading.Thread(target=_drain, args=(stream,), daemon=True).start()
    yield running
    running.stop()


# -- helpers ----------------------------------------------------------------------------


class Project:
    """A project of its own for one test: a client, and what its store holds."""

    def __init__(self, server: LocalServer) -> None:
        self.name = f"errors-{uuid.uuid4().hex[:12]}"
        self.secret = server.new_credential(self.name)
        self.server = server
        self.http = server.client(self.secret)

    def rows(self, table: str) -> int:
        db = sqlite3.connect(self.server.data_dir / "taisce.sqlite3", timeout=30)
        try:
            (count,) = db.execute(
                f"SELECT count(*) FROM {table} WHERE project = ?", (self.name,)
            ).fetchone()
        finally:
            db.close()
        return int(count)

    def assert_nothing_stored(self, *subjects: str) -> None:
        for subject in subjects:
            r = self.http.get("/v1/facts", params={"subject": subject})
            assert r.status_code == 200, r.text
            assert r.json()["facts"] == []
        assert self.rows("facts") == 0
        assert self.rows("messages") == 0
        assert self.rows("passages") == 0


@pytest.fixture
def project(api: LocalServer) -> Iterator[Project]:
    p = Project(api)
    yield p
    p.http.close()


def assert_no_trace(text: str) -> None:
    assert "Traceback" not in text
    assert 'File "' not in text


def assert_error(
    r: httpx.Response | http.client.HTTPResponse,
    status: int,
    code: str,
    *,
    control: str | None = None,
    raw: bytes | None = None,
) -> dict[str, Any]:
    """The response is exactly {"error": {"code", "message"[, "control"]}}."""
    got = r.status if isinstance(r, http.client.HTTPResponse) else r.status_code
    text = raw.decode("utf-8", "replace") if raw is not None else r.text  # type: ignore[union-attr]
    assert got == status, text
    content_type = (
        r.getheader("content-type")
        if isinstance(r, http.client.HTTPResponse)
        else (r.headers.get("content-type"))
    )
    assert content_type is not None and content_type.startswith("application/json"), content_type
    body = json.loads(text)
    assert set(body) == {"error"}, body
    error = body["error"]
    expected = {"code", "message"} | ({"control"} if code == "invalid_recall_controls" else set())
    assert set(error) == expected, error
    assert error["code"] == code, error
    assert isinstance(error["message"], str) and error["message"].strip(), error
    assert_no_trace(error["message"])
    if control is not None:
        assert error["control"] == control, error
    return error


def assert_api_answer(r: httpx.Response) -> None:
    """2xx, or 4xx in the error shape; never 5xx."""
    assert_no_trace(r.text)
    assert r.status_code < 500, r.text
    if r.status_code >= 400:
        body = r.json()
        assert set(body) == {"error"}, body
        error = body["error"]
        assert error["code"] in ERROR_CODES, error
        expected = {"code", "message"}
        if error["code"] == "invalid_recall_controls":
            expected.add("control")
        assert set(error) == expected, error
        assert isinstance(error["message"], str) and error["message"].strip()
        assert_plain(error["message"])
    else:
        assert 200 <= r.status_code < 300, r.text


def good_fact(subject: str = "Refused Subject", **extra: Any) -> dict[str, Any]:
    return {
        "subject": subject,
        "predicate": "works at",
        "object": "Refused Corp",
        "source_role": "user",
        **extra,
    }


def good_message(**extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": "Refused Subject works at Refused Corp.", **extra}


def without(item: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k != key}


POSTS = ["/v1/recalls", "/v1/facts", "/v1/messages"]


# -- bodies that are not JSON objects ----------------------------------------------------


@pytest.mark.parametrize("route", POSTS)
@pytest.mark.parametrize(
    "body",
    [
        b"{",
        b'{"question": }',
        b"{'question': 'x'}",
        b'{"facts": [}',
        b'{"question": "x"} trailing',
        b"question=x",
        b"",
    ],
    ids=["open-brace", "missing-value", "single-quotes", "open-list", "trailing", "form", "empty"],
)
def test_a_body_that_is_not_json_is_refused(project: Project, route: str, body: bytes) -> None:
    r = project.http.post(route, content=body, headers={"Content-Type": "application/json"})
    assert_error(r, 400, "invalid_request")
    project.assert_nothing_stored("Refused Subject")


@pytest.mark.parametrize("route", POSTS)
@pytest.mark.parametrize(
    "value",
    [None, [], [1, 2], [[{"question": "x"}]], "a string", 42, 4.5, True],
    ids=["null", "empty-list", "list", "nested-list", "string", "int", "float", "true"],
)
def test_json_that_is_not_an_object_is_refused(project: Project, route: str, value: Any) -> None:
    r = project.http.post(route, content=json.dumps(value).encode())
    error = assert_error(r, 400, "invalid_request")
    assert "object" in error["message"]
    project.assert_nothing_stored()


VALID_BODIES = {
    "/v1/recalls": {"question": "Where does List Person work?"},
    "/v1/facts": {"facts": [good_fact("List Person")]},
    "/v1/messages": {"messages": [good_message(content="List Person works at List Corp.")]},
}


@pytest.mark.parametrize("route", POSTS)
def test_a_list_holding_a_valid_body_is_refused(project: Project, route: str) -> None:
    body = VALID_BODIES[route]
    r = project.http.post(route, json=[body, body])
    error = assert_error(r, 400, "invalid_request")
    assert "object" in error["message"]
    project.assert_nothing_stored("List Person")


@pytest.mark.parametrize("route", POSTS)
def test_a_body_that_is_not_utf8_is_refused(project: Project, route: str) -> None:
    r = project.http.post(route, content=b'{"question": "\xff\xfe", "facts": "\xff"}')
    assert_error(r, 400, "invalid_request")
    project.assert_nothing_stored()


@pytest.mark.parametrize("route", POSTS)
def test_deeply_nested_json_is_refused_not_a_500(project: Project, route: str) -> None:
    depth = 100_000
    key = {"/v1/recalls": b"question", "/v1/facts": b"facts", "/v1/messages": b"messages"}[route]
    body = b'{"' + key + b'": ' + b"[" * depth + b"]" * depth + b"}"
    r = project.http.post(route, content=body)
    assert_error(r, 400, "invalid_request")
    project.assert_nothing_stored()


def test_content_type_does_not_change_how_the_body_is_read(project: Project) -> None:
    r = project.http.post(
        "/v1/recalls", content=b'{"question": "x"', headers={"Content-Type": "text/plain"}
    )
    assert_error(r, 400, "invalid_request")


# -- facts --------------------------------------------------------------------------------


BAD_FACTS = [
    pytest.param(without(good_fact(), "subject"), id="missing-subject"),
    pytest.param(without(good_fact(), "predicate"), id="missing-predicate"),
    pytest.param(without(good_fact(), "object"), id="missing-object"),
    pytest.param(without(good_fact(), "source_role"), id="missing-source_role"),
    pytest.param(good_fact(source_role=None), id="null-source_role"),
    pytest.param(good_fact(subject=None), id="null-subject"),
    pytest.param(good_fact(subject=7), id="int-subject"),
    pytest.param({**good_fact(), "predicate": ["works at"]}, id="list-predicate"),
    pytest.param({**good_fact(), "object": {"name": "Refused Corp"}}, id="object-object"),
    pytest.param(good_fact(statement=5), id="int-statement"),
    pytest.param(good_fact(quote=True), id="bool-quote"),
    pytest.param(good_fact(context=1.5), id="float-context"),
    pytest.param(good_fact(id=7), id="int-id"),
    pytest.param(good_fact(id="has spaces"), id="bad-id"),
    pytest.param(good_fact(id="x" * 129), id="long-id"),
    pytest.param(good_fact(message_id="a/b"), id="bad-message_id"),
    pytest.param(good_fact(object_kind="thing"), id="bad-object_kind"),
    pytest.param(good_fact(object_kind=None), id="null-object_kind"),
    pytest.param(good_fact(source_role="owner"), id="unknown-role"),
    pytest.param(good_fact(source_role="User"), id="role-wrong-case"),
    pytest.param(good_fact(source_role=["user"]), id="role-list"),
    pytest.param(good_fact(subject=""), id="empty-subject"),
    pytest.param(good_fact(subject="   "), id="blank-subject"),
    pytest.param({**good_fact(), "predicate": "\t"}, id="blank-predicate"),
    pytest.param({**good_fact(), "object": " \n "}, id="blank-object"),
    pytest.param(good_fact(statement="  "), id="blank-statement"),
    pytest.param(good_fact(statement=""), id="empty-statement"),
    pytest.param(good_fact(subject="S" * 501), id="long-subject"),
    pytest.param({**good_fact(), "object": "O" * 4001}, id="long-object"),
    pytest.param(good_fact(quote="q" * 4001), id="long-quote"),
    pytest.param(good_fact(confidence=0.9), id="unknown-field"),
    pytest.param(good_fact(project="other"), id="project-field"),
    pytest.param(good_fact(recorded_at="2020-01-01T00:00:00Z"), id="recorded_at-is-the-servers"),
    pytest.param(good_fact(valid_from="2026-01-01T10:00:00"), id="valid_from-no-offset"),
    pytest.param(good_fact(valid_to="2026-01-01T10:00:00"), id="valid_to-no-offset"),
    pytest.param(good_fact(valid_from="2026-01-01"), id="date-only"),
    pytest.param(good_fact(valid_from="2026-13-01T00:00:00Z"), id="month-13"),
    pytest.param(good_fact(valid_from="2026-02-30T00:00:00Z"), id="feb-30"),
    pytest.param(good_fact(valid_from="yesterday"), id="words"),
    pytest.param(good_fact(valid_from=""), id="empty-time"),
    pytest.param(good_fact(valid_from=True), id="bool-time"),
    pytest.param(good_fact(valid_from=1767261600), id="int-time"),
    pytest.param(good_fact(valid_from=1767261600.5), id="float-time"),
    pytest.param(good_fact(valid_from="1767261600"), id="numeric-string-time"),
    pytest.param(good_fact(valid_from="2026-01-01T10:00Z"), id="no-seconds"),
    pytest.param(
        good_fact(valid_from="2026-05-01T00:00:00Z", valid_to="2026-04-30T23:59:59Z"),
        id="valid_to-before-valid_from",
    ),
    pytest.param(
        # The same instant is fine, but 10:00+02:00 is 08:00Z: before 09:00Z.
        good_fact(valid_from="2026-05-01T09:00:00Z", valid_to="2026-05-01T10:00:00+02:00"),
        id="valid_to-before-valid_from-across-offsets",
    ),
]


@pytest.mark.parametrize("fact", BAD_FACTS)
def test_a_bad_fact_is_refused_and_not_stored(project: Project, fact: dict[str, Any]) -> None:
    r = project.http.post("/v1/facts", json={"facts": [fact]})
    error = assert_error(r, 400, "invalid_request")
    assert "facts[0]" in error["message"]
    project.assert_nothing_stored("Refused Subject")


@pytest.mark.parametrize("moment", ["9999-12-31T23:00:00-05:00", "0001-01-01T00:30:00+01:00"])
def test_a_time_that_cannot_be_held_in_utc_is_refused_not_a_500(
    project: Project, moment: str
) -> None:
    r = project.http.post("/v1/facts", json={"facts": [good_fact(valid_from=moment)]})
    assert_error(r, 400, "invalid_request")
    project.assert_nothing_stored("Refused Subject")


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({}, id="no-facts"),
        pytest.param({"facts": None}, id="null"),
        pytest.param({"facts": {}}, id="object"),
        pytest.param({"facts": good_fact()}, id="one-fact-not-in-a-list"),
        pytest.param({"facts": "x"}, id="string"),
        pytest.param({"facts": []}, id="empty-batch"),
        pytest.param({"facts": [good_fact(f"Refused {i}") for i in range(101)]}, id="101-facts"),
        pytest.param({"facts": ["x"]}, id="item-not-object"),
        pytest.param({"facts": [None]}, id="item-null"),
        pytest.param({"facts": [good_fact()], "project": "other"}, id="project-field"),
        pytest.param({"facts": [good_fact()], "messages": []}, id="unknown-field"),
        pytest.param({"fact": [good_fact()]}, id="misspelt"),
    ],
)
def test_a_bad_facts_batch_is_refused(project: Project, body: dict[str, Any]) -> None:
    r = project.http.post("/v1/facts", json=body)
    assert_error(r, 400, "invalid_request")
    project.assert_nothing_stored("Refused Subject", "Refused 0", "Refused 100")


def test_a_batch_of_100_facts_is_the_largest_allowed(project: Project) -> None:
    r = project.http.post("/v1/facts", json={"facts": [good_fact(f"Kept {i}") for i in range(100)]})
    assert r.status_code == 201, r.text
    assert len(r.json()["facts"]) == 100
    assert project.rows("facts") == 100


@pytest.mark.parametrize("bad_at", [0, 2, 4])
def test_one_bad_fact_among_good_ones_stores_none(project: Project, bad_at: int) -> None:
    facts: list[dict[str, Any]] = [good_fact(f"Batch Person {i}") for i in range(5)]
    facts[bad_at] = without(facts[bad_at], "source_role")
    r = project.http.post("/v1/facts", json={"facts": facts})
    error = assert_error(r, 400, "invalid_request")
    assert f"facts[{bad_at}]" in error["message"]
    project.assert_nothing_stored(*(f"Batch Person {i}" for i in range(5)))
    recall = project.http.post(
        "/v1/recalls",
        json={"question": "Who is Batch Person 1 or Batch Person 3?", "source_roles": ["user"]},
    )
    assert recall.status_code == 200, recall.text
    assert recall.json()["facts"] == []


def test_a_good_fact_after_a_refused_batch_is_stored_alone(project: Project) -> None:
    refused = project.http.post(
        "/v1/facts",
        json={"facts": [good_fact(id="kept-later"), good_fact(source_role="robot")]},
    )
    assert_error(refused, 400, "invalid_request")
    stored = project.http.post("/v1/facts", json={"facts": [good_fact(id="kept-later")]})
    assert stored.status_code == 201, stored.text
    assert project.rows("facts") == 1


# -- messages -------------------------------------------------------------------------------

BAD_MESSAGES = [
    pytest.param(without(good_message(), "role"), id="missing-role"),
    pytest.param(without(good_message(), "content"), id="missing-content"),
    pytest.param(good_message(role="bot"), id="unknown-role"),
    pytest.param(good_message(role="USER"), id="role-wrong-case"),
    pytest.param(good_message(role=None), id="null-role"),
    pytest.param(good_message(content=None), id="null-content"),
    pytest.param(good_message(content=5), id="int-content"),
    pytest.param(good_message(content=["a", "b"]), id="list-content"),
    pytest.param(good_message(content=""), id="empty-content"),
    pytest.param(good_message(content="  \n\t "), id="blank-content"),
    pytest.param(good_message(content="x" * 100_001), id="content-100001"),
    pytest.param(good_message(content="\U0001f600" * 100_001), id="content-100001-astral"),
    pytest.param(good_message(source=5), id="int-source"),
    pytest.param(good_message(id="no spaces allowed"), id="bad-id"),
    pytest.param(good_message(id=""), id="empty-id"),
    pytest.param(good_message(occurred_at="2026-01-01T10:00:00"), id="no-offset"),
    pytest.param(good_message(occurred_at="2026-02-30T10:00:00Z"), id="feb-30"),
    pytest.param(good_message(occurred_at="soon"), id="words"),
    pytest.param(good_message(occurred_at=1767261600), id="int-time"),
    pytest.param(good_message(metadata={"a": 1}), id="unknown-field"),
    pytest.param(good_message(project="other"), id="project-field"),
    pytest.param(good_message(recorded_at="2026-01-01T10:00:00Z"), id="recorded_at"),
]


@pytest.mark.parametrize("message", BAD_MESSAGES)
def test_a_bad_message_is_refused_and_not_stored(project: Project, message: dict[str, Any]) -> None:
    r = project.http.post("/v1/messages", json={"messages": [message]})
    error = assert_error(r, 400, "invalid_request")
    assert "messages[0]" in error["message"]
    project.assert_nothing_stored()


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({}, id="no-messages"),
        pytest.param({"messages": None}, id="null"),
        pytest.param({"messages": good_message()}, id="not-a-list"),
        pytest.param({"messages": []}, id="empty-batch"),
        pytest.param({"messages": [good_message() for _ in range(101)]}, id="101-messages"),
        pytest.param({"messages": [1]}, id="item-not-object"),
        pytest.param({"messages": [good_message()], "facts": []}, id="unknown-field"),
    ],
)
def test_a_bad_messages_batch_is_refused(project: Project, body: dict[str, Any]) -> None:
    r = project.http.post("/v1/messages", json=body)
    assert_error(r, 400, "invalid_request")
    project.assert_nothing_stored()


def test_content_is_counted_in_code_points(project: Project) -> None:
    """100,000 astral code points (400,000 UTF-8 bytes) is within the limit."""
    r = project.http.post(
        "/v1/messages", json={"messages": [good_message(content="\U0001f600" * 100_000)]}
    )
    assert r.status_code == 202, r.text
    assert project.rows("messages") == 1


@pytest.mark.parametrize("bad_at", [0, 3])
def test_one_bad_message_among_good_ones_stores_none(project: Project, bad_at: int) -> None:
    messages = [good_message(id=f"batch-m{i}") for i in range(4)]
    messages[bad_at] = good_message(id=f"batch-m{bad_at}", role="narrator")
    r = project.http.post("/v1/messages", json={"messages": messages})
    error = assert_error(r, 400, "invalid_request")
    assert f"messages[{bad_at}]" in error["message"]
    project.assert_nothing_stored()


# -- recalls --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({}, id="missing"),
        pytest.param({"question": None}, id="null"),
        pytest.param({"question": ""}, id="empty"),
        pytest.param({"question": " \n\t"}, id="blank"),
        pytest.param({"question": 5}, id="int"),
        pytest.param({"question": ["Atlas"]}, id="list"),
        pytest.param({"question": "q" * 10_001}, id="too-long"),
        # question is checked before the controls and before unknown fields
        pytest.param({"question": "", "max_characters": 0, "bogus": 1}, id="before-controls"),
    ],
)
def test_a_bad_question_is_invalid_request_without_a_control(
    project: Project, body: dict[str, Any]
) -> None:
    r = project.http.post("/v1/recalls", json=body)
    assert_error(r, 400, "invalid_request")


@pytest.mark.parametrize(
    ("extra", "control"),
    [
        ({"max_characters": 0}, "max_characters"),
        ({"max_characters": -1}, "max_characters"),
        ({"max_characters": "4000"}, "max_characters"),
        ({"max_characters": 4000.5}, "max_characters"),
        ({"max_characters": 4000.0}, "max_characters"),
        ({"max_characters": True}, "max_characters"),
        ({"max_characters": 16_001}, "max_characters"),
        ({"max_rows": 0}, "max_rows"),
        ({"max_rows": 201}, "max_rows"),
        ({"source_roles": []}, "source_roles"),
        ({"source_roles": "user"}, "source_roles"),
        ({"source_roles": ["owner"]}, "source_roles"),
        ({"source_roles": ["user", "user"]}, "source_roles"),
        ({"hops": "2"}, "hops"),
        ({"hops": 1.5}, "hops"),
        ({"surfaces": []}, "surfaces"),
        ({"surfaces": ["facts", "facts"]}, "surfaces"),
        ({"surfaces": ["graph"]}, "surfaces"),
        ({"themes": "yes"}, "themes"),
        ({"themes": 1}, "themes"),
        ({"limit": 5}, "limit"),
        ({"project": "other"}, "project"),
    ],
)
def test_a_bad_control_names_the_control(
    project: Project, extra: dict[str, Any], control: str
) -> None:
    r = project.http.post("/v1/recalls", json={"question": "Where does Atlas work?", **extra})
    assert_error(r, 400, "invalid_recall_controls", control=control)


# -- size ------------------------------------------------------------------------------------


def test_a_body_over_1_mib_is_413_and_nothing_is_stored(project: Project) -> None:
    messages = [good_message(id=f"big-{i}", content="x" * 100_000) for i in range(11)]
    body = json.dumps({"messages": messages}).encode()
    assert len(body) > MIB
    r = project.http.post("/v1/messages", content=body)  # httpx sends a real Content-Length
    assert r.request.headers["content-length"] == str(len(body))
    assert_error(r, 413, "payload_too_large")
    project.assert_nothing_stored()
    # The server still answers, on this client and on a new connection.
    assert project.http.get("/v1/health").status_code == 200
    again = project.http.post("/v1/messages", json={"messages": messages[:1]})
    assert again.status_code == 202, again.text
    with project.server.client(project.secret) as fresh:
        assert fresh.post("/v1/recalls", json={"question": "anything"}).status_code == 200


@pytest.mark.parametrize("route", POSTS)
def test_413_is_answered_before_the_credential(api: LocalServer, route: str) -> None:
    with api.client() as anonymous:
        r = anonymous.post(route, content=b" " * (MIB + 1))
    assert_error(r, 413, "payload_too_large")


def test_a_body_of_exactly_1_mib_is_read(project: Project) -> None:
    head = b'{"question": "Where does Atlas work?"}'
    body = head + b" " * (MIB - len(head))
    assert len(body) == MIB
    r = project.http.post("/v1/recalls", content=body)
    assert r.status_code == 200, r.text
    assert_error(project.http.post("/v1/recalls", content=body + b" "), 413, "payload_too_large")


def test_a_chunked_body_is_read_or_refused_plainly(project: Project) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"question": '
        yield b'"Where does Atlas work?"}'

    r = project.http.post("/v1/recalls", content=chunks())
    assert r.request.headers.get("transfer-encoding") == "chunked"
    if r.status_code != 200:
        assert_error(r, 411, "invalid_request")


# -- routes and methods ------------------------------------------------------------------------

UNKNOWN_ROUTES = [
    ("GET", "/v1"),
    ("GET", "/v2/health"),
    ("POST", "/v1/recall"),
    ("POST", "/v1/recalls/"),
    ("GET", "/v1/health/"),
    ("POST", "/v1/fact"),
    ("DELETE", "/v1/facts/"),
    ("DELETE", "/v1/facts/a/b"),
    ("GET", "/V1/HEALTH"),
]
# A known path with a method it does not take, and the methods it does take.
UNKNOWN_METHODS = [
    ("GET", "/v1/recalls", "POST"),
    ("PUT", "/v1/recalls", "POST"),
    ("DELETE", "/v1/recalls", "POST"),
    ("PUT", "/v1/facts", "GET, POST"),
    ("PATCH", "/v1/facts", "GET, POST"),
    ("DELETE", "/v1/facts", "GET, POST"),
    ("GET", "/v1/facts/some-id", "DELETE"),
    ("PUT", "/v1/facts/some-id", "DELETE"),
    ("POST", "/v1/facts/some-id", "DELETE"),
    ("DELETE", "/v1/messages", "GET, POST"),
    ("PUT", "/v1/messages/some-id", "GET"),
    ("DELETE", "/v1/messages/some-id", "GET"),
    ("POST", "/v1/entities", "GET"),
    ("DELETE", "/v1/entities", "GET"),
    ("POST", "/v1/entities/neighbourhood", "GET"),
    ("GET", "/v1/entities/merges", "POST"),
    ("GET", "/v1/erasures", "POST"),
    ("DELETE", "/v1/erasures/era_0", "GET"),
    ("POST", "/", "GET"),
    ("POST", "/ui", "GET, HEAD"),
    ("POST", "/ui/app.js", "GET, HEAD"),
    ("PUT", "/v1/credentials", "GET, POST"),
    ("POST", "/v1/health", "GET"),
    ("DELETE", "/v1/health", "GET"),
    ("OPTIONS", "/v1/recalls", "POST"),
]


@pytest.mark.parametrize("with_credential", [True, False], ids=["credential", "anonymous"])
@pytest.mark.parametrize(("method", "path"), UNKNOWN_ROUTES)
def test_an_unknown_route_is_404(
    project: Project, method: str, path: str, with_credential: bool
) -> None:
    if with_credential:
        r = project.http.request(method, path, json={"question": "x"})
    else:
        with project.server.client() as anonymous:
            r = anonymous.request(method, path, json={"question": "x"})
    assert_error(r, 404, "not_found")
    assert "allow" not in r.headers


@pytest.mark.parametrize("with_credential", [True, False], ids=["credential", "anonymous"])
@pytest.mark.parametrize(("method", "path", "allow"), UNKNOWN_METHODS)
def test_a_known_path_with_another_method_is_405_with_allow(
    project: Project, method: str, path: str, allow: str, with_credential: bool
) -> None:
    """Checked before the credential, as a route is: nothing runs, nothing is stored."""
    if with_credential:
        r = project.http.request(method, path, json={"question": "x"})
    else:
        with project.server.client() as anonymous:
            r = anonymous.request(method, path, json={"question": "x"})
    error = assert_error(r, 405, "method_not_allowed")
    assert r.headers["allow"] == allow
    assert allow in error["message"]


@pytest.mark.parametrize("method", ["TRACE", "PURGE", "FOO"])
def test_an_unusual_method_on_a_known_path_is_405(project: Project, method: str) -> None:
    host = project.server.url.removeprefix("http://")
    conn = http.client.HTTPConnection(host, timeout=30)
    try:
        conn.request(method, "/v1/facts", headers={"Authorization": f"Bearer {project.secret}"})
        response = conn.getresponse()
        raw = response.read()
    finally:
        conn.close()
    assert_error(response, 405, "method_not_allowed", raw=raw)
    assert response.getheader("allow") == "GET, POST"


def test_a_malformed_request_gets_the_error_shape(api: LocalServer) -> None:
    host, port = api.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"NOT A REQUEST\r\n\r\n")
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.")
    assert b"content-type: application/json" in head.lower()
    error = json.loads(body)["error"]
    assert set(error) == {"code", "message"}


def test_delete_of_an_unknown_id_is_404(project: Project) -> None:
    assert_error(project.http.delete("/v1/facts/no-such-fact"), 404, "not_found")
    assert_error(project.http.delete("/v1/facts/" + "x" * 300), 404, "not_found")


def test_get_facts_needs_a_subject(project: Project) -> None:
    error = assert_error(project.http.get("/v1/facts"), 400, "invalid_request")
    assert "subject" in error["message"]
    error = assert_error(project.http.get("/v1/facts?subject="), 400, "invalid_request")
    assert "subject" in error["message"]
    assert_error(
        project.http.get("/v1/facts", params={"subject": "s" * 501}), 400, "invalid_request"
    )


# The explorer's listings: each bad query parameter is a 400 naming it, never a 500.
BAD_LISTINGS = [
    ("/v1/entities", {"limit": "0"}, "limit"),
    ("/v1/entities", {"limit": "101"}, "limit"),
    ("/v1/entities", {"limit": "ten"}, "limit"),
    ("/v1/entities", {"limit": "1.5"}, "limit"),
    ("/v1/entities", {"search": ""}, "search"),
    ("/v1/entities", {"cursor": ""}, "cursor"),
    ("/v1/entities", {"cursor": "%%%"}, "cursor"),
    ("/v1/entities", {"cursor": "WyJtZXNzYWdlcyIsImEiLCJiIl0"}, "cursor"),  # a messages cursor
    ("/v1/entities", {"cursor": "eyJhIjoxfQ"}, "cursor"),  # JSON, not a cursor
    ("/v1/entities/neighbourhood", {}, "name"),
    ("/v1/entities/neighbourhood", {"name": "a", "hops": "3"}, "hops"),
    ("/v1/entities/neighbourhood", {"name": "a", "hops": "0"}, "hops"),
    ("/v1/messages", {"role": "robot"}, "role"),
    ("/v1/messages", {"role": ""}, "role"),
    ("/v1/messages", {"source": ""}, "source"),
    ("/v1/messages", {"limit": "-1"}, "limit"),
    ("/v1/messages", {"cursor": "WyJlbnRpdGllcyIsImEiXQ"}, "cursor"),  # an entities cursor
]


@pytest.mark.parametrize(("path", "params", "name"), BAD_LISTINGS)
def test_a_bad_listing_parameter_is_refused_naming_it(
    project: Project, path: str, params: dict[str, str], name: str
) -> None:
    error = assert_error(project.http.get(path, params=params), 400, "invalid_request")
    assert name in error["message"]


def test_an_unknown_message_id_is_404_and_an_impossible_one_not_echoed(project: Project) -> None:
    error = assert_error(project.http.get("/v1/messages/no-such-message"), 404, "not_found")
    assert "no-such-message" in error["message"]
    error = assert_error(project.http.get("/v1/messages/" + "x" * 300), 404, "not_found")
    assert "x" * 129 not in error["message"]
    error = assert_error(project.http.get("/v1/messages/a%20b"), 404, "not_found")
    assert "a b" not in error["message"]


def test_a_bad_content_length_is_refused(api: LocalServer) -> None:
    host, port = api.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(
            b"POST /v1/recalls HTTP/1.1\r\nHost: x\r\nContent-Length: lots\r\n"
            b"Connection: close\r\n\r\n"
        )
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.split(b" ")[1] == b"400", raw
    error = json.loads(body)["error"]
    assert set(error) == {"code", "message"}
    assert error["code"] == "invalid_request"


# -- duplicates inside one batch must not crash -----------------------------------------------


def test_the_same_message_id_twice_in_one_batch_is_not_a_500(project: Project) -> None:
    message = good_message(id="twice")
    r = project.http.post("/v1/messages", json={"messages": [message, message]})
    assert r.status_code == 202, r.text
    assert project.rows("messages") == 1


# -- random JSON ------------------------------------------------------------------------------

_strings = st.text(max_size=20) | st.sampled_from(
    [
        "",
        " ",
        "user",
        "tool",
        "assistant",
        "system",
        "facts",
        "reports",
        "passages",
        "entity",
        "value",
        "Atlas",
        "2026-01-01T00:00:00Z",
        "2026-01-01T00:00:00",
    ]
)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _strings
)
json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_strings, inner, max_size=4),
    max_leaves=10,
)


def _objects(fields: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional={name: json_values for name in fields})


recall_bodies = json_values | _objects(
    [
        "question",
        "max_characters",
        "max_rows",
        "source_roles",
        "hops",
        "surfaces",
        "themes",
        "project",
    ]
)
fact_items = _objects(
    [
        "id",
        "subject",
        "predicate",
        "object",
        "object_kind",
        "statement",
        "source_role",
        "quote",
        "context",
        "message_id",
        "valid_from",
        "valid_to",
        "extra",
    ]
)
message_items = _objects(["id", "role", "content", "source", "occurred_at", "extra"])
fact_bodies = json_values | st.fixed_dictionaries(
    {}, optional={"facts": st.lists(fact_items | json_values, max_size=3) | json_values}
)
message_bodies = json_values | st.fixed_dictionaries(
    {}, optional={"messages": st.lists(message_items | json_values, max_size=3) | json_values}
)

_random = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@_random
@given(body=recall_bodies)
def test_random_json_at_recalls_is_never_a_500(project: Project, body: Any) -> None:
    assert_api_answer(project.http.post("/v1/recalls", content=json.dumps(body).encode()))


@_random
@given(body=fact_bodies)
def test_random_json_at_facts_is_never_a_500(project: Project, body: Any) -> None:
    assert_api_answer(project.http.post("/v1/facts", content=json.dumps(body).encode()))


@_random
@given(body=message_bodies)
def test_random_json_at_messages_is_never_a_500(project: Project, body: Any) -> None:
    assert_api_answer(project.http.post("/v1/messages", content=json.dumps(body).encode()))
