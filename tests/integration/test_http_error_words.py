"""Refused requests over real HTTP, in the API's own words: every problem named with
its field's path, unknown fields named with what they were probably meant to be
(the habits of other memory APIs among them), and no wording of the validation
library in any message, at any route. Nothing refused is stored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.test_http_errors import Project, assert_error, json_values
from tests.server import LocalServer
from tests.unit.test_problems import assert_plain

_random = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture
def project(server: LocalServer) -> Iterator[Project]:
    """A project of its own on the session's server."""
    p = Project(server)
    yield p
    p.http.close()


# Every route that reads a body or query parameters, with bodies and queries that
# break each kind of rule.
MALFORMED: list[tuple[str, str, Any, str]] = [
    # (method, path, body or query, a sentence the message must hold)
    (
        "POST",
        "/v1/recalls",
        {"query": "Where?"},
        "unknown field 'query' (did you mean 'question'?)",
    ),
    ("POST", "/v1/recalls", {"query": "Where?"}, "question is required"),
    ("POST", "/v1/recalls", {"question": ""}, "question must be a non-blank string"),
    ("POST", "/v1/recalls", {"question": "x", "max_characters": -1}, "max_characters must be"),
    ("POST", "/v1/recalls", {"question": "x", "hops": "2"}, "hops must be a JSON integer"),
    ("POST", "/v1/recalls", {"question": "x", "themes": "yes"}, "themes must be true or false"),
    ("POST", "/v1/recalls", {"question": "x", "source_roles": []}, "source_roles must be"),
    ("POST", "/v1/recalls", {"question": "x", "surfaces": ["maps"]}, "surfaces must be"),
    ("POST", "/v1/recalls", {"question": "x", "as_of": "now"}, "as_of must be an RFC 3339"),
    ("POST", "/v1/messages", {"messages": []}, "messages must hold at least 1 item"),
    ("POST", "/v1/messages", {"messages": "hi"}, "messages must be a list"),
    ("POST", "/v1/messages", {"messages": [1]}, "messages[0] must be a JSON object"),
    (
        "POST",
        "/v1/messages",
        {"messages": [{"role": "user", "content": "x"}] * 101},
        "messages must hold at most 100 items",
    ),
    (
        "POST",
        "/v1/messages",
        {"messages": [{"role": "human", "content": "x"}]},
        "messages[0].role must be one of 'user', 'assistant', 'system', 'tool'",
    ),
    (
        "POST",
        "/v1/messages",
        {"messages": [{"role": "user", "content": "x" * 100_001}]},
        "messages[0].content must hold at most 100,000 characters",
    ),
    (
        "POST",
        "/v1/messages",
        {"messages": [{"role": "user", "content": "x", "id": "a b"}]},
        "messages[0].id must be 1-128 characters",
    ),
    ("POST", "/v1/messages", {}, "messages is required"),
    ("POST", "/v1/facts", {"facts": [{"subject": True}]}, "facts[0].subject must be a string"),
    ("POST", "/v1/facts", {"facts": [{}]}, "facts[0].source_role is required"),
    (
        "POST",
        "/v1/facts",
        {
            "facts": [
                {
                    "subject": "A",
                    "predicate": "p",
                    "object": "B",
                    "source_role": "user",
                    "valid_from": "2026-02-01T00:00:00Z",
                    "valid_to": "2026-01-01T00:00:00Z",
                }
            ]
        },
        "valid_to must not be before valid_from",
    ),
    ("POST", "/v1/erasures", {"subject": ""}, "subject must not be empty"),
    ("POST", "/v1/erasures", {"subject": "x" * 501}, "subject must hold at most 500 characters"),
    ("POST", "/v1/erasures", {"name": "Bob"}, "unknown field 'name' (did you mean 'subject'?)"),
    ("POST", "/v1/entities/merges", {"alias": 5, "into": "B"}, "alias must be a string"),
    ("POST", "/v1/entities/merges", {"alias": "A"}, "into is required"),
    ("GET", "/v1/facts", {}, "query parameter subject is required"),
    ("GET", "/v1/entities", {"limit": "ten"}, "query parameter limit must be an integer"),
    ("GET", "/v1/entities", {"limit": "0"}, "query parameter limit must be at least 1"),
    ("GET", "/v1/entities", {"limit": "101"}, "query parameter limit must be at most 100"),
    ("GET", "/v1/entities", {"search": ""}, "query parameter search must not be empty"),
    ("GET", "/v1/entities/neighbourhood", {"name": "A", "hops": "3"}, "hops must be at most 2"),
    ("GET", "/v1/messages", {"role": "robot"}, "query parameter role must be one of"),
    ("GET", "/v1/messages", {"passages": "maybe"}, "passages must be true or false"),
]


@pytest.mark.parametrize(("method", "path", "given", "says"), MALFORMED)
def test_every_route_says_what_is_wrong_in_its_own_words(
    project: Project, method: str, path: str, given: Any, says: str
) -> None:
    if method == "GET":
        r = project.http.get(path, params=given)
    else:
        r = project.http.request(method, path, json=given)
    code = r.json()["error"]["code"]
    assert code in ("invalid_request", "invalid_recall_controls"), r.text
    error = assert_error(r, 400, code)
    assert says in error["message"], error
    assert_plain(error["message"])
    project.assert_nothing_stored()


def test_a_mem0_habit_at_recalls_is_named_with_the_field_it_meant(project: Project) -> None:
    r = project.http.post("/v1/recalls", json={"query": "Where does Atlas work?"})
    error = assert_error(r, 400, "invalid_request")
    assert error["message"] == (
        "question is required; unknown field 'query' (did you mean 'question'?)"
    )


def test_every_problem_is_listed_and_the_first_decides_the_code(project: Project) -> None:
    """The order of docs/API.md: the question, the controls, then unknown fields."""
    body = {"question": "x", "top_k": 5, "user_id": "u", "hops": "2", "max_char": 10}
    error = assert_error(
        project.http.post("/v1/recalls", json=body), 400, "invalid_recall_controls", control="hops"
    )
    parts = error["message"].split("; ")
    assert parts[0].startswith("hops must be a JSON integer")
    assert set(parts[1:]) == {
        "unknown field 'top_k' (a recall is bounded by max_characters, and by max_rows items)",
        "unknown field 'user_id' (did you mean 'user'? It is one per request, never per item)",
        "unknown field 'max_char' (did you mean 'max_characters'?)",
    }
    only_unknown = project.http.post("/v1/recalls", json={"question": "x", "top_k": 5})
    assert_error(only_unknown, 400, "invalid_recall_controls", control="top_k")


def test_unknown_fields_in_a_batch_name_the_item(project: Project) -> None:
    body = {
        "messages": [
            {"role": "user", "content": "fine"},
            {"role": "user", "text": "Mem0's word", "user_id": "u"},
        ]
    }
    error = assert_error(project.http.post("/v1/messages", json=body), 400, "invalid_request")
    assert error["message"] == (
        "messages[1].content is required; "
        "unknown field 'text' in messages[1] (did you mean 'content'?); "
        "unknown field 'user_id' in messages[1] (did you mean 'user'? It is one per "
        "request, never per item)"
    )
    triple = {
        "facts": [
            {"source": "A", "relationship": "likes", "destination": "B", "source_role": "user"}
        ]
    }
    error = assert_error(project.http.post("/v1/facts", json=triple), 400, "invalid_request")
    for meant in ("'subject'", "'predicate'", "'object'"):
        assert f"(did you mean {meant}?)" in error["message"]
    project.assert_nothing_stored("A")


_bodies = json_values | st.dictionaries(
    st.sampled_from(["question", "messages", "facts", "subject", "alias", "into", "query"]),
    json_values,
    max_size=4,
)


@_random
@given(
    route=st.sampled_from(
        ["/v1/recalls", "/v1/messages", "/v1/facts", "/v1/erasures", "/v1/entities/merges"]
    ),
    body=_bodies,
)
def test_random_bodies_at_every_body_route_get_plain_words(
    project: Project, route: str, body: Any
) -> None:
    r = project.http.post(route, content=json.dumps(body).encode())
    assert r.status_code < 500, r.text
    if r.status_code >= 400:
        assert_plain(r.json()["error"]["message"])


@_random
@given(
    route=st.sampled_from(
        ["/v1/facts", "/v1/entities", "/v1/entities/neighbourhood", "/v1/messages"]
    ),
    query=st.dictionaries(
        st.sampled_from(
            ["subject", "limit", "cursor", "search", "name", "hops", "role", "source", "passages"]
        ),
        st.text(max_size=6) | st.integers(-3, 300).map(str),
        max_size=3,
    ),
)
def test_random_queries_at_every_listing_get_plain_words(
    project: Project, route: str, query: dict[str, str]
) -> None:
    r = project.http.get(route, params=query)
    assert r.status_code < 500, r.text
    if r.status_code >= 400:
        assert_plain(r.json()["error"]["message"])
