"""Recall requests and their controls, with every rule of the recall-controls page.

Types, unknown fields, empty lists, repeats and unknown names are refused by the
pydantic model; the rules that depend on the server's own limits are checked in
`resolve`, which also fills in defaults and clamps `hops`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, field_validator

from .errors import InvalidRecallControls
from .model import ROLES, SURFACES, Role, Surface

MAX_QUESTION_CHARACTERS = 10_000

CONTROLS = ("max_characters", "max_rows", "source_roles", "hops", "surfaces", "themes")
DEFAULT_ROLES: tuple[Role, ...] = ("user",)
DEFAULT_HOPS = 1

# Plain words for each control's rule, used in the 400 error's message.
CONTROL_RULES = {
    "max_characters": "must be a positive JSON integer no larger than the server budget",
    "max_rows": "must be a positive JSON integer no larger than the server's row limit",
    "source_roles": "must be a non-empty list of distinct roles from " + ", ".join(ROLES),
    "hops": "must be a JSON integer (values below 1 become 1, above 2 become 2)",
    "surfaces": "must be a non-empty list of distinct surfaces from " + ", ".join(SURFACES),
    "themes": "must be true or false",
}


def _distinct(values: list[str] | None) -> list[str] | None:
    if values is not None and len(set(values)) != len(values):
        raise ValueError("must not repeat a value")
    return values


class RecallRequest(BaseModel):
    """The body of POST /v1/recalls. A control sent as null counts as not sent."""

    model_config = ConfigDict(extra="forbid", strict=True)

    question: Annotated[str, Field(min_length=1, max_length=MAX_QUESTION_CHARACTERS)]
    max_characters: Annotated[StrictInt, Field(gt=0)] | None = None
    max_rows: Annotated[StrictInt, Field(gt=0)] | None = None
    source_roles: Annotated[list[Role], Field(min_length=1)] | None = None
    hops: StrictInt | None = None
    surfaces: Annotated[list[Surface], Field(min_length=1)] | None = None
    themes: StrictBool | None = None

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    _roles_distinct = field_validator("source_roles")(_distinct)
    _surfaces_distinct = field_validator("surfaces")(_distinct)


@dataclass(frozen=True, slots=True)
class Limits:
    """The operator's limits: a request can only shrink them."""

    bundle_characters: int = 16_000
    max_rows: int = 200


@dataclass(frozen=True, slots=True)
class RecallControls:
    max_characters: int
    max_rows: int
    source_roles: tuple[Role, ...]
    hops: int
    surfaces: tuple[Surface, ...]
    themes: bool

    def echo(self) -> dict[str, object]:
        return {
            "max_characters": self.max_characters,
            "max_rows": self.max_rows,
            "source_roles": list(self.source_roles),
            "hops": self.hops,
            "surfaces": list(self.surfaces),
            "themes": self.themes,
        }


def resolve(request: RecallRequest, limits: Limits) -> RecallControls:
    """Apply defaults, clamp hops and check the controls against the server's limits."""
    max_characters = request.max_characters
    if max_characters is None:
        max_characters = limits.bundle_characters
    elif max_characters > limits.bundle_characters:
        raise InvalidRecallControls(
            "max_characters",
            f"max_characters must be no larger than the server budget ({limits.bundle_characters})",
        )
    max_rows = request.max_rows
    if max_rows is None:
        max_rows = limits.max_rows
    elif max_rows > limits.max_rows:
        raise InvalidRecallControls(
            "max_rows", f"max_rows can only lower the server's row limit ({limits.max_rows})"
        )
    hops = DEFAULT_HOPS if request.hops is None else min(2, max(1, request.hops))
    return RecallControls(
        max_characters=max_characters,
        max_rows=max_rows,
        source_roles=tuple(request.source_roles or DEFAULT_ROLES),
        hops=hops,
        surfaces=tuple(request.surfaces or SURFACES),
        themes=bool(request.themes),
    )
