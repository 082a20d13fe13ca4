"""Recall requests and their controls: defaults, clamping and every refusal."""

# ruff: noqa: RUF001 - full-width and other look-alike characters are the point

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from taisce.api.bodies import used_controls
from taisce.domain.controls import (
    CONTROLS,
    MAX_QUESTION_CHARACTERS,
    Limits,
    RecallControls,
    RecallRequest,
    resolve,
)
from taisce.domain.errors import InvalidRecallControls

LIMITS = Limits(bundle_characters=16_000, max_rows=200)
SMALL = Limits(bundle_characters=500, max_rows=7)
ALL_SURFACES = ["facts", "reports", "passages"]


def validate(body: dict[str, Any], mode: str) -> RecallRequest:
    """The body as the API reads it: parsed from JSON text, or as a Python dict."""
    if mode == "json":
        return RecallRequest.model_validate_json(json.dumps(body))
    return RecallRequest.model_validate(body)


def controls(limits: Limits = LIMITS, **body: Any) -> RecallControls:
    return resolve(
        RecallRequest.model_validate({"question": "Where does Atlas work?", **body}), limits
    )


def refused_fields(body: dict[str, Any], mode: str) -> list[tuple[Any, ...]]:
    with pytest.raises(ValidationError) as caught:
        validate(body, mode)
    return [tuple(e["loc"]) for e in caught.value.errors()]


@pytest.fixture(params=["json", "python"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


# -- defaults -----------------------------------------------------------------------


def test_every_default() -> None:
    assert used_controls(controls()) == {
        "max_characters": 16_000,
        "max_rows": 200,
        "source_roles": ["user"],
        "hops": 1,
        "surfaces": ["facts", "reports", "passages"],
        "themes": False,
    }


def test_defaults_follow_the_operators_limits() -> None:
    resolved = controls(SMALL)
    assert (resolved.max_characters, resolved.max_rows) == (500, 7)


def test_default_limits_are_the_documented_ones() -> None:
    assert Limits() == Limits(bundle_characters=16_000, max_rows=200)


def test_null_counts_as_not_sent(mode: str) -> None:
    body = {"question": "Where does Atlas work?", **dict.fromkeys(CONTROLS)}
    assert resolve(validate(body, mode), LIMITS) == controls()


@pytest.mark.parametrize("control", CONTROLS)
def test_each_null_control_gets_its_default(mode: str, control: str) -> None:
    body = {"question": "q", control: None}
    assert resolve(validate(body, mode), SMALL) == controls(SMALL)


def test_every_control_sent(mode: str) -> None:
    body = {
        "question": "Where does Atlas work?",
        "max_characters": 4000,
        "max_rows": 50,
        "source_roles": ["tool", "user"],
        "hops": 2,
        "surfaces": ["passages", "facts"],
        "themes": True,
    }
    assert used_controls(resolve(validate(body, mode), LIMITS)) == {
        "max_characters": 4000,
        "max_rows": 50,
        "source_roles": ["tool", "user"],  # in the order given
        "hops": 2,
        "surfaces": ["passages", "facts"],
        "themes": True,
    }


def test_every_role_and_surface_is_accepted() -> None:
    resolved = controls(source_roles=["user", "assistant", "system", "tool"], surfaces=ALL_SURFACES)
    assert resolved.source_roles == ("user", "assistant", "system", "tool")
    assert resolved.surfaces == ("facts", "reports", "passages")


def test_themes_false_is_false() -> None:
    assert controls(themes=False).themes is False


# -- limits --------------------------------------------------------------------------


@pytest.mark.parametrize("value", [1, 2, 499, 500])
def test_max_characters_up_to_the_budget(value: int) -> None:
    assert controls(SMALL, max_characters=value).max_characters == value


@pytest.mark.parametrize("value", [501, 16_000, 10**30])
def test_max_characters_over_the_budget_is_refused(value: int) -> None:
    with pytest.raises(InvalidRecallControls) as caught:
        controls(SMALL, max_characters=value)
    error = caught.value
    assert (error.control, error.code, error.status) == (
        "max_characters",
        "invalid_recall_controls",
        400,
    )
    assert "max_characters" in error.message and "500" in error.message


def test_the_default_budget_is_the_largest_allowed() -> None:
    assert controls(max_characters=16_000).max_characters == 16_000
    with pytest.raises(InvalidRecallControls):
        controls(max_characters=16_001)


@pytest.mark.parametrize("value", [1, 6, 7])
def test_max_rows_can_lower_the_row_limit(value: int) -> None:
    assert controls(SMALL, max_rows=value).max_rows == value


@pytest.mark.parametrize("value", [8, 200, 10**30])
def test_max_rows_over_the_row_limit_is_refused(value: int) -> None:
    with pytest.raises(InvalidRecallControls) as caught:
        controls(SMALL, max_rows=value)
    error = caught.value
    assert (error.control, error.code, error.status) == ("max_rows", "invalid_recall_controls", 400)
    assert "max_rows" in error.message and "7" in error.message


def test_budget_is_checked_before_the_row_limit() -> None:
    with pytest.raises(InvalidRecallControls) as caught:
        controls(SMALL, max_characters=501, max_rows=8)
    assert caught.value.control == "max_characters"


# -- hops ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sent", "used"),
    [(-(10**30), 1), (-5, 1), (0, 1), (1, 1), (2, 2), (3, 2), (99, 2), (10**30, 2)],
)
def test_hops_are_clamped_to_1_and_2(mode: str, sent: int, used: int) -> None:
    assert resolve(validate({"question": "q", "hops": sent}, mode), LIMITS).hops == used


# -- refusals ---------------------------------------------------------------------------

NOT_POSITIVE_INTEGERS = [0, -1, -16_000, True, False, "4000", 4000.5, 4000.0, 1.0, [], {}, [4000]]


@pytest.mark.parametrize("control", ["max_characters", "max_rows"])
@pytest.mark.parametrize("value", NOT_POSITIVE_INTEGERS)
def test_a_limit_must_be_a_positive_json_integer(mode: str, control: str, value: Any) -> None:
    assert refused_fields({"question": "q", control: value}, mode)[0][0] == control


@pytest.mark.parametrize("value", [True, False, "2", 1.5, 2.0, [2], {}])
def test_hops_must_be_a_json_integer(mode: str, value: Any) -> None:
    assert refused_fields({"question": "q", "hops": value}, mode)[0][0] == "hops"


@pytest.mark.parametrize(
    "value",
    [
        [],
        ["user", "user"],
        ["tool", "user", "tool"],
        ["admin"],
        ["user", "robot"],
        ["USER"],
        ["User"],
        [" user"],
        [""],
        [None],
        [1],
        "user",
        {"user": True},
        True,
    ],
)
def test_source_roles_refusals(mode: str, value: Any) -> None:
    assert refused_fields({"question": "q", "source_roles": value}, mode)[0][0] == "source_roles"


@pytest.mark.parametrize(
    "value",
    [
        [],
        ["facts", "facts"],
        ["facts", "reports", "passages", "facts"],
        ["memes"],
        ["facts", "themes"],
        ["Facts"],
        ["fact"],
        [None],
        "facts",
        {"facts": True},
    ],
)
def test_surfaces_refusals(mode: str, value: Any) -> None:
    assert refused_fields({"question": "q", "surfaces": value}, mode)[0][0] == "surfaces"


@pytest.mark.parametrize("value", ["true", "false", 1, 0, "yes", [], {}])
def test_themes_must_be_a_boolean(mode: str, value: Any) -> None:
    assert refused_fields({"question": "q", "themes": value}, mode)[0][0] == "themes"


@pytest.mark.parametrize("field", ["max_chars", "project", "subject_filter", "Hops", ""])
def test_unknown_fields_are_refused(mode: str, field: str) -> None:
    locs = refused_fields({"question": "q", field: 1}, mode)
    assert locs == [(field,)]


def test_each_refused_control_is_named(mode: str) -> None:
    body = {
        "question": "q",
        "max_characters": 0,
        "max_rows": "5",
        "source_roles": [],
        "hops": 1.5,
        "surfaces": ["x"],
        "themes": "no",
        "explain": "yes",
        "subjects": [],
        "as_of": "yesterday",
        "recorded_after": 5,
        "recorded_before": "2026-01-01",
    }
    assert {loc[0] for loc in refused_fields(body, mode)} == set(CONTROLS)


# -- question -----------------------------------------------------------------------------


@pytest.mark.parametrize("question", ["", " ", "\t\n", "\u3000", None, 42, ["q"]])
def test_a_question_must_be_a_non_blank_string(mode: str, question: Any) -> None:
    assert refused_fields({"question": question}, mode) == [("question",)]


def test_a_question_is_required(mode: str) -> None:
    assert refused_fields({"hops": 1}, mode) == [("question",)]


def test_a_question_is_at_most_the_limit_in_code_points(mode: str) -> None:
    longest = "🚀" * MAX_QUESTION_CHARACTERS  # 4 UTF-8 bytes each: code points count
    assert validate({"question": longest}, mode).question == longest
    assert refused_fields({"question": longest + "a"}, mode) == [("question",)]


def test_the_question_is_kept_as_sent(mode: str) -> None:
    question = "  Where does ＡＴＬＡＳ work?\n"
    assert validate({"question": question}, mode).question == question
