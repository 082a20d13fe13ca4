"""The recall filters as controls: subjects, as_of, recorded_after, recorded_before."""

# ruff: noqa: RUF001 - full-width letters are the point

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from taisce.api.bodies import used_controls
from taisce.domain.controls import CONTROLS, FILTERS, MAX_SUBJECTS, Limits, RecallRequest, resolve
from taisce.domain.filters import FactFilter, MessageFilter

LIMITS = Limits()
NOW = "2026-12-02T15:00:00Z"


@pytest.fixture(params=["json", "python"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


def validate(body: dict[str, Any], mode: str) -> RecallRequest:
    if mode == "json":
        return RecallRequest.model_validate_json(json.dumps(body))
    return RecallRequest.model_validate(body)


def refused(body: dict[str, Any], mode: str) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        validate({"question": "q", **body}, mode)
    return [str(e["loc"][0]) for e in caught.value.errors()]


def test_filters_come_after_the_page_controls_in_the_error_order() -> None:
    assert CONTROLS[:6] == (
        "max_characters",
        "max_rows",
        "source_roles",
        "hops",
        "surfaces",
        "themes",
    )
    # explain (echoed only when sent) comes between them.
    assert CONTROLS[6] == "explain"
    assert CONTROLS[7:] == FILTERS == ("subjects", "as_of", "recorded_after", "recorded_before")


def test_an_unfiltered_echo_keeps_the_six_keys(mode: str) -> None:
    echo = used_controls(
        resolve(validate({"question": "q", **dict.fromkeys(FILTERS)}, mode), LIMITS)
    )
    assert list(echo) == list(CONTROLS[:6])


def test_filters_are_echoed_when_sent_times_in_utc(mode: str) -> None:
    body = {
        "question": "q",
        "subjects": ["Ada Byrne", "ＡＣＭＥ"],
        "as_of": "2024-03-01T10:00:00+02:00",
        "recorded_after": "2020-01-01T00:00:00.5Z",
        "recorded_before": "2030-01-01t00:00:00z",
    }
    echo = used_controls(resolve(validate(body, mode), LIMITS))
    assert echo["subjects"] == ["Ada Byrne", "ＡＣＭＥ"]
    assert echo["as_of"] == "2024-03-01T08:00:00Z"
    assert echo["recorded_after"] == "2020-01-01T00:00:00.500000Z"
    assert echo["recorded_before"] == "2030-01-01T00:00:00Z"
    assert list(echo)[6:] == list(FILTERS)


def test_the_filters_the_store_gets() -> None:
    body = {"question": "q", "subjects": ["Ada  BYRNE"], "recorded_before": "2030-01-01T00:00:00Z"}
    resolved = resolve(RecallRequest.model_validate(body), LIMITS)
    assert resolved.filtered
    assert resolved.fact_filter(NOW) == FactFilter(
        valid_at=NOW, recorded_before="2030-01-01T00:00:00Z", subjects=frozenset({"ada byrne"})
    )
    assert resolved.message_filter() == MessageFilter(recorded_before="2030-01-01T00:00:00Z")


def test_as_of_replaces_now() -> None:
    body = {"question": "q", "as_of": "2001-02-03T04:05:06Z"}
    resolved = resolve(RecallRequest.model_validate(body), LIMITS)
    assert resolved.fact_filter(NOW).valid_at == "2001-02-03T04:05:06Z"
    assert resolved.message_filter().occurred_by == "2001-02-03T04:05:06Z"


def test_without_filters_facts_must_hold_now_and_messages_are_not_cut() -> None:
    resolved = resolve(RecallRequest.model_validate({"question": "q"}), LIMITS)
    assert not resolved.filtered
    assert resolved.fact_filter(NOW) == FactFilter(valid_at=NOW)
    assert not resolved.message_filter().active


@pytest.mark.parametrize(
    "value",
    [
        [],
        "Ada",
        ["Ada", "ada"],
        ["Ada Byrne", "ADA   byrne"],
        ["Ａｄａ", "ada"],
        ["Ada", 1],
        ["Ada", None],
        [""],
        ["   "],
        ["x" * 501],
        [f"n{i}" for i in range(MAX_SUBJECTS + 1)],
        {"Ada": True},
        True,
    ],
)
def test_subjects_refusals(mode: str, value: Any) -> None:
    assert refused({"subjects": value}, mode)[0] == "subjects"


def test_subjects_up_to_the_limit() -> None:
    names = [f"n{i}" for i in range(MAX_SUBJECTS)]
    body = {"question": "q", "subjects": names}
    assert resolve(RecallRequest.model_validate(body), LIMITS).subjects == tuple(names)


BAD_TIMES = [
    "2026-01-01T10:00:00",
    "2026-01-01",
    "2026-13-01T00:00:00Z",
    "2026-02-30T00:00:00Z",
    "2026-01-01T10:00Z",
    "yesterday",
    "",
    "1767261600",
    1767261600,
    1767261600.5,
    True,
    ["2026-01-01T00:00:00Z"],
    "0001-01-01T00:00:00+01:00",
]


@pytest.mark.parametrize("control", ["as_of", "recorded_after", "recorded_before"])
@pytest.mark.parametrize("value", BAD_TIMES)
def test_time_refusals(mode: str, control: str, value: Any) -> None:
    assert refused({control: value}, mode)[0] == control


@pytest.mark.parametrize("before", ["2024-01-01T00:00:00Z", "2023-12-31T23:00:00Z"])
def test_an_empty_recording_window_is_refused_naming_recorded_before(
    mode: str, before: str
) -> None:
    body = {"recorded_after": "2024-01-01T00:00:00Z", "recorded_before": before}
    assert refused(body, mode) == ["recorded_before"]


def test_a_window_of_one_microsecond_is_accepted() -> None:
    body = {
        "question": "q",
        "recorded_after": "2024-01-01T00:00:00Z",
        "recorded_before": "2024-01-01T01:00:00.000001+01:00",
    }
    resolved = resolve(RecallRequest.model_validate(body), LIMITS)
    assert resolved.recorded_before == "2024-01-01T00:00:00.000001Z"
