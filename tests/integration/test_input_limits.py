"""Every input limit, walked over real HTTP: at the limit accepted, one over refused
with the API's error, and nothing stored by the refused request.

LIMITS is the table of docs/reliability.md's "Input limits" section; the last test
checks that the page lists each row with the same number.
"""

from __future__ import annotations

import json
import re
import socket
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from taisce.domain.listing import encode_cursor
from tests.draining import drain
from tests.server import ROOT, LocalServer, start_server

MIB = 1024 * 1024
# A cursor of exactly 2,048 characters (its tag and ["entities", key] as unpadded
# base64url), made for this project: a cursor is good only in the project it came from.
CURSOR_PROJECT = f"limits-cursor-{uuid.uuid4().hex[:10]}"
LONG_CURSOR = encode_cursor("entities", CURSOR_PROJECT, ["k" * 1509])
TABLES = ("facts", "entities", "messages", "passages", "aliases", "erasures")


@dataclass(frozen=True)
class Limit:
    name: str  # as the table of docs/reliability.md names it
    limit: int
    method: str
    path: Callable[[int], str]
    body: Callable[[int], Any] | None
    accepted: int  # the status at the limit
    code: str  # the error code one over it
    control: str | None = None  # the control an invalid_recall_controls error names
    status: int = 400
    setup: dict[str, Any] | None = None  # facts stored first, for the request at the limit
    project: str | None = None  # the project to run in (default: a new one)


def fact(**over: Any) -> dict[str, Any]:
    return {
        "subject": "Ana",
        "predicate": "works at",
        "object": "Acme",
        "source_role": "user",
    } | over


def message(**over: Any) -> dict[str, Any]:
    return {"role": "user", "content": "Ana works at Acme."} | over


def facts(*items: dict[str, Any]) -> dict[str, Any]:
    return {"facts": list(items)}


def messages(*items: dict[str, Any]) -> dict[str, Any]:
    return {"messages": list(items)}


def body_of_bytes(size: int) -> bytes:
    """A batch of messages whose JSON is exactly `size` bytes."""
    count = size // 96_000 + 1  # messages of 95,000 characters, the last one padded
    batch = messages(*(message(content="a" * 95_000) for _ in range(count)))
    padding = size - len(json.dumps(batch).encode())
    batch["messages"][-1]["content"] += "a" * padding
    raw = json.dumps(batch).encode()
    assert len(raw) == size
    return raw


def recall(**controls: Any) -> Callable[[int], dict[str, Any]]:
    return lambda n: (
        {"question": "Where does Ana work?"}
        | {k: v(n) if callable(v) else v for k, v in controls.items()}
    )


def at(path: str) -> Callable[[int], str]:
    return lambda _: path


LIMITS = [
    Limit(
        "request body (bytes)",
        MIB,
        "POST",
        at("/v1/messages"),
        body_of_bytes,
        202,
        "payload_too_large",
        status=413,
    ),
    Limit(
        "messages per batch",
        100,
        "POST",
        at("/v1/messages"),
        lambda n: messages(*(message() for _ in range(n))),
        202,
        "invalid_request",
    ),
    Limit(
        "message content",
        100_000,
        "POST",
        at("/v1/messages"),
        lambda n: messages(message(content="é" * n)),
        202,
        "invalid_request",
    ),
    Limit(
        "message source",
        500,
        "POST",
        at("/v1/messages"),
        lambda n: messages(message(source="s" * n)),
        202,
        "invalid_request",
    ),
    Limit(
        "message id",
        128,
        "POST",
        at("/v1/messages"),
        lambda n: messages(message(id="m" * n)),
        202,
        "invalid_request",
    ),
    Limit(
        "facts per batch",
        100,
        "POST",
        at("/v1/facts"),
        lambda n: facts(*(fact(object=f"Acme {i}") for i in range(n))),
        201,
        "invalid_request",
    ),
    Limit(
        "fact id, message_id",
        128,
        "POST",
        at("/v1/facts"),
        lambda n: facts(fact(id="f" * n, message_id="m" * n)),
        201,
        "invalid_request",
    ),
    Limit(
        "fact subject, predicate",
        500,
        "POST",
        at("/v1/facts"),
        lambda n: facts(fact(subject="S" * n, predicate="p" * n)),
        201,
        "invalid_request",
    ),
    Limit(
        "fact object, statement, quote, context",
        4_000,
        "POST",
        at("/v1/facts"),
        lambda n: facts(
            fact(
                object="o" * n,
                statement="t" * n,
                quote="q" * n,
                context="c" * n,
                object_kind="value",
            )
        ),
        201,
        "invalid_request",
    ),
    Limit(
        "recall question",
        10_000,
        "POST",
        at("/v1/recalls"),
        lambda n: {"question": "q" * n},
        200,
        "invalid_request",
    ),
    Limit(
        "recall subjects (names)",
        50,
        "POST",
        at("/v1/recalls"),
        recall(subjects=lambda n: [f"name {i}" for i in range(n)]),
        200,
        "invalid_recall_controls",
        control="subjects",
    ),
    Limit(
        "recall subjects (name length)",
        500,
        "POST",
        at("/v1/recalls"),
        recall(subjects=lambda n: ["s" * n]),
        200,
        "invalid_recall_controls",
        control="subjects",
    ),
    Limit(
        "recall max_characters",
        16_000,
        "POST",
        at("/v1/recalls"),
        recall(max_characters=lambda n: n),
        200,
        "invalid_recall_controls",
        control="max_characters",
    ),
    Limit(
        "recall max_rows",
        200,
        "POST",
        at("/v1/recalls"),
        recall(max_rows=lambda n: n),
        200,
        "invalid_recall_controls",
        control="max_rows",
    ),
    Limit(
        "GET /v1/facts subject",
        500,
        "GET",
        lambda n: "/v1/facts?subject=" + "s" * n,
        None,
        200,
        "invalid_request",
    ),
    Limit(
        "DELETE /v1/facts/{id}",
        128,
        "DELETE",
        lambda n: "/v1/facts/" + "d" * n,
        None,
        204,
        "not_found",
        status=404,
        setup=facts(fact(id="d" * 128)),
    ),
    Limit(
        "GET /v1/entities limit",
        100,
        "GET",
        lambda n: f"/v1/entities?limit={n}",
        None,
        200,
        "invalid_request",
    ),
    Limit(
        "GET /v1/entities search",
        500,
        "GET",
        lambda n: "/v1/entities?search=" + "s" * n,
        None,
        200,
        "invalid_request",
    ),
    Limit(
        "GET /v1/entities cursor",
        2048,
        "GET",
        # At the limit, a cursor the route could have handed out (a long key); over it,
        # any text of that length.
        lambda n: "/v1/entities?cursor=" + (LONG_CURSOR if n == len(LONG_CURSOR) else "c" * n),
        None,
        200,
        "invalid_request",
        project=CURSOR_PROJECT,
    ),
    Limit(
        "GET /v1/entities/neighbourhood name",
        500,
        "GET",
        lambda n: "/v1/entities/neighbourhood?name=" + "n" * n,
        None,
        200,
        "invalid_request",
    ),
    Limit(
        "GET /v1/messages limit",
        100,
        "GET",
        lambda n: f"/v1/messages?limit={n}",
        None,
        200,
        "invalid_request",
    ),
    Limit(
        "GET /v1/messages source",
        500,
        "GET",
        lambda n: "/v1/messages?source=" + "s" * n,
        None,
        200,
        "invalid_request",
    ),
    Limit(
        "GET /v1/messages/{id}",
        128,
        "GET",
        lambda n: "/v1/messages/" + "m" * n,
        None,
        200,
        "not_found",
        status=404,
        setup={"messages": [{"id": "m" * 128, "role": "user", "content": "kept"}]},
    ),
    Limit(
        "merge alias, into",
        500,
        "POST",
        at("/v1/entities/merges"),
        lambda n: {"alias": "a" * n, "into": "b" * n},
        200,
        "invalid_request",
        setup=facts(fact(subject="b" * 500)),
    ),
    Limit(
        "erasure subject",
        500,
        "POST",
        at("/v1/erasures"),
        lambda n: {"subject": "e" * n},
        200,
        "invalid_request",
    ),
]


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    running = start_server(Path(tmp_path_factory.mktemp("limits-data")))
    drain(running)
    yield running
    running.stop()


def held(server: LocalServer, project: str) -> dict[str, int]:
    db = sqlite3.connect(server.data_dir / "taisce.sqlite3", timeout=30)
    try:
        return {
            table: db.execute(
                f"SELECT count(*) FROM {table} WHERE project = ?", (project,)
            ).fetchone()[0]
            for table in TABLES
        }
    finally:
        db.close()


def send(http: httpx.Client, case: Limit, n: int) -> httpx.Response:
    body = case.body(n) if case.body else None
    if isinstance(body, bytes):
        headers = {"Content-Type": "application/json"}
        return http.request(case.method, case.path(n), content=body, headers=headers)
    return http.request(case.method, case.path(n), json=body)


@pytest.mark.parametrize("case", LIMITS, ids=[c.name for c in LIMITS])
def test_at_the_limit_accepted_one_over_refused_and_nothing_stored(
    api: LocalServer, case: Limit
) -> None:
    project = case.project or f"limits-{uuid.uuid4().hex[:10]}"
    with api.client(api.new_credential(project)) as http:
        if case.setup:
            route = "/v1/messages" if "messages" in case.setup else "/v1/facts"
            stored = http.post(route, json=case.setup)
            assert stored.status_code in (201, 202), stored.text
        before = held(api, project)

        over = send(http, case, case.limit + 1)
        assert over.status_code == case.status, over.text[:500]
        error = over.json()["error"]
        assert error["code"] == case.code, error
        assert error.get("control") == case.control, error
        assert len(over.content) < 2_000  # the refused value is not echoed back whole
        assert held(api, project) == before

        ok = send(http, case, case.limit)
        assert ok.status_code == case.accepted, ok.text[:500]


def raw_status(server: LocalServer, request: bytes) -> tuple[bytes, dict[str, Any]]:
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return head.split(b" ")[1], json.loads(body)["error"]


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET /v1/facts?subject=" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /v1/facts?subject=a HTTP/1.1\r\nHost: x\r\n"
        + b"".join(b"X-H%d: v\r\n" % i for i in range(120))
        + b"\r\n",
        b"GET /v1/facts?subject=a HTTP/1.1\r\nHost: x\r\nX-Big: " + b"v" * 70_000 + b"\r\n\r\n",
    ],
    ids=["request line over 64 KiB", "over 100 headers", "header line over 64 KiB"],
)
def test_the_local_server_refuses_oversized_request_heads(
    api: LocalServer, request_bytes: bytes
) -> None:
    status, error = raw_status(api, request_bytes)
    assert status == b"400"
    assert error["code"] == "invalid_request"


def test_the_docs_table_lists_every_limit() -> None:
    page = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    section = page.partition("## Input limits")[2].partition("\n## ")[0]
    rows = {
        cells[0].strip("` "): cells[1]
        for line in section.splitlines()
        if line.startswith("|") and (cells := [c.strip() for c in line.strip("|").split("|")])
    }
    for case in LIMITS:
        assert case.name in rows, f"{case.name} is not in docs/reliability.md's table"
        first = re.match(r"[\d,]+", rows[case.name])
        figure = first.group().replace(",", "") if first else ""
        expected = "1" if case.name == "request body (bytes)" else str(case.limit)
        assert figure == expected, (case.name, rows[case.name])
