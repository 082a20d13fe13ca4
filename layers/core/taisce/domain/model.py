"""What memory holds: the stored records and the names they use."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

Role = Literal["user", "assistant", "system", "tool"]
Surface = Literal["facts", "reports", "passages"]
ObjectKind = Literal["entity", "value"]

ROLES: tuple[Role, ...] = ("user", "assistant", "system", "tool")
SURFACES: tuple[Surface, ...] = ("facts", "reports", "passages")


@dataclass(frozen=True, slots=True)
class Fact:
    id: str
    subject: str
    subject_key: str
    predicate: str
    object: str
    object_kind: ObjectKind
    # The normalised name of the object when it is an entity, None for a value:
    # only entity objects are links that recall can walk.
    object_key: str | None
    statement: str
    source_role: Role
    quote: str | None
    context: str | None
    message_id: str | None
    valid_from: str | None
    valid_to: str | None
    recorded_at: str
    # Code-point offsets of `quote` in the message's content, set only where the
    # server located the quote itself (extracted facts): content[start:end] == quote.
    quote_start: int | None = None
    quote_end: int | None = None


class FactPointer(NamedTuple):
    """What a recall reads of a fact near the question to follow it to its message
    (recall step 4): whether the recall may see the fact (role, filters) and the
    message it cites. A plain tuple, not a Fact: ~200 are read per recall."""

    id: str
    subject_key: str
    object_key: str | None
    source_role: Role
    message_id: str | None
    valid_from: str | None
    valid_to: str | None
    recorded_at: str


@dataclass(frozen=True, slots=True)
class Message:
    id: str
    role: Role
    content: str
    source: str | None
    occurred_at: str
    recorded_at: str


class Passage(NamedTuple):
    """A span of a message that recall may return. A plain tuple, not a frozen
    dataclass: a recall reads 64 to ~800 (all of them when the question names a month
    or day), and a tuple is much cheaper to make."""

    id: str
    message_id: str
    role: Role
    source: str | None
    start: int
    end: int
    quote: str
    # When its message occurred (stored form), where the store read it for a recall;
    # not part of the body.
    occurred_at: str | None = None
    # Its message's place in the project's storing order, where the store read it
    # (MessageStore.put_messages, domain/ports/messages.py); not part of the body.
    position: int | None = None
    # When its message was recorded: set on recalled passages (with occurred_at) for
    # the recall's body.
    recorded_at: str | None = None


# -- the records the ports carry (domain/ports/) ------------------------------------


@dataclass(frozen=True, slots=True)
class StoreCapabilities:
    """What a store does beyond its methods' contract (Store.capabilities), which the
    use cases follow."""

    # Its calls are round trips, safe from several threads: the use cases make
    # independent reads beside one another (on DynamoDB each costs a round trip).
    parallel_reads: bool = False
    # Finding what names an entity reads the whole project over the network, so no
    # entity's size may bound a request's time: an erasure is accepted (202) and
    # completed by the worker (docs/API.md, "Erasure").
    defers_erasure: bool = False


VectorKind = Literal["entity", "passage", "report", "fact"]


@dataclass(frozen=True, slots=True)
class PendingVector:
    """An item waiting for its vector: what to embed and where to index it."""

    kind: Literal["entity", "passage", "report", "fact"]
    id: str
    text: str
    role: Role | None
    # A passage's message's place in its project's storing order (None: stored
    # before positions were kept, or not a passage); the index keeps it with the vector.
    position: int | None = None
    # When a passage's message occurred (its stored form; "" if the message holds no
    # time), kept by the index with the vector: a recall that names a month or day
    # orders by it without reading passages. None: not carried (a mark written before
    # times were kept, or not a passage): recall then reads the passages for it.
    occurred_at: str | None = None


@dataclass(frozen=True, slots=True)
class VectorItem:
    id: str
    vector: Sequence[float]
    # The role a passage or report speaks for; None for entity names.
    role: Role | None = None
    # The text the vector was made from, for the lexical side of hybrid search.
    text: str | None = None
    # A passage's message's storing position (PendingVector.position), returned with
    # its hits: recall's neighbour signal reads it without another round trip.
    position: int | None = None
    # A passage's message's time (PendingVector.occurred_at: "" the message holds none,
    # None not carried), returned with its hits for recall's month and day factors.
    occurred_at: str | None = None


class Hit(NamedTuple):
    """One item a search found. A plain tuple, not a frozen dataclass: a recall makes
    ~1,000 (400 passages by vector, up to 400 by words, 200 facts), and a tuple is
    cheaper to make."""

    id: str
    score: float
    # The item's storing position, where the index holds one (VectorItem.position).
    position: int | None = None
    # Its message's time, where the index holds one (VectorItem.occurred_at): "" the
    # message holds none; None not carried (an entry indexed before times were kept).
    occurred_at: str | None = None


# What a credential may do: a project credential acts for the project and may send any
# `user`; a user credential acts only as its `user`; an admin credential is a project
# credential that may also mint and revoke credentials.
CredentialKind = Literal["project", "user", "admin"]
CREDENTIAL_KINDS: tuple[CredentialKind, ...] = ("project", "user", "admin")


@dataclass(frozen=True, slots=True)
class Credential:
    id: str
    project: str
    label: str | None
    created_at: str
    revoked_at: str | None = None
    kind: CredentialKind = "project"
    # The end user a user credential is bound to (None for the other kinds).
    user: str | None = None
    # When it last authorized a request, to within USE_RECORDED_EVERY (None: never).
    last_used_at: str | None = None


@dataclass(frozen=True, slots=True)
class ExtractionFailure:
    """A message whose extraction failed every attempt: kept until replayed."""

    project: str
    message_id: str
    error: str
    attempts: int
    failed_at: str


@dataclass(frozen=True, slots=True)
class ExtractionPrompt:
    """What an extractor asks its model: instructions, the message, and the JSON schema
    the answer must follow (as a forced tool's input, or as structured output)."""

    system: str
    user: str
    schema: Mapping[str, Any]
    tool_name: str
    tool_description: str


# -- erasure (domain/erasure.py plans it; ports/erasure.py applies it) ----------------


@dataclass(frozen=True, slots=True)
class ErasureRecord:
    """The audit record of one erasure: no personal data."""

    id: str
    project: str
    subject_hash: str
    erased_at: str
    facts: int = 0
    entities: int = 0
    messages: int = 0
    passages: int = 0
    reports: int = 0

    def counts(self) -> dict[str, int]:
        return {
            "facts": self.facts,
            "entities": self.entities,
            "messages": self.messages,
            "passages": self.passages,
            "reports": self.reports,
        }


@dataclass(frozen=True, slots=True)
class Redaction:
    """One message made free of the name: its new content and source (same lengths),
    the passages deleted, and the passages kept (with the new source)."""

    message_id: str
    content: str
    source: str | None
    dropped: tuple[Passage, ...]
    kept: tuple[Passage, ...]


@dataclass(frozen=True, slots=True)
class ErasurePlan:
    tombstone: str
    fact_ids: tuple[str, ...] = ()
    # Entities to erase (the name's own key, if held, and keys that name it).
    entity_keys: tuple[str, ...] = ()
    redactions: tuple[Redaction, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.fact_ids or self.entity_keys or self.redactions)

    def counts(self, reports: int) -> dict[str, int]:
        return {
            "facts": len(self.fact_ids),
            "entities": len(self.entity_keys),
            "messages": len(self.redactions),
            "passages": sum(len(r.dropped) for r in self.redactions),
            "reports": reports,
        }


# What an erasure counts, in the order its answer gives them.
COUNTS = ("facts", "entities", "messages", "passages", "reports")


def zero_counts() -> dict[str, int]:
    return dict.fromkeys(COUNTS, 0)


@dataclass(frozen=True, slots=True)
class PendingErasure:
    """An erasure accepted and not finished: durable from the request until the worker
    (or the request itself, on a store that finishes at once) completes it. `names`
    are the normalised names to erase (the name asked and the entity's other names):
    held only while the erasure is pending, since the work needs them; the finished
    erasure keeps only the hash."""

    id: str
    project: str
    subject_hash: str
    names: tuple[str, ...]
    requested_at: str
    counts: dict[str, int] = field(default_factory=zero_counts)
    # Who works on it, until when (seconds since the epoch): one holder at a time, so
    # that the request, a duplicate message and the sweep never erase it side by side
    # and lose each other's counts. A holder that died is replaced once its time ends.
    holder: str | None = None
    held_until: float | None = None
    # Where a plan made a page at a time stands (domain/erasure_pages.py, PlanCursor),
    # saved with each step's counts: a retry goes on from there.
    cursor: str | None = None
    # Names the erasure leaves: other entities whose names hold one of `names`, not
    # named in the request's `also` ("dana holdings" when erasing Dana).
    spared: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ErasureStatus:
    """What GET /v1/erasures/{id} answers: pending (with the counts of the steps done
    so far) or done (with the final counts)."""

    id: str
    status: Literal["pending", "done"]
    counts: dict[str, int]
    requested_at: str | None = None
    finished_at: str | None = None


# -- entities and aliases (domain/aliases.py), listings, reports ---------------------


@dataclass(frozen=True, slots=True)
class MergeResult:
    alias: str
    into: str
    facts_moved: int
    aliases_moved: int


@dataclass(frozen=True, slots=True)
class Alias:
    alias: str
    alias_key: str
    into: str
    into_key: str


@dataclass(frozen=True, slots=True)
class EntityName:
    key: str
    name: str
    # Live facts that name it, all roles together (a fact about itself counts twice).
    facts: int


@dataclass(frozen=True, slots=True)
class EntityCounts:
    """An entity (not an alias) and how many live facts of each role name it."""

    key: str
    name: str
    counts: dict[Role, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Report:
    id: str
    role: Role
    # 0: a community; 1: a whole connected component grouping 2 or more communities.
    level: int
    parent_id: str | None
    title: str
    summary: str
    # Titles from the top of the hierarchy down to this report (this report's title last).
    path: tuple[str, ...]
    # The message ids of exactly the facts whose statements are in the summary, in order.
    source_messages: tuple[str, ...]
    # The normalised keys of the member entities, sorted.
    entity_keys: tuple[str, ...]
    # The smallest entity key of the report's connected component (in its role's graph).
    component: str


WorkKind = Literal["messages", "facts", "sweep", "erasure"]
