"""Random memories for the isolation properties (tests/contract/test_isolation_property.py
and tests/integration/test_isolation_http.py): each project's ids and texts carry its
token, names are shared across projects on purpose."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import strategies as st

from taisce.domain.model import ROLES

PROJECTS = 3
TOKEN = re.compile(r"Tok[0-9a-f]{8}x[0-9]q")
NAMES = ["Atlas", "Atlas Corp", "Maya Okafor", "Acme", "Zoë", "Straße", "São Paulo", "AT&T"]
WORDS = ["met", "likes", "the", "in", "Dublin", "yesterday", "and", "café"]
PREDICATES = ["works at", "knows", "lives in", "likes"]
DATES = ["2001-05-01T00:00:00Z", "2020-01-01T00:00:00Z", "2099-12-31T00:00:00Z"]

names = st.sampled_from(NAMES)
roles = st.sampled_from(ROLES)


@st.composite
def sentence(draw: st.DrawFn, token: str) -> str:
    words = draw(st.lists(st.one_of(st.sampled_from(WORDS), names), min_size=1, max_size=6))
    # The token is in every sentence, so every passage of a message carries it.
    return " ".join([*words, token]) + draw(st.sampled_from([".", "!", "?"]))


@st.composite
def fact(draw: st.DrawFn, token: str, n: int) -> dict[str, Any]:
    kind = draw(st.sampled_from(["entity", "entity", "value"]))
    given: dict[str, Any] = {
        "id": f"{token}-f{n}",
        "subject": draw(names),
        "predicate": draw(st.sampled_from(PREDICATES)),
        "object": draw(names) if kind == "entity" else draw(sentence(token)),
        "object_kind": kind,
        "source_role": draw(roles),
    }
    for field in ("statement", "quote", "context"):
        if draw(st.booleans()):
            given[field] = draw(sentence(token))
    if draw(st.booleans()):
        start, end = sorted(draw(st.lists(st.sampled_from(DATES), min_size=2, max_size=2)))
        given["valid_from"] = start
        if draw(st.booleans()):
            given["valid_to"] = end
    return given


@st.composite
def memory_of(draw: st.DrawFn, token: str) -> dict[str, Any]:
    facts = [draw(fact(token, n)) for n in range(draw(st.integers(1, 6)))]
    messages = []
    for n in range(draw(st.integers(0, 3))):
        text = " ".join(draw(st.lists(sentence(token), min_size=1, max_size=4)))
        message = {"id": f"{token}-m{n}", "role": draw(roles), "content": text}
        if draw(st.booleans()):
            message["source"] = f"chat:{token}"
        if draw(st.booleans()):
            message["occurred_at"] = draw(st.sampled_from(DATES))
        messages.append(message)
    return {"facts": facts, "messages": messages}


recall_controls = st.fixed_dictionaries(
    {
        "question": st.lists(names, min_size=1, max_size=3).map(" and ".join),
    },
    optional={
        "source_roles": st.lists(roles, min_size=1, max_size=4, unique=True),
        "hops": st.integers(-1, 3),
        "surfaces": st.permutations(["facts", "reports", "passages"]).flatmap(
            lambda s: st.integers(1, 3).map(lambda n: s[:n])
        ),
        "themes": st.booleans(),
        "max_characters": st.integers(1, 16_000),
        "max_rows": st.integers(1, 200),
        "subjects": st.lists(names, min_size=1, max_size=3, unique=True),
        "as_of": st.sampled_from(DATES),
        "recorded_after": st.just("2000-01-01T00:00:00Z"),
        "recorded_before": st.just("2999-01-01T00:00:00Z"),
    },
)

# What a project does: ("recall", controls) | ("facts", name) | ("aliases",) |
# ("merge", alias, into) | ("erase", name) | the explorer's listings: ("entities",
# search or None) | ("messages", role or None) | ("neighbourhood", name, hops); each in
# a random project.
actions = st.tuples(
    st.integers(0, PROJECTS - 1),
    st.one_of(
        st.tuples(st.just("recall"), recall_controls),
        st.tuples(st.just("facts"), names),
        st.tuples(st.just("aliases")),
        st.tuples(st.just("merge"), names, names),
        st.tuples(st.just("erase"), names),
        st.tuples(st.just("entities"), st.none() | names),
        st.tuples(st.just("messages"), st.none() | st.sampled_from(["user", "tool"])),
        st.tuples(st.just("neighbourhood"), names, st.integers(1, 2)),
    ),
)
