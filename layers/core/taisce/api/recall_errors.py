"""How a refused recall is answered: every problem named, in the order docs/API.md
states (the body, the question, the controls in their order, then unknown fields);
the first decides the code, and a refused control (or unknown field) is named in
`control`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aws_lambda_powertools.event_handler import Response
from pydantic import BaseModel

from ..domain.controls import CONTROL_RULES, CONTROLS, MAX_QUESTION_CHARACTERS
from .problems import Error, joined, sentence
from .resolver import body_problem, error_response, field_response

QUESTION_RULE = (
    f"question must be a non-blank string of at most {MAX_QUESTION_CHARACTERS:,} characters"
)


def _field(error: Error) -> str | None:
    loc = error["loc"]
    return str(loc[1]) if len(loc) > 1 and loc[0] == "body" else None


def _rank(error: Error) -> tuple[int, int]:
    """The body, then the question, then the controls in their order, then the rest."""
    field = _field(error)
    if body_problem(error) or field == "question":
        return (0, 0)
    if field in CONTROLS:
        return (1, CONTROLS.index(field))
    return (2, 0)


def _sentence(error: Error, root: type[BaseModel] | None) -> str:
    field = _field(error)
    if field == "question":
        return "question is required" if error["type"] == "missing" else QUESTION_RULE
    if field in CONTROL_RULES:
        message = f"{field} {CONTROL_RULES[field]}"
        reason: Any = (error.get("ctx") or {}).get("error")
        if error["type"] == "value_error" and reason:
            message += f" ({reason})"
        return message
    return sentence(error, root)


def recall_invalid(errors: Sequence[Error], root: type[BaseModel] | None) -> Response[str]:
    """A refused recall: a control (or an unknown field) is `invalid_recall_controls`
    naming it; the question and the body are `invalid_request`."""
    ordered = sorted(errors, key=_rank)
    if not ordered or body_problem(ordered[0]):
        return field_response(ordered, root)
    message = joined([_sentence(e, root) for e in ordered])
    first = _field(ordered[0])
    # `user` is not a control: a wrong one is a wrong request, as on every route.
    if first is None or first in ("question", "user"):
        return error_response(400, "invalid_request", message)
    return error_response(400, "invalid_recall_controls", message, control=first)
