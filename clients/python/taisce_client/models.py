"""What the API returns and takes, as dataclasses with the wire's field names.

Every result is one of these, never a dict. Results are read with `from_wire`, which
ignores fields this client does not know, so an older client keeps working against a
newer server; `wire()` gives the JSON back. `result["key"]` reads a field by its wire
name too, as code written when some methods returned dicts did.
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

    def __getitem__(self, key: str) -> Any:
        """A field by its wire name (`page["next_cursor"]`); KeyError if it has none."""
        if key not in {f.name for f in fields(self)}:  # type: ignore[arg-type]
            raise KeyError(key)
        return getattr(self, key)

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

    _optional_keys = ("why", "occurred_at", "recorded_at")

    id: str
    message_id: str
    role: Role
    source: str | None
    start: int
    end: int
    quote: str
    why: dict[str, Any] | None = None
    # A recalled passage's message's times (not counted against the budget); None on
    # a message's own passages, and from servers that do not send them.
    occurred_at: str | None = None
    recorded_at: str | None = None


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
class Recall(_Wire):
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
    """`GET /v1/health`: liveness only ("ok"); needs no credential."""

    status: str


@dataclass(frozen=True, slots=True)
class Status(_Wire):
    """`GET /v1/status`: the server's version and settings (no secrets), and whether
    its worker has work for the credential's project."""

    version: str
    store: str
    embeddings: str
    bundle_characters: int
    max_rows: int
    # True while the worker still builds this project's reports or vectors after writes.
    work_pending: bool = False


@dataclass(frozen=True, slots=True)
class ErasedCounts(_Wire):
    """What an erasure removed (so far, while pending)."""

    facts: int = 0
    entities: int = 0
    messages: int = 0
    passages: int = 0
    reports: int = 0


@dataclass(frozen=True, slots=True)
class Erasure(_Wire):
    """An erasure's status: `done`, or `pending` while a deploy's worker erases it
    (recall already hides the entity). `finished_at` once done."""

    _optional_keys = ("requested_at", "finished_at")

    id: str
    status: Literal["pending", "done"]
    status_url: str
    erased: ErasedCounts
    requested_at: str | None = None
    finished_at: str | None = None

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Erasure:
        known = {f.name for f in fields(cls)}
        given = {k: v for k, v in data.items() if k in known}
        return cls(**{**given, "erased": ErasedCounts.from_wire(data.get("erased") or {})})

    def wire(self) -> dict[str, Any]:
        return {**_Wire.wire(self), "erased": self.erased.wire()}


@dataclass(frozen=True, slots=True)
class PreviewName(_Wire):
    """A name an erasure reaches: `taken` (the subject, its entity and aliases, names
    in `also`), or not (an entity whose name holds the subject, left unless in `also`)."""

    key: str
    taken: bool


@dataclass(frozen=True, slots=True)
class ErasurePreview(_Wire):
    """What an erasure would take (`dry_run`), nothing removed: its names, counts, the
    first facts and passages, and the `token` to send when `needs_token`."""

    names: list[PreviewName]
    would_erase: ErasedCounts
    facts: list[Fact]
    passages: list[Passage]
    messages: int
    needs_token: bool
    token: str
    dry_run: bool = True

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> ErasurePreview:
        return cls(
            names=[PreviewName.from_wire(n) for n in data.get("names", [])],
            would_erase=ErasedCounts.from_wire(data.get("would_erase") or {}),
            facts=[Fact.from_wire(f) for f in data.get("facts", [])],
            passages=[Passage.from_wire(p) for p in data.get("passages", [])],
            messages=data.get("messages", 0),
            needs_token=data.get("needs_token", False),
            token=data.get("token", ""),
        )

    def wire(self) -> dict[str, Any]:
        return {
            **_Wire.wire(self),
            "names": [n.wire() for n in self.names],
            "would_erase": self.would_erase.wire(),
            "facts": [f.wire() for f in self.facts],
            "passages": [p.wire() for p in self.passages],
        }


@dataclass(frozen=True, slots=True)
class Credential(_Wire):
    """A credential as an admin lists it (never its secret): `kind` project (may send
    any user), user (acts only as `user`) or admin (may also mint and revoke)."""

    _optional_keys = ("user", "label", "revoked_at", "secret")

    id: str
    kind: Literal["project", "user", "admin"]
    created_at: str
    user: str | None = None
    label: str | None = None
    last_used_at: str | None = None
    revoked_at: str | None = None
    # Only when just minted: the bearer credential, shown this once.
    secret: str | None = None


@dataclass(frozen=True, slots=True)
class FactPage(_Wire):
    """A page of the facts about one entity, in storing order; `next_cursor` None at
    the end."""

    facts: list[Fact]
    next_cursor: str | None

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> FactPage:
        listed = [Fact.from_wire(f) for f in data["facts"]]
        return cls(facts=listed, next_cursor=data.get("next_cursor"))

    def wire(self) -> dict[str, Any]:
        return {"facts": [f.wire() for f in self.facts], "next_cursor": self.next_cursor}


@dataclass(frozen=True, slots=True)
class Alias(_Wire):
    """One alias of the project: `alias` is another name of the entity `into`."""

    alias: str
    into: str


@dataclass(frozen=True, slots=True)
class AliasPage(_Wire):
    """A page of the project's aliases by normalised alias; `next_cursor` None at the end."""

    aliases: list[Alias]
    next_cursor: str | None

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> AliasPage:
        listed = [Alias.from_wire(a) for a in data["aliases"]]
        return cls(aliases=listed, next_cursor=data.get("next_cursor"))

    def wire(self) -> dict[str, Any]:
        return {"aliases": [a.wire() for a in self.aliases], "next_cursor": self.next_cursor}


@dataclass(frozen=True, slots=True)
class CredentialPage(_Wire):
    """A page of the project's credentials by id; `next_cursor` None at the end."""

    credentials: list[Credential]
    next_cursor: str | None

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> CredentialPage:
        listed = [Credential.from_wire(c) for c in data["credentials"]]
        return cls(credentials=listed, next_cursor=data.get("next_cursor"))

    def wire(self) -> dict[str, Any]:
        return {
            "credentials": [c.wire() for c in self.credentials],
            "next_cursor": self.next_cursor,
        }


@dataclass(frozen=True, slots=True)
class RoleCounts(_Wire):
    """Live facts naming an entity, per role of whoever said them."""

    user: int = 0
    assistant: int = 0
    system: int = 0
    tool: int = 0


@dataclass(frozen=True, slots=True)
class Entity(_Wire):
    """An entity: its normalised `key` (what names match on) and its name as first written."""

    key: str
    name: str
    facts: RoleCounts

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Entity:
        return cls(data["key"], data["name"], RoleCounts.from_wire(data.get("facts") or {}))

    def wire(self) -> dict[str, Any]:
        return {"key": self.key, "name": self.name, "facts": self.facts.wire()}


@dataclass(frozen=True, slots=True)
class EntityPage(_Wire):
    """A page of entities by key; pass `next_cursor` back for the next (None: the end)."""

    entities: list[Entity]
    next_cursor: str | None

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> EntityPage:
        entities = [Entity.from_wire(e) for e in data["entities"]]
        return cls(entities, data.get("next_cursor"))

    def wire(self) -> dict[str, Any]:
        return {"entities": [e.wire() for e in self.entities], "next_cursor": self.next_cursor}


@dataclass(frozen=True, slots=True)
class Node(_Wire):
    """An entity (`id` "e:<key>") or a value (`id` "v:<fact id>", `key` None)."""

    id: str
    key: str | None
    name: str
    kind: Literal["entity", "value"]
    hop: int


@dataclass(frozen=True, slots=True)
class Edge(_Wire):
    """A live fact between two nodes; `id` is the fact's."""

    id: str
    source: str
    target: str
    predicate: str
    statement: str
    source_role: Role
    valid_to: str | None
    hop: int


@dataclass(frozen=True, slots=True)
class Neighbourhood(_Wire):
    """An entity's live facts (and with hops 2 its neighbours') as nodes and edges;
    `entity` is the key the name resolved to."""

    entity: str
    nodes: list[Node]
    edges: list[Edge]

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Neighbourhood:
        nodes = [Node.from_wire(n) for n in data["nodes"]]
        return cls(data["entity"], nodes, [Edge.from_wire(e) for e in data["edges"]])

    def wire(self) -> dict[str, Any]:
        return {
            "entity": self.entity,
            "nodes": [n.wire() for n in self.nodes],
            "edges": [e.wire() for e in self.edges],
        }


@dataclass(frozen=True, slots=True)
class StoredMessage(_Wire):
    """A stored message; `passages` only when the listing was asked for them."""

    _optional_keys = ("passages",)

    id: str
    role: Role
    content: str
    source: str | None = None
    occurred_at: str | None = None
    recorded_at: str | None = None
    passages: list[Passage] | None = None

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> StoredMessage:
        known = {f.name for f in fields(cls)}
        given = {k: v for k, v in data.items() if k in known}
        if given.get("passages") is not None:
            given["passages"] = [Passage.from_wire(p) for p in given["passages"]]
        return cls(**given)

    def wire(self) -> dict[str, Any]:
        data = _Wire.wire(self)
        if self.passages is not None:
            data["passages"] = [p.wire() for p in self.passages]
        return data


@dataclass(frozen=True, slots=True)
class FactMatches(_Wire):
    """A page of the facts holding the words searched for, best first; pass
    `next_cursor` back (with the same words) for the next. `degraded` is ["search"]
    when the server could not search (no embedding model, or its index failed)."""

    facts: list[Fact]
    next_cursor: str | None
    degraded: list[str]

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> FactMatches:
        listed = [Fact.from_wire(f) for f in data["facts"]]
        return cls(listed, data.get("next_cursor"), list(data.get("degraded", [])))


@dataclass(frozen=True, slots=True)
class MessageMatches(_Wire):
    """A page of the messages holding the words searched for, best first, each with
    the passages that matched (`passages`)."""

    messages: list[StoredMessage]
    next_cursor: str | None
    degraded: list[str]

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> MessageMatches:
        messages = [StoredMessage.from_wire(m) for m in data["messages"]]
        return cls(messages, data.get("next_cursor"), list(data.get("degraded", [])))


@dataclass(frozen=True, slots=True)
class MessagePage(_Wire):
    """A page of messages, newest first; pass `next_cursor` back for the next."""

    messages: list[StoredMessage]
    next_cursor: str | None

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> MessagePage:
        messages = [StoredMessage.from_wire(m) for m in data["messages"]]
        return cls(messages, data.get("next_cursor"))

    def wire(self) -> dict[str, Any]:
        return {"messages": [m.wire() for m in self.messages], "next_cursor": self.next_cursor}


@dataclass(frozen=True, slots=True)
class MessageWithPassages(_Wire):
    """One message and its passages, in order of start."""

    message: StoredMessage
    passages: list[Passage]

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> MessageWithPassages:
        passages = [Passage.from_wire(p) for p in data["passages"]]
        return cls(StoredMessage.from_wire(data["message"]), passages)

    def wire(self) -> dict[str, Any]:
        return {"message": self.message.wire(), "passages": [p.wire() for p in self.passages]}


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
