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
import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.adapters.sqlite.store import SqliteStore
from taisce.api import bodies
from taisce.api.bodies import fact
from taisce.domain.aliases import MergeRequest
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.errors import TaisceError
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.domain.model import ROLES
from taisce.domain.scope import scope
from taisce.service.memory import Memory
from tests.isolation_memories import NAMES, PROJECTS, TOKEN, actions, memory_of
from tests.moto_server import shared_moto


def held(store: Any, project: str) -> str:
    """Everything a project stores, as one comparable text."""
    facts = sorted(json.dumps(fact(f), sort_keys=True) for f in store.project_facts(project))
    messages = sorted(m.id + m.content for m in store.project_messages(project))
    return json.dumps([facts, messages, sorted(store.project_entities(project))])


def act(memory: Memory, project: str, action: tuple[Any, ...]) -> Any:
    kind = action[0]
    if kind == "recall":
        return bodies.recall(memory.recall(project, RecallRequest.model_validate(action[1])))
    if kind == "facts":
        return bodies.facts(memory.list_facts(project, action[1], 100))["facts"]
    if kind == "aliases":
        return bodies.aliases(memory.alias_page(project, 100, None))
    if kind == "entities":
        return bodies.entity_list(memory.list_entities(project, action[1], 100, None))
    if kind == "messages":
        return bodies.message_list(memory.list_messages(project, action[1], None, 100, None))
    if kind == "neighbourhood":
        return bodies.neighbourhood(memory.neighbourhood(project, action[1], action[2]))
    if kind == "merge":
        try:
            return bodies.merged(
                memory.merge_entities(project, MergeRequest(alias=action[1], into=action[2]))
            )
        except TaisceError as refused:  # an unknown name, a merge into itself: refused
            return {"refused": refused.message}
    return memory.erase_now(project, action[1])


def test_no_answer_holds_another_projects_memory(store: Any) -> None:
    if isinstance(store, DynamoDbStore):
        # Erasure and these checks Scan the whole table: on a table of this test's own
        # they read only its own items, not everything the suite stored before.
        store = shared_moto().table_named("taisce-isolation").store()
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
            if action[0] in ("recall", "facts", "entities", "messages", "neighbourhood"):
                seen_own.append(tokens[index] in answer)
            assert {p: held(store, p) for p in before} == before, f"{action} changed another"

    check()
    # The property is not vacuous: answers did carry their own project's memory.
    assert sum(seen_own) >= max(1, len(seen_own) // 10), (sum(seen_own), len(seen_own))


def test_no_answer_shows_one_users_memory_to_another(store: Any) -> None:
    """Users inside one project: the shared memory (token 0) and two users' (tokens 1
    and 2). A request with a user may hold shared tokens and its own; a request
    without one, shared tokens only; nothing a request does changes another scope,
    nor does erasing a user's whole scope, which leaves that user nothing of their own."""
    if isinstance(store, DynamoDbStore):
        store = shared_moto().table_named("taisce-isolation").store()
    memory = Memory(store, Limits(bundle_characters=16_000, max_rows=200))
    examples = 25 if isinstance(store, SqliteStore) else 3
    seen_other: list[bool] = []

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=st.data(), steps=st.lists(actions, min_size=3, max_size=8))
    def check(data: st.DataObject, steps: list[tuple[int, tuple[Any, ...]]]) -> None:
        run = uuid.uuid4().hex[:8]
        project = f"users-{run}"
        tokens = [f"Tok{run}x{i}q" for i in range(PROJECTS)]
        # The same user ids in every example: only the project tells them apart.
        scopes = [scope(project, None), scope(project, "u1"), scope(project, "u2")]
        for where, token in zip(scopes, tokens, strict=True):
            held_memory = data.draw(memory_of(token))
            memory.store_facts(where, FactsRequest.model_validate({"facts": held_memory["facts"]}))
            if held_memory["messages"]:
                sent = MessagesRequest.model_validate({"messages": held_memory["messages"]})
                memory.store_messages(where, sent)
        for index, action in steps:
            allowed = {tokens[0], tokens[index]}
            before = {str(p): held(store, str(p)) for i, p in enumerate(scopes) if i != index}
            answer = json.dumps(act(memory, scopes[index], action), ensure_ascii=False)
            leaked = set(TOKEN.findall(answer)) - allowed
            assert not leaked, f"{action[0]} as scope {index} answered with {leaked}: {answer}"
            if index and action[0] in ("recall", "facts", "entities", "messages"):
                seen_other.append(tokens[0] in answer and tokens[index] in answer)
            after = {p: held(store, p) for p in before}
            assert after == before, f"{action} as scope {index} changed another scope"
        # A recall naming every name, as user 1: shared and own memory together.
        everything = {"question": " and ".join(NAMES), "source_roles": list(ROLES)}
        answer = json.dumps(act(memory, scopes[1], ("recall", everything)), ensure_ascii=False)
        assert not set(TOKEN.findall(answer)) - {tokens[0], tokens[1]}, answer
        seen_other.append(tokens[0] in answer and tokens[1] in answer)
        # Erasing one user's whole scope leaves the others exactly as they were, and
        # that user's requests see the shared memory alone from then on.
        others = {str(p): held(store, str(p)) for p in (scopes[0], scopes[2])}
        status = memory.erase_user(scopes[1])
        if status.status == "pending":  # DynamoDB: the worker completes it
            status = memory.complete_erasure(project, status.id)  # type: ignore[assignment]
        assert status is not None and status.status == "done"
        assert {p: held(store, p) for p in others} == others
        assert held(store, str(scopes[1])) == held(store, f"empty-{run}")
        answer = json.dumps(act(memory, scopes[1], ("recall", everything)), ensure_ascii=False)
        assert not set(TOKEN.findall(answer)) - {tokens[0]}, answer

    check()
    # Not vacuous: a user's answers did hold shared and own memory together.
    assert any(seen_other), seen_other
