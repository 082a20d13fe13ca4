"""Every listing a page at a time, within what a function can answer: the facts with
one subject by limit and cursor (on every store of conftest.STORES), and pages of long
messages (with their passages) or long facts cut below Lambda's 6 MB answer, with a
problem in the API's shape should an answer still pass it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from taisce.adapters.sqlite.store import SqliteStore
from taisce.api import bodies
from taisce.api.resolver import MAX_ANSWER_BYTES, _within_lambda
from taisce.domain.controls import Limits
from taisce.domain.errors import InvalidRequest
from taisce.domain.ingest import split_passages
from taisce.service.memory import Memory
from tests.contract.factories import fact, message, unique

# The longest content a message may have, in the characters that weigh most once
# escaped (an astral character is \ud83d\ude00 in the body, twice escaped in Lambda's
# answer): three such messages with their passages weigh about 8 MB.
LONGEST = "\U0001f600" * 99_000


def lambda_answer_bytes(body: dict[str, Any]) -> int:
    """A body's size in Lambda's answer: serialized as Powertools does (ASCII only),
    then carried as a JSON string."""
    text = json.dumps(body, separators=(",", ":"))
    return len(json.dumps({"statusCode": 200, "body": text}))


def memory_on(store: Any) -> Memory:
    return Memory(store, Limits(bundle_characters=16_000, max_rows=200))


def test_facts_with_a_subject_come_a_page_at_a_time_in_storing_order(store: Any) -> None:
    project = unique("subject-pages")
    memory = memory_on(store)
    first = [fact("Atlas", "knows", f"Person {n}", id=f"a{n}") for n in range(4)]
    others = [fact("Maya", "knows", "Atlas", id="o1"), fact("Bob", "knows", "Cork", id="o2")]
    later = [fact("ATLAS", "visited", f"City {n}", id=f"a{n}") for n in range(4, 7)]
    store.put_facts(project, first + others)
    store.put_facts(project, later)
    wanted = [f"a{n}" for n in range(7)]
    for size in (1, 2, 3, 7, 100):
        seen: list[str] = []
        cursor = None
        while True:
            page = bodies.facts(memory.list_facts(project, "atlas", size, cursor))
            assert len(page["facts"]) <= size
            seen += [f["id"] for f in page["facts"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert seen == wanted, size
    # The default page is 50; a cursor of another listing, or edited, is refused.
    assert memory.list_facts(project, "Atlas").next_cursor is None
    messages_cursor = memory_on(store)
    store.put_messages(project, [message("one", id="m1"), message("two", id="m2")], [])
    other = messages_cursor.list_messages(project, None, None, 1, None).next_cursor
    assert other is not None
    with pytest.raises(InvalidRequest):
        memory.list_facts(project, "atlas", 2, other)
    good = memory.list_facts(project, "atlas", 2, None).next_cursor
    assert good is not None
    edited = good[:-2] + ("A" if good[-2] != "A" else "B") + good[-1]
    with pytest.raises(InvalidRequest):
        memory.list_facts(project, "atlas", 2, edited)


def test_pages_of_the_longest_messages_with_passages_stay_below_lambdas_limit(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "taisce.sqlite3")
    project = unique("long-pages")
    for n in range(3):
        m = message(LONGEST, id=f"long{n}", recorded_at=f"2026-01-0{n + 1}T00:00:00Z")
        store.put_messages(project, [m], split_passages(m))
    memory = memory_on(store)
    seen: list[str] = []
    cursor = None
    while True:
        page = bodies.message_list(memory.list_messages(project, None, None, 3, cursor, True))
        assert lambda_answer_bytes(page) < MAX_ANSWER_BYTES
        assert page["messages"], "a page holds at least one message"
        seen += [m["id"] for m in page["messages"]]
        assert all(len(m["passages"]) == 660 for m in page["messages"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ["long2", "long1", "long0"]


def test_pages_of_long_facts_and_a_neighbourhood_stay_below_lambdas_limit(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "taisce.sqlite3")
    project = unique("long-facts")
    longest = "\U0001f600" * 4_000
    texts = {"statement": longest, "quote": longest, "context": longest}
    facts = [fact("Atlas", longest[:500], f"Value {n}", id=f"f{n}", **texts) for n in range(60)]
    store.put_facts(project, facts)
    memory = memory_on(store)
    seen: list[str] = []
    cursor = None
    while True:
        page = bodies.facts(memory.list_facts(project, "Atlas", 100, cursor))
        assert lambda_answer_bytes(page) < MAX_ANSWER_BYTES
        seen += [f["id"] for f in page["facts"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [f.id for f in facts]
    graph = bodies.neighbourhood(memory.neighbourhood(project, "Atlas", 1))
    assert 0 < len(graph["edges"]) < 60
    assert lambda_answer_bytes(graph) < MAX_ANSWER_BYTES


def test_an_answer_over_lambdas_limit_is_a_problem_not_a_failure() -> None:
    body = json.dumps({"facts": ["\U0001f600" * 1_000_000]})
    answer = {"statusCode": 200, "headers": {}, "body": body, "isBase64Encoded": False}
    refused = _within_lambda(answer)
    assert refused["statusCode"] == 413
    error = json.loads(refused["body"])["error"]
    assert error["code"] == "answer_too_large" and "limit" in error["message"]
    small = {**answer, "body": json.dumps({"facts": []})}
    assert _within_lambda(small) is small


def test_aliases_come_a_page_at_a_time(store: Any) -> None:
    project = unique("alias-pages")
    memory = memory_on(store)
    store.put_facts(project, [fact("Robert Smith", "works at", f"Acme {n}") for n in (1, 2)])
    names = ["Bob", "Rob", "Bobby", "R. Smith", "Robbie"]
    for name in names:
        store.merge_entities(project, name.lower(), name, "robert smith", "Robert Smith")
    wanted = sorted((n.lower(), n) for n in names)
    for size in (1, 2, 5, 100):
        seen: list[tuple[str, str]] = []
        cursor = None
        while True:
            page = memory.alias_page(project, size, cursor)
            assert len(page.aliases) <= size
            seen += [(a.alias_key, a.alias) for a in page.aliases]
            assert all(a.into == "Robert Smith" for a in page.aliases)
            cursor = page.next_cursor
            if cursor is None:
                break
        assert seen == wanted, size
    with pytest.raises(InvalidRequest):
        memory.alias_page(project, 2, memory.list_facts(project, "Bob", 1).next_cursor)
