"""Search by words over facts and messages (`GET /v1/search/facts`,
`GET /v1/search/messages`): the index's full-text ranking (BM25) of the words asked,
best first, a page at a time. Unlike a recall it has no budget and no question to
answer: it finds every fact or message holding the words, as a person browsing
memory looks for them (the explorer's Search)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .errors import InvalidRequest
from .listing import ShownMessage, decode_cursor, encode_cursor
from .model import Fact, Hit, Role

MAX_SEARCH_CHARACTERS = 500
# How deep a search reads at most: the first 1,000 facts, or the messages of the first
# 1,000 passages, that match (a person refines the words long before).
SEARCH_DEPTH = 1_000
_WORD = re.compile(r"\w")


def check_search_text(text: str) -> str:
    """The words searched for: 1-500 code points holding at least one word character."""
    words = text.strip()
    if not words or len(words) > MAX_SEARCH_CHARACTERS:
        raise InvalidRequest(f"q must be 1-{MAX_SEARCH_CHARACTERS} characters")
    if not _WORD.search(words):
        raise InvalidRequest("q must hold a word (letters or digits) to search for")
    return words


def _asked(words: str, role: Role | None, source: str | None) -> str:
    """What a cursor is bound to: the same words and filters, or the cursor is refused."""
    given = "\x00".join((words, role or "", source or ""))
    return hashlib.sha256(given.encode("utf-8")).hexdigest()[:16]


def search_offset(
    kind: str, project: str, cursor: str | None, words: str, role: Role | None, source: str | None
) -> int:
    """How many matches earlier pages went through (0 without a cursor). A cursor is
    bound to its words and filters: sent with others it is refused."""
    if cursor is None:
        return 0
    asked, offset = decode_cursor(kind, project, cursor, 2)
    if asked != _asked(words, role, source) or not offset.isdigit():
        raise InvalidRequest("cursor is not one this search handed out (same q, role and source)")
    return int(offset)


def next_search_cursor(
    kind: str,
    project: str,
    words: str,
    role: Role | None,
    source: str | None,
    offset: int,
    more: bool,
) -> str | None:
    """The cursor of the page after the first `offset` matches; None when nothing is
    left to read or the search went as deep as it goes."""
    if not more or offset >= SEARCH_DEPTH:
        return None
    return encode_cursor(kind, project, [_asked(words, role, source), str(offset)])


def passage_message_id(passage_id: str) -> str:
    """The message a passage was cut from: its id is "<message id>#<n>" (domain/ingest.py)."""
    return passage_id.rsplit("#", 1)[0]


def messages_in_order(hits: Sequence[Hit]) -> list[str]:
    """The messages of these passage hits, each once, by its best passage."""
    return list(dict.fromkeys(passage_message_id(h.id) for h in hits))


@dataclass(frozen=True, slots=True)
class FactMatches:
    """A page of the facts matching the words, best first; `degraded` names the search
    when it could not run (no model configured, or the index failed)."""

    facts: list[Fact]
    next_cursor: str | None
    degraded: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class MessageMatches:
    """A page of the messages matching the words, best first, each with its matching
    passages (by start)."""

    messages: list[ShownMessage]
    next_cursor: str | None
    degraded: list[str] = field(default_factory=list)
