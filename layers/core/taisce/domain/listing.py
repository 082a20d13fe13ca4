"""Listings for people browsing a project (the memory explorer): entities with their
fact counts per role, messages newest first, one message with its passages, and an
entity's neighbourhood. Pages are cut by an opaque cursor the server hands out."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from .errors import InvalidRequest, NotFound
from .ingest import ID_PATTERN
from .model import Alias, EntityCounts, Fact, Message, Passage

DEFAULT_PAGE = 50
MAX_PAGE = 100
# A neighbourhood draws at most this many facts (a hub's graph stays readable).
NEIGHBOURHOOD_FACTS = 200
MAX_CURSOR_CHARACTERS = 2048
# A function answers at most 6 MB (6,291,456 bytes of Lambda's answer, whose body is a
# JSON string inside it): a page stops taking items once what they weigh there passes
# this, with a cursor from the last item taken (always at least one item: the longest
# message, its passages included, weighs about 2.8 MB).
PAGE_BYTES = 3_000_000
# A neighbourhood's facts, weighed by their texts alone: each also carries ids, keys
# and a node or two (about 500 bytes), 200 facts at most.
NEIGHBOURHOOD_BYTES = PAGE_BYTES - NEIGHBOURHOOD_FACTS * 500
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")


# A cursor carries a tag over its project, route and values, so that an edited cursor,
# or one from another project or route, is refused rather than read. The key is not
# secret: a forged cursor could only start the caller's own listing at a point it chose
# (the tag makes edits evident, it does not hide anything).
_TAG_KEY = b"taisce listing cursor v1"
_TAG_BYTES = 12


def _tag(project: str, payload: bytes) -> bytes:
    message = project.encode("utf-8") + b"\x00" + payload
    return hmac.new(_TAG_KEY, message, hashlib.sha256).digest()[:_TAG_BYTES]


def encode_cursor(kind: str, project: str, values: list[str]) -> str:
    payload = json.dumps([kind, *values], ensure_ascii=False, separators=(",", ":")).encode()
    raw = _tag(project, payload) + payload
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(kind: str, project: str, cursor: str, size: int) -> list[str]:
    """The values of a cursor this route handed out for this project; anything else
    (edited, another route's or project's, made up) is a 400."""
    problem = InvalidRequest("cursor is not one this route handed out (pass next_cursor back)")
    if len(cursor) > MAX_CURSOR_CHARACTERS or not _BASE64URL.fullmatch(cursor):
        raise problem
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (binascii.Error, ValueError):
        raise problem from None
    tag, payload = raw[:_TAG_BYTES], raw[_TAG_BYTES:]
    if not hmac.compare_digest(tag, _tag(project, payload)):
        raise problem
    try:
        decoded = json.loads(payload.decode("utf-8"))
    except (ValueError, UnicodeError):
        raise problem from None
    if (
        not isinstance(decoded, list)
        or len(decoded) != size + 1
        or decoded[0] != kind
        or not all(isinstance(v, str) for v in decoded[1:])
    ):
        raise problem
    return decoded[1:]


def wire_bytes(*texts: str | None) -> int:
    """What these texts weigh in a function's answer: escaped as JSON with ASCII only
    (as the API's serializer writes the body), then again as the string that carries
    the body in Lambda's answer."""
    return sum(len(json.dumps(json.dumps(t))) for t in texts if t)


def fitting(weights: Iterable[int], budget: int = PAGE_BYTES) -> int:
    """How many of the leading items, of these weights, a page takes: those within the
    budget, and at least one."""
    total = taken = 0
    for weight in weights:
        total += weight
        if taken and total > budget:
            break
        taken += 1
    return taken


def fact_bytes(f: Fact) -> int:
    """A fact's weight in an answer: its texts, and a margin for ids, times and keys."""
    return 400 + wire_bytes(f.id, f.subject, f.predicate, f.object, f.statement, f.quote, f.context)


def check_page(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_PAGE
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidRequest(f"limit must be between 1 and {MAX_PAGE}")
    return limit


def check_message_id(message_id: str) -> None:
    if not re.fullmatch(ID_PATTERN, message_id):
        # No message can have such an id: answered without echoing it.
        raise NotFound("no message with that id (ids are 1-128 characters of A-Z a-z 0-9 ._:@-)")


@dataclass(frozen=True, slots=True)
class EntityPage:
    """A page of entities by key; `next_cursor` None at the end."""

    entities: list[EntityCounts]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class FactPage:
    """A page of the facts with one subject, in storing order; `next_cursor` None at
    the end."""

    facts: list[Fact]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class AliasPage:
    """A page of aliases by alias key; `next_cursor` None at the end."""

    aliases: list[Alias]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class ShownMessage:
    """A message as the reads show it, with its passages (by start) where they were
    asked for (None: not asked)."""

    message: Message
    passages: list[Passage] | None = None

    def weight(self) -> int:
        """Its weight in an answer (wire_bytes), with a margin for ids, times, keys."""
        m = self.message
        passages = self.passages or ()
        texts = [t for p in passages for t in (p.id, p.message_id, p.source, p.quote)]
        return 300 + 200 * len(passages) + wire_bytes(m.id, m.content, m.source, *texts)


@dataclass(frozen=True, slots=True)
class MessagePage:
    """A page of messages, newest first; `next_cursor` None at the end."""

    messages: list[ShownMessage]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class GraphNode:
    """An entity ("e:<key>"), or the value a fact points at ("v:<fact id>", key None),
    at the hop it was first reached."""

    id: str
    key: str | None
    name: str
    kind: Literal["entity", "value"]
    hop: int


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """A fact walked, from its subject's node to its object's, at its hop."""

    fact: Fact
    source: str
    target: str
    hop: int


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    """An entity's neighbourhood: `entity` is the key the name resolved to."""

    entity: str
    nodes: list[GraphNode]
    edges: list[GraphEdge]


def neighbourhood_graph(center: str, facts: list[tuple[Fact, int]]) -> Neighbourhood:
    """Nodes of the facts walked. An entity's node id is "e:<key>"; a fact whose object
    is a value (not an entity) points at a node of its own, "v:<fact id>"."""
    nodes: dict[str, GraphNode] = {}

    def node(node_id: str, key: str | None, name: str, hop: int) -> str:
        if node_id not in nodes:
            kind: Literal["entity", "value"] = "entity" if key is not None else "value"
            nodes[node_id] = GraphNode(node_id, key, name, kind, hop)
        return node_id

    named = [f.subject for f, _ in facts if f.subject_key == center]
    named += [f.object for f, _ in facts if f.object_key == center]
    node(f"e:{center}", center, named[0] if named else center, 0)
    edges: list[GraphEdge] = []
    for f, hop in facts:
        source = node(f"e:{f.subject_key}", f.subject_key, f.subject, hop)
        if f.object_key is None:
            target = node(f"v:{f.id}", None, f.object, hop)
        else:
            target = node(f"e:{f.object_key}", f.object_key, f.object, hop)
        edges.append(GraphEdge(f, source, target, hop))
    return Neighbourhood(center, list(nodes.values()), edges)
