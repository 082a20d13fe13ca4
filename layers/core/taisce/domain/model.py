"""What memory holds: the stored records and the names they use."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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
    or day), and a tuple is made in about a fifth of the time."""

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


# -- the records the ports carry (domain/ports/) ------------------------------------

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
    made in about half the time."""

    id: str
    score: float
    # The item's storing position, where the index holds one (VectorItem.position).
    position: int | None = None
    # Its message's time, where the index holds one (VectorItem.occurred_at): "" the
    # message holds none; None not carried (an entry indexed before times were kept).
    occurred_at: str | None = None


@dataclass(frozen=True, slots=True)
class Credential:
    id: str
    project: str
    label: str | None
    created_at: str
    revoked_at: str | None = None


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


WorkKind = Literal["messages", "facts", "sweep", "erasure"]
