"""When two facts are the same fact: the content a fact is stored once for.

A fact identical to a live fact of its project (same subject, predicate, object,
object kind, source role, statement, quote, context and validity, each exactly as
written) is not stored again: storing it answers with the stored fact's id. The
message a fact cites and its id are not part of it: the same claim cited from two
messages is one fact, citing the first.

A fact a later one closed (its `valid_to` set by the server) no longer stands for its
content: saying it again is news (it holds again), so it is stored. The stores keep
`fact_identity` of each live, unclosed fact under a unique key (SQLite: a unique
index; DynamoDB: a marker item put on condition that it does not exist).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from .model import Fact

# The fields of a fact that make it the same fact, in a fixed order.
IDENTITY_FIELDS = (
    "subject",
    "predicate",
    "object",
    "object_kind",
    "source_role",
    "statement",
    "quote",
    "context",
    "valid_from",
    "valid_to",
)


def fact_identity(fact: Fact) -> str:
    """A short digest of the fact's content (hex, 32 characters): equal for identical
    facts, different (but for a 128-bit collision) otherwise."""
    content = json.dumps([getattr(fact, name) for name in IDENTITY_FIELDS], ensure_ascii=False)
    return hashlib.sha256(content.encode()).hexdigest()[:32]


def first_of_each(facts: Sequence[Fact]) -> tuple[list[Fact], dict[str, str]]:
    """The batch with each content once (the first copy) and each id once, and the ids
    of the copies left out, each mapped to the id of the copy kept."""
    kept: list[Fact] = []
    by_identity: dict[str, str] = {}
    ids: set[str] = set()
    same: dict[str, str] = {}
    for fact in facts:
        identity = fact_identity(fact)
        first = by_identity.get(identity)
        if first is not None:
            if first != fact.id:
                same[fact.id] = first
            continue
        if fact.id in ids:
            continue  # a repeated id with other content: the first copy is kept
        by_identity[identity] = fact.id
        ids.add(fact.id)
        kept.append(fact)
    return kept, same
