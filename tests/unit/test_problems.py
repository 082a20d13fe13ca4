"""Refused requests in the API's own words (api/problems.py): every error type the
request models raise has its own sentence, and unknown fields are named with what
they were probably meant to be."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from taisce.api.problems import (
    MAX_PROBLEMS,
    SENTENCES,
    joined,
    model_at,
    sentence,
    unknown_field,
)
from taisce.domain.aliases import MergeRequest
from taisce.domain.controls import RecallRequest
from taisce.domain.erasure import ErasureRequest
from taisce.domain.ingest import FactIn, FactsRequest, MessageIn, MessagesRequest

# What the validation library says in its own words; none of it may reach a client.
LIBRARY_WORDS = (
    "validation",
    "Input should",
    "pydantic",
    "Value error",
    "Field required",
    "Extra inputs",
    "type=",
    "errors.pydantic.dev",
    "Assertion failed",
)
# Error types said by their own branch of `sentence`, not the table.
OWN_BRANCHES = {"json_invalid", "extra_forbidden", "value_error"}


def assert_plain(text: str) -> None:
    for words in LIBRARY_WORDS:
        assert words.lower() not in text.lower(), text
    assert text.strip()


def problems_of(model: type[BaseModel], body: object) -> list[dict[str, Any]]:
    """The errors with the route's location prefix, as the resolver sees them."""
    try:
        model.model_validate(body, from_attributes=True)
    except ValidationError as exc:
        return [{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]
    return []


_text = st.text(max_size=12) | st.sampled_from(["", " ", "user", "x" * 600, "a b", "2026-01-01"])
_scalar = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**66), max_value=2**66)
    | st.floats(allow_nan=False)
    | _text
)
_values = st.recursive(
    _scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3)
)


def _bodies(model: type[BaseModel], nested: dict[str, st.SearchStrategy[Any]]) -> Any:
    fields = {name: nested.get(name, _values) for name in model.model_fields}
    return st.fixed_dictionaries(
        {}, optional={**fields, "query": _values, "txt": _values, "user_id": _values}
    )


_facts = _bodies(FactIn, {})
_messages = _bodies(MessageIn, {})
BODIES = {
    RecallRequest: _bodies(RecallRequest, {}),
    FactsRequest: _bodies(FactsRequest, {"facts": st.lists(_facts | _values, max_size=3)}),
    MessagesRequest: _bodies(MessagesRequest, {"messages": st.lists(_messages, max_size=3)}),
    MergeRequest: _bodies(MergeRequest, {}),
    ErasureRequest: _bodies(ErasureRequest, {}),
}


@pytest.mark.parametrize("model", list(BODIES), ids=lambda m: m.__name__)
@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_every_error_of_a_request_model_has_its_own_sentence(
    model: type[BaseModel], data: st.DataObject
) -> None:
    body = data.draw(BODIES[model])
    for error in problems_of(model, body):
        assert error["type"] in SENTENCES or error["type"] in OWN_BRANCHES, error
        said = sentence(error, model)
        assert_plain(said)
        assert "is not valid" not in said, error


@pytest.mark.parametrize(
    ("model", "body", "says"),
    [
        (MessagesRequest, {"messages": []}, "messages must hold at least 1 item"),
        (
            MessagesRequest,
            {"messages": [{"role": "user", "content": "x"}] * 101},
            "messages must hold at most 100 items",
        ),
        (
            MessagesRequest,
            {"messages": [{"role": "human", "content": "x"}]},
            "messages[0].role must be one of 'user', 'assistant', 'system', 'tool'",
        ),
        (MessagesRequest, {"messages": [{"role": "user"}]}, "messages[0].content is required"),
        (
            MessagesRequest,
            {"messages": [{"role": "user", "content": ""}]},
            "messages[0].content must not be empty",
        ),
        (
            MessagesRequest,
            {"messages": [{"role": "user", "content": "x" * 100_001}]},
            "messages[0].content must hold at most 100,000 characters",
        ),
        (
            MessagesRequest,
            {"messages": [{"role": "user", "content": "x", "id": "a b"}]},
            "messages[0].id must be 1-128 characters: letters, digits and . _ : @ -",
        ),
        (
            MessagesRequest,
            {"messages": [{"role": "user", "content": "x", "occurred_at": "yesterday"}]},
            "messages[0].occurred_at must be an RFC 3339 date-time",
        ),
        (MessagesRequest, {"messages": "hello"}, "messages must be a list"),
        (MessagesRequest, {"messages": ["hello"]}, "messages[0] must be a JSON object"),
        (FactsRequest, {"facts": [{"subject": 5}]}, "facts[0].subject must be a string"),
        (RecallRequest, {"question": "x", "hops": 1.5}, "hops must be a JSON integer"),
        (RecallRequest, {"question": "x", "themes": "yes"}, "themes must be true or false"),
        (RecallRequest, {"question": "x", "max_rows": 0}, "max_rows must be greater than 0"),
        (
            RecallRequest,
            {"question": "x", "surfaces": ["facts", "facts"]},
            "surfaces must not repeat a value",
        ),
        (ErasureRequest, {"subject": "."}, "subject must be a name"),
    ],
)
def test_each_problem_is_a_plain_sentence_naming_its_path(
    model: type[BaseModel], body: object, says: str
) -> None:
    said = [sentence(e, model) for e in problems_of(model, body)]
    assert any(s.startswith(says) for s in said), said
    for s in said:
        assert_plain(s)


@pytest.mark.parametrize(
    ("model", "name", "hint"),
    [
        (RecallRequest, "query", "did you mean 'question'?"),
        (RecallRequest, "max_chars", "did you mean 'max_characters'?"),
        (RecallRequest, "subject", "did you mean 'subjects'?"),
        (RecallRequest, "top_k", "max_characters"),
        (RecallRequest, "limit", "max_rows"),
        (RecallRequest, "user_id", "did you mean 'user'?"),
        (MessageIn, "text", "did you mean 'content'?"),
        (MessageIn, "role_type", "did you mean 'role'?"),
        (MessageIn, "user_id", "did you mean 'user'?"),
        (FactIn, "relationship", "did you mean 'predicate'?"),
        (FactIn, "source", "did you mean 'subject'?"),
        (FactIn, "objcet", "did you mean 'object'?"),
        (MergeRequest, "alais", "did you mean 'alias'?"),
        (ErasureRequest, "name", "did you mean 'subject'?"),
        (FactsRequest, "user_id", "did you mean 'user'?"),
        (MessagesRequest, "session_id", "a project per agent or session"),
    ],
)
def test_an_unknown_field_says_what_it_was_probably_meant_to_be(
    model: type[BaseModel], name: str, hint: str
) -> None:
    said = unknown_field(name, model)
    assert said.startswith(f"unknown field '{name}' (") and hint in said, said


def test_an_unknown_field_like_nothing_known_is_named_without_a_guess() -> None:
    assert unknown_field("zzzz", RecallRequest) == "unknown field 'zzzz'"
    assert unknown_field("x" * 1000, RecallRequest) == f"unknown field '{'x' * 64}...'"


def test_the_model_of_a_nested_field_is_found_through_lists() -> None:
    assert model_at(FactsRequest, ("body", "facts", 3, "text")) is FactIn
    assert model_at(MessagesRequest, ("body", "messages", 0, "text")) is MessageIn
    assert model_at(RecallRequest, ("body", "query")) is RecallRequest
    assert model_at(RecallRequest, ("body", "question", "deeper")) is None
    assert model_at(None, ("body", "query")) is None


def test_every_problem_is_listed_up_to_a_count() -> None:
    errors = problems_of(
        FactsRequest, {"facts": [{"source_role": "user", "subject": "A"}], "user_id": 1}
    )
    said = joined([sentence(e, FactsRequest) for e in errors])
    assert said == (
        "facts[0].predicate is required; facts[0].object is required; "
        "unknown field 'user_id' (did you mean 'user'? It is one per request, "
        "never per item)"
    )
    many = [f"problem {i}" for i in range(MAX_PROBLEMS + 5)]
    assert joined(many).endswith(f"problem {MAX_PROBLEMS - 1}; and 5 more")
