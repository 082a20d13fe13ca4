"""Property: nothing of one project ever appears in another project's answers.

Three projects hold random facts and messages about the same names (on purpose), with
ids and texts that each carry their project's token. Random recalls with every control
(roles, hops, surfaces, themes, budgets, and the filters subjects, as_of,
recorded_after, recorded_before), listings of facts and aliases, merges and erasures
run in random projects; no answer may hold another project's token, and what one
project does (merge, erase) leaves the others' stored memory exactly as it was.
On every Store, embeddings off.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taisce.adapters.sqlite_store import SqliteStore
from taisce.domain.aliases import MergeRequest
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.errors import TaisceError
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.domain.memory import Memory
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
# ("merge", alias, into) | ("erase", name); each in a random project.
actions = st.tuples(
    st.integers(0, PROJECTS - 1),
    st.one_of(
        st.tuples(st.just("recall"), recall_controls),
        st.tuples(st.just("facts"), names),
        st.tuples(st.just("aliases")),
        st.tuples(st.just("merge"), names, names),
        st.tuples(st.just("erase"), names),
    ),
)


def held(store: Any, project: str) -> str:
    """Everything a project stores, as one comparable text."""
    facts = sorted(json.dumps(f.wire(), sort_keys=True) for f in store.project_facts(project))
    messages = sorted(m.id + m.content for m in store.project_messages(project))
    return json.dumps([facts, messages, sorted(store.project_entities(project))])


def act(memory: Memory, project: str, action: tuple[Any, ...]) -> Any:
    kind = action[0]
    if kind == "recall":
        return memory.recall(project, RecallRequest.model_validate(action[1]))
    if kind == "facts":
        return memory.facts_about_subject(project, action[1])
    if kind == "aliases":
        return memory.aliases(project)
    if kind == "merge":
        try:
            return memory.merge_entities(project, MergeRequest(alias=action[1], into=action[2]))
        except TaisceError as refused:  # an unknown name, a merge into itself: refused
            return {"refused": refused.message}
    return memory.erase(project, action[1])


def test_no_answer_holds_another_projects_memory(store: Any) -> None:
    memory = Memory(store, Limits(bundle_characters=16_000, max_rows=200))
    examples = 150 if isinstance(store, SqliteStore) else 5
    seen_own: list[bool] = []

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=st.data(), steps=st.lists(actions, min_size=3, max_size=10))
    def check(data: st.DataObject, steps: list[tuple[int, tuple[Any, ...]]]) -> None:
        run = uuid.uuid4().hex[:8]
        # Tokens are words of their own (no name contains another's token).
        tokens = [f"Tok{run}x{i}q" for i in range(PROJECTS)]
        projects = [f"iso-{run}-{i}" for i in range(PROJECTS)]
        for project, token in zip(projects, tokens, strict=True):
            held_memory = data.draw(memory_of(token))
            given = FactsRequest.model_validate({"facts": held_memory["facts"]})
            memory.store_facts(project, given)
            if held_memory["messages"]:
                sent = MessagesRequest.model_validate({"messages": held_memory["messages"]})
                memory.store_messages(project, sent)
        for index, action in steps:
            before = {p: held(store, p) for i, p in enumerate(projects) if i != index}
            answer = json.dumps(act(memory, projects[index], action), ensure_ascii=False)
            # Any project's token, this example's or an earlier one's, but its own.
            leaked = set(TOKEN.findall(answer)) - {tokens[index]}
            assert not leaked, f"{action[0]} in project {index} answered with {leaked}: {answer}"
            if action[0] in ("recall", "facts"):
                seen_own.append(tokens[index] in answer)
            assert {p: held(store, p) for p in before} == before, f"{action} changed another"

    check()
    # The property is not vacuous: answers did carry their own project's memory.
    assert sum(seen_own) >= max(1, len(seen_own) // 10), (sum(seen_own), len(seen_own))
