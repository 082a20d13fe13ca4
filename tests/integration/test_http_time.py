"""Facts in time over real HTTP: a later request closes what it contradicts, GET
/v1/facts lists closed facts with their validity, recall sees facts valid now (or
as_of), retries change nothing, and a refused filter changes nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.server import LocalServer


@pytest.fixture
def http(server: LocalServer) -> Iterator[httpx.Client]:
    with server.client(server.new_credential(f"time-{uuid.uuid4().hex[:12]}")) as client:
        yield client


def lives(obj: str, id: str, role: str = "user", **extra: Any) -> dict[str, Any]:
    return {
        "id": id,
        "subject": "Ada",
        "predicate": "lives in",
        "object": obj,
        "source_role": role,
        **extra,
    }


def store(http: httpx.Client, *facts: dict[str, Any]) -> None:
    r = http.post("/v1/facts", json={"facts": list(facts)})
    assert r.status_code == 201, r.text


def validity(http: httpx.Client) -> dict[str, tuple[str | None, str | None]]:
    r = http.get("/v1/facts", params={"subject": "ada"})
    assert r.status_code == 200, r.text
    return {f["id"]: (f["valid_from"], f["valid_to"]) for f in r.json()["facts"]}


def recalled(http: httpx.Client, **controls: Any) -> list[str]:
    r = http.post("/v1/recalls", json={"question": "Where does Ada live?", **controls})
    assert r.status_code == 200, r.text
    return [f["id"] for f in r.json()["facts"]]


def test_a_later_request_closes_and_recall_follows(http: httpx.Client) -> None:
    store(http, lives("Gothenburg", "g", valid_from="2001-01-01T00:00:00+01:00"))
    assert recalled(http) == ["g"]
    store(http, lives("Cork", "c", valid_from="2011-01-01T00:00:00Z"))
    # GET lists closed facts too, with their validity.
    assert validity(http) == {
        "g": ("2000-12-31T23:00:00Z", "2011-01-01T00:00:00Z"),
        "c": ("2011-01-01T00:00:00Z", None),
    }
    assert recalled(http) == ["c"]
    assert recalled(http, as_of="2005-01-01T00:00:00Z") == ["g"]
    # A retry of either request changes nothing.
    store(http, lives("Gothenburg", "g", valid_from="2001-01-01T00:00:00+01:00"))
    store(http, lives("Cork", "c", valid_from="2011-01-01T00:00:00Z"))
    assert validity(http)["g"][1] == "2011-01-01T00:00:00Z"
    assert recalled(http) == ["c"]


def test_a_fact_without_valid_from_closes_at_its_recording_time(http: httpx.Client) -> None:
    store(http, lives("Gothenburg", "g"))
    store(http, lives("Cork", "c"))
    r = http.get("/v1/facts", params={"subject": "Ada"})
    cork = next(f for f in r.json()["facts"] if f["id"] == "c")
    assert validity(http)["g"] == (None, cork["recorded_at"])
    recorded = datetime.fromisoformat(cork["recorded_at"].replace("Z", "+00:00"))
    assert recorded <= datetime.now(UTC)
    assert recalled(http) == ["c"]


def test_a_tool_claim_leaves_the_users_fact_open(http: httpx.Client) -> None:
    store(http, lives("Gothenburg", "g"))
    store(http, lives("Lisbon", "t", role="tool"))
    assert validity(http)["g"][1] is None
    assert recalled(http, source_roles=["user", "tool"]) == ["g", "t"]


@pytest.mark.parametrize(
    ("controls", "control"),
    [
        ({"subjects": []}, "subjects"),
        ({"subjects": ["Ada", "ADA"]}, "subjects"),
        ({"as_of": "2026-01-01"}, "as_of"),
        ({"recorded_after": 0}, "recorded_after"),
        (
            {"recorded_after": "2026-01-02T00:00:00Z", "recorded_before": "2026-01-01T00:00:00Z"},
            "recorded_before",
        ),
    ],
)
def test_a_refused_filter_names_itself_and_changes_nothing(
    http: httpx.Client, controls: dict[str, Any], control: str
) -> None:
    store(http, lives("Gothenburg", "g"))
    before = validity(http)
    r = http.post("/v1/recalls", json={"question": "Where does Ada live?", **controls})
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert (error["code"], error["control"]) == ("invalid_recall_controls", control)
    assert control in error["message"] and "Traceback" not in error["message"]
    assert validity(http) == before
