"""What clients store: facts and messages, their rules, and messages split into passages."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Callable
from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from .model import Fact, Message, ObjectKind, Passage, Role
from .names import NOT_A_NAME, has_letter_or_digit, normalize_name
from .scope import User
from .timestamps import Timestamp, parse_timestamp

MAX_BATCH = 100
MAX_MESSAGE_CHARACTERS = 100_000
PASSAGE_CHARACTERS = 150

# "#" is kept out of client ids: passage ids are "<message id>#<n>".
ID_PATTERN = r"^[A-Za-z0-9._:@-]{1,128}$"
Id = Annotated[str, StringConstraints(pattern=ID_PATTERN)]

Name = Annotated[str, StringConstraints(min_length=1, max_length=500)]
Text = Annotated[str, StringConstraints(min_length=1, max_length=4_000)]
Content = Annotated[str, StringConstraints(min_length=1, max_length=MAX_MESSAGE_CHARACTERS)]


def _not_blank(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise ValueError("must not be blank")
    return value


class FactIn(BaseModel):
    """One fact as a client sends it. source_role has no default, on purpose."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: Id | None = None
    subject: Name
    predicate: Name
    object: Text
    object_kind: ObjectKind = "entity"
    statement: Text | None = None
    source_role: Role
    quote: Text | None = None
    context: Text | None = None
    message_id: Id | None = None
    valid_from: Timestamp | None = None
    valid_to: Timestamp | None = None

    _blank = field_validator("subject", "predicate", "object", "statement", "quote", "context")(
        _not_blank
    )

    @field_validator("subject")
    @classmethod
    def _subject_named(cls, value: str) -> str:
        if value.strip() and not has_letter_or_digit(value):
            raise ValueError(NOT_A_NAME)
        return value

    @model_validator(mode="after")
    def _object_named(self) -> FactIn:
        # A value ("42", "-") may be anything; an entity object is a name.
        if self.object_kind == "entity" and not has_letter_or_digit(self.object):
            raise ValueError(f'object: {NOT_A_NAME} (or object_kind "value")')
        return self

    @model_validator(mode="after")
    def _valid_period(self) -> FactIn:
        if (
            self.valid_from
            and self.valid_to
            and parse_timestamp(self.valid_to) < parse_timestamp(self.valid_from)
        ):
            raise ValueError("valid_to must not be before valid_from")
        return self


class MessageIn(BaseModel):
    """One message (or document text) as a client sends it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: Id | None = None
    role: Role
    content: Content
    source: Name | None = None
    occurred_at: Timestamp | None = None

    _blank = field_validator("content", "source")(_not_blank)


class FactsRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    facts: Annotated[list[FactIn], Field(min_length=1, max_length=MAX_BATCH)]
    # The end user the facts belong to (domain/scope.py); absent: the shared memory.
    user: User | None = None


class MessagesRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    messages: Annotated[list[MessageIn], Field(min_length=1, max_length=MAX_BATCH)]
    user: User | None = None


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def make_fact(given: FactIn, recorded_at: str, make_id: Callable[[str], str] = new_id) -> Fact:
    is_entity = given.object_kind == "entity"
    return Fact(
        id=given.id or make_id("fact"),
        subject=given.subject,
        subject_key=normalize_name(given.subject),
        predicate=given.predicate,
        object=given.object,
        object_kind=given.object_kind,
        object_key=normalize_name(given.object) if is_entity else None,
        statement=given.statement or f"{given.subject} {given.predicate} {given.object}",
        source_role=given.source_role,
        quote=given.quote,
        context=given.context,
        message_id=given.message_id,
        valid_from=given.valid_from,
        valid_to=given.valid_to,
        recorded_at=recorded_at,
    )


def content_id(given: MessageIn) -> str | None:
    """The id of a message sent without one but with its time: the same role, source,
    content and occurred_at are the same message, stored once however often it is
    posted. Without occurred_at the server dates it, so each post is a new message
    (two "ok"s of one chat are two messages)."""
    if given.occurred_at is None:
        return None
    content = json.dumps([given.role, given.source, given.content, given.occurred_at])
    return "msg_" + hashlib.sha256(content.encode()).hexdigest()[:32]


def make_message(
    given: MessageIn, recorded_at: str, make_id: Callable[[str], str] = new_id
) -> Message:
    return Message(
        id=given.id or content_id(given) or make_id("msg"),
        role=given.role,
        content=given.content,
        source=given.source,
        occurred_at=given.occurred_at or recorded_at,
        recorded_at=recorded_at,
    )


# A sentence ends at . ! ? … with any closing quotes or brackets, before white
# space; at the CJK full stop and the full-width ! and ? whether or not white
# space follows (CJK text has none between sentences). A line break always ends
# a piece.
_BREAK = re.compile(
    r"(?<=[.!?\u2026])[\"'\u201d\u2019)\]]*\s+"
    r"|(?<=[\u3002\uff01\uff1f\uff61])[\"'\u201d\u2019)\]\u300d\u300f\uff09]*\s*"
    r"|\n+"
)


def _trimmed(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def _pieces(text: str, limit: int) -> list[tuple[int, int]]:
    """Sentences as code-point spans, long ones cut at white space to fit the limit."""
    pieces: list[tuple[int, int]] = []
    start = 0
    bounds = [m.end() for m in _BREAK.finditer(text)] + [len(text)]
    for stop in bounds:
        span = _trimmed(text, start, stop)
        start = stop
        while span:
            s, e = span
            if e - s <= limit:
                pieces.append(span)
                break
            cut = text.rfind(" ", s + 1, s + limit + 1)
            cut = cut if cut > s else s + limit
            pieces.append(_trimmed(text, s, cut) or (s, cut))
            span = _trimmed(text, cut, e)
    return pieces


def split_passages(message: Message, limit: int = PASSAGE_CHARACTERS) -> list[Passage]:
    """Consecutive sentences packed into passages of at most `limit` code points."""
    spans: list[tuple[int, int]] = []
    for s, e in _pieces(message.content, limit):
        if spans and e - spans[-1][0] <= limit:
            spans[-1] = (spans[-1][0], e)
        else:
            spans.append((s, e))
    return [
        Passage(
            id=f"{message.id}#{n}",
            message_id=message.id,
            role=message.role,
            source=message.source,
            start=s,
            end=e,
            quote=message.content[s:e],
        )
        for n, (s, e) in enumerate(spans)
    ]
