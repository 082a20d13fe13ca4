"""What the API returns and takes, as dataclasses with the wire's field names.

Results are read with `from_wire`, which ignores fields this client does not know, so
an older client keeps working against a newer server; `wire()` gives the JSON back.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal, TypedDict

if sys.version_info >= (3, 11):
    from typing import Self
else:  # the client supports Python 3.10
    from typing_extensions import Self

Role = Literal["user", "assistant", "system", "tool"]
Surface = Literal["facts", "reports", "passages"]


class _Wire:
    """`from_wire` and `wire()` for the result dataclasses below."""

    # Keys left out of `wire()` when None: the API sends them only when they apply.
    _optional_keys: tuple[str, ...] = ()

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Self:
        known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in data.items() if k in known})

    def wire(self) -> dict[str, Any]:
        data = asdict(self)  # type: ignore[call-overload]
        return {k: v for k, v in data.items() if not (k in self._optional_keys and v is None)}


@dataclass(frozen=True, slots=True)
class Fact(_Wire):
    """One statement about an entity, as stored; `path` only on facts reached at hop 2."""

    _optional_keys = ("path", "why")

    id: str
    subject: str
    predicate: str
    object: str
    statement: str
    source_role: Role
    object_kind: Literal["entity", "value"] = "entity"
    quote: str | None = None
    context: str | None = None
    message_id: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    recorded_at: str | None = None
    path: list[str] | None = None
    # With the `explain` control: how it was found (step, matched, signals).
    why: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Report(_Wire):
    """A short summary of related facts; `path` runs from the top report down to this one."""

    _optional_keys = ("why",)

    id: str
    title: str
    summary: str
    path: list[str]
    source_messages: list[str]
    why: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Passage(_Wire):
    """A quote from a stored message; `start`/`end` are code-point offsets into it."""

    _optional_keys = ("why",)

    id: str
    message_id: str
    role: Role
    source: str | None
    start: int
    end: int
    quote: str
    why: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Controls(_Wire):
    """The controls a recall actually used (the server's echo)."""

    _optional_keys = ("explain", "subjects", "as_of", "recorded_after", "recorded_before")

    max_characters: int
    max_rows: int
    source_roles: list[Role]
    hops: int
    surfaces: list[Surface]
    themes: bool
    # Echoed only when sent: None when the server does not echo it.
    explain: bool | None = None
    # Filters of later API versions: None when the server does not echo them.
    subjects: list[str] | None = None
    as_of: str | None = None
    recorded_after: str | None = None
    recorded_before: str | None = None


@dataclass(frozen=True, slots=True)
class Recall:
    """A recall's bundle: what it used, what it found, what it cut, what could not run."""

    controls: Controls
    characters: int
    truncated: bool
    degraded: list[Surface]
    facts: list[Fact]
    reports: list[Report]
    passages: list[Passage]

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Recall:
        return cls(
            controls=Controls.from_wire(data["controls"]),
            characters=data["characters"],
            truncated=data["truncated"],
            degraded=list(data["degraded"]),
            facts=[Fact.from_wire(f) for f in data["facts"]],
            reports=[Report.from_wire(r) for r in data["reports"]],
            passages=[Passage.from_wire(p) for p in data["passages"]],
        )

    def wire(self) -> dict[str, Any]:
        return {
            "controls": self.controls.wire(),
            "characters": self.characters,
            "truncated": self.truncated,
            "degraded": list(self.degraded),
            "facts": [f.wire() for f in self.facts],
            "reports": [r.wire() for r in self.reports],
            "passages": [p.wire() for p in self.passages],
        }


@dataclass(frozen=True, slots=True)
class Health(_Wire):
    """`GET /v1/health`: liveness and configuration (no secrets)."""

    status: str
    version: str | None = None
    store: str | None = None
    embeddings: str | None = None
    bundle_characters: int | None = None
    max_rows: int | None = None
    # True while the server's worker still builds reports or vectors after writes.
    work_pending: bool = False


# -- what the client sends ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message to store. Without an `id` the client makes one, so a retry stores once."""

    role: Role
    content: str
    id: str | None = None
    source: str | None = None
    occurred_at: str | None = None

    def wire(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True, slots=True)
class NewFact:
    """A fact to store. `source_role` is required: whoever said it, never a default."""

    subject: str
    predicate: str
    object: str
    source_role: Role
    object_kind: Literal["entity", "value"] | None = None
    statement: str | None = None
    quote: str | None = None
    context: str | None = None
    message_id: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    id: str | None = None

    def wire(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


class RecallControls(TypedDict, total=False):
    """Recall controls (keyword arguments of `recall`); any left out takes the server's
    default. See the API's recall-controls page for the rules."""

    max_characters: int
    max_rows: int
    source_roles: Sequence[Role]
    hops: int
    surfaces: Sequence[Surface]
    themes: bool
    # Every item carries `why` (how it was found); not counted in characters.
    explain: bool
    # Filters of later API versions, sent only when given.
    subjects: Sequence[str]
    as_of: str
    recorded_after: str
    recorded_before: str
