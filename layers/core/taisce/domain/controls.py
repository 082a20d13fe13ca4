"""Recall requests and their controls, with every rule of the recall-controls page.

Types, unknown fields, empty lists, repeats and unknown names are refused by the
pydantic model; the rules that depend on the server's own limits are checked in
`resolve`, which also fills in defaults and clamps `hops`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationInfo,
    field_validator,
)

from .errors import InvalidRecallControls
from .filters import FactFilter, MessageFilter
from .ingest import Name
from .model import ROLES, SURFACES, Role, Surface
from .names import normalize_name
from .scope import User
from .timestamps import Timestamp, parse_timestamp

MAX_QUESTION_CHARACTERS = 10_000

CONTROLS = (
    "max_characters",
    "max_rows",
    "source_roles",
    "hops",
    "surfaces",
    "themes",
    # Echoed only when sent, like the filters: why each item came back (docs/API.md).
    "explain",
    # Filters (docs/API.md, "Time and filters"): echoed only when sent.
    "subjects",
    "as_of",
    "recorded_after",
    "recorded_before",
)
FILTERS = ("subjects", "as_of", "recorded_after", "recorded_before")
MAX_SUBJECTS = 50
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
    "explain": "must be true or false",
    "subjects": f"must be a non-empty list of at most {MAX_SUBJECTS} distinct entity names "
    "(strings of 1-500 characters, not blank; names that normalise alike are repeats)",
    "as_of": "must be an RFC 3339 date-time with an offset, e.g. 2026-01-31T09:00:00Z",
    "recorded_after": "must be an RFC 3339 date-time with an offset, e.g. 2026-01-31T09:00:00Z",
    "recorded_before": "must be an RFC 3339 date-time with an offset, later than "
    "recorded_after when both are sent",
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
    explain: StrictBool | None = None
    subjects: Annotated[list[Name], Field(min_length=1, max_length=MAX_SUBJECTS)] | None = None
    as_of: Timestamp | None = None
    recorded_after: Timestamp | None = None
    recorded_before: Timestamp | None = None
    # Not a control: whose memory the recall sees besides the shared (domain/scope.py).
    user: User | None = None

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    _roles_distinct = field_validator("source_roles")(_distinct)
    _surfaces_distinct = field_validator("surfaces")(_distinct)

    @field_validator("subjects")
    @classmethod
    def _subjects_distinct(cls, values: list[str] | None) -> list[str] | None:
        if values is None:
            return None
        keys = [normalize_name(v) for v in values]
        if not all(keys):
            raise ValueError("a name must not be blank")
        if len(set(keys)) != len(keys):
            raise ValueError("must not repeat a name (after normalising case and white space)")
        return values

    @field_validator("recorded_before")
    @classmethod
    def _after_before(cls, value: str | None, info: ValidationInfo) -> str | None:
        # Checked here, not on the model, so that the error names this control.
        after = info.data.get("recorded_after")
        if value is not None and after and parse_timestamp(after) >= parse_timestamp(value):
            raise ValueError("the window is empty: recorded_after must be before recorded_before")
        return value


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
    # None when not sent (then not echoed); true adds `why` to every item.
    explain: bool | None = None
    # Filters: None when not sent. subjects as sent; times in UTC with a Z.
    subjects: tuple[str, ...] | None = None
    as_of: str | None = None
    recorded_after: str | None = None
    recorded_before: str | None = None

    @property
    def filtered(self) -> bool:
        """Whether any filter was sent."""
        return any(getattr(self, name) is not None for name in FILTERS)

    def fact_filter(self, now: str) -> FactFilter:
        """Facts valid at as_of (default: now), in the recording window, about subjects."""
        subjects = None
        if self.subjects is not None:
            subjects = frozenset(normalize_name(s) for s in self.subjects)
        return FactFilter(
            valid_at=self.as_of or now,
            recorded_after=self.recorded_after,
            recorded_before=self.recorded_before,
            subjects=subjects,
        )

    def message_filter(self) -> MessageFilter:
        """Messages that occurred by as_of (only when sent), in the recording window."""
        return MessageFilter(self.as_of, self.recorded_after, self.recorded_before)


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
        explain=request.explain,
        subjects=None if request.subjects is None else tuple(request.subjects),
        as_of=request.as_of,
        recorded_after=request.recorded_after,
        recorded_before=request.recorded_before,
    )
