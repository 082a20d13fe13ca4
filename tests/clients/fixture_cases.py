"""How the adapters' runners turn a fixture case into a recall call, and which they skip."""

from __future__ import annotations

from typing import Any

from taisce_client import ApiError

from tests.recall_fixture import params


def unsendable(case: dict[str, Any]) -> str | None:
    """Why an adapter cannot send this case: it always sends a JSON object it builds."""
    if "raw_body" in case:
        return "a raw body (not JSON, or 4000.0): only tests/integration sends raw bytes"
    if not isinstance(case["request"], dict):
        return "a body that is not a JSON object: an adapter always sends an object"
    return None


def arguments(case: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """(question, controls) of a case; a missing question is None, which is not sent."""
    controls = dict(case["request"])
    return controls.pop("question", None), controls


def error_of(error: ApiError) -> dict[str, Any]:
    return {"code": error.code, "message": error.message, "control": error.control}


CASES = params(skip=unsendable)
