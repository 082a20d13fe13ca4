"""How a refused recall is answered: a control named in `invalid_recall_controls` with
its rule, the question's own message, and the body's problems first."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

from ..domain.controls import CONTROL_RULES, CONTROLS, MAX_QUESTION_CHARACTERS
from .resolver import body_problem, error_response, field_response


def _rank(error: dict[str, Any]) -> tuple[int, int]:
    """The body, then the question, then the controls in their order, then the rest."""
    loc = error["loc"]
    field = loc[1] if len(loc) > 1 else None
    if body_problem(error) or field == "question":
        return (0, 0)
    if field in CONTROLS:
        return (1, CONTROLS.index(field))
    return (2, 0)


def recall_invalid(exc: RequestValidationError) -> Response[str]:
    """A refused field of a recall is a control (or not one), named; `question` stays
    `invalid_request`."""
    error = min(exc.errors(), key=_rank)
    if body_problem(error):
        return field_response(error)
    loc = tuple(error["loc"])
    field = loc[1] if len(loc) > 1 else None
    if loc[0] == "body" and field != "question" and len(loc) >= 2:
        control = str(field)
        if control in CONTROL_RULES:
            detail = error["msg"] if error["type"] == "value_error" else ""
            message = f"{control} {CONTROL_RULES[control]}"
            if detail:
                message += f" ({detail.removeprefix('Value error, ')})"
        else:
            message = f"{control} is not a recall control"
        return error_response(400, "invalid_recall_controls", message, control=control)
    if field == "question":
        return error_response(
            400,
            "invalid_request",
            f"question must be a non-blank string of at most {MAX_QUESTION_CHARACTERS} characters",
        )
    return field_response(error)
