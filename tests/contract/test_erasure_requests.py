"""Erasure requests on every Store (the embedded one and DynamoDB on moto's server):
accepted and pending, hidden from recall while pending, completed in bounded steps that
a retry resumes, finished once (one audit record), and the status read back."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from taisce.api import bodies
from taisce.domain import erasure
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.errors import NotFound
from taisce.domain.model import PendingErasure, zero_counts
from taisce.domain.names import candidate_spans
from taisce.domain.words import _words
from taisce.service.memory import Memory
from taisce.service.work import complete_erasures
from tests.contract.factories import fact, message, unique, with_passages

ALL_ROLES = ["user", "assistant", "system", "tool"]
QUESTIONS = ["Atlas", "Who does Atlas know?", "Who is in Galway?"]


@pytest.fixture
def project() -> str:
    return unique("req")


@pytest.fixture
def memory(store: Any) -> Memory:
    return Memory(store, Limits(bundle_characters=16_000, max_rows=200))


def names_atlas(text: object) -> bool:
    return isinstance(text, str) and any(s.key == "atlas" for s in candidate_spans(text))


def recalled_texts(memory: Memory, project: str, question: str) -> list[str]:
    request = RecallRequest.model_validate(
        {"question": question, "hops": 2, "source_roles": ALL_ROLES}
    )
    answer = bodies.recall(memory.recall(project, request))
    texts: list[str] = []
    for f in answer["facts"]:
        texts += [f[k] for k in ("subject", "object", "statement", "quote", "context") if f.get(k)]
    for p in answer["passages"]:
        texts += [p["quote"], p.get("source") or ""]
    for r in answer["reports"]:
        texts += [r["title"], r["summary"]]
    return texts


def seed(store: Any, project: str, facts: int = 6, lines: int = 8) -> None:
    held = [fact("Atlas", "knows", f"Person {n}", role=ALL_ROLES[n % 4]) for n in range(facts)]
    held += [
        fact("Maya Okafor", "lives in", "Galway"),
        fact("Acme Corp", "is based in", "Dublin", role="tool"),
    ]
    store.put_facts(project, held)
    ms = [
        message(f"Atlas met person {n} in Galway.\nMaya likes tea number {n}.")
        for n in range(lines)
    ]
    messages, passages = with_passages(*ms, limit=30)
    store.put_messages(project, messages, passages)


def test_a_deferred_erasure_is_pending_hidden_then_done_once(
    store: Any, memory: Memory, project: str
) -> None:
    seed(store, project)
    assert any(names_atlas(t) for q in QUESTIONS for t in recalled_texts(memory, project, q))

    accepted = memory.request_erasure(project, "ATLAS", defer=True)
    assert accepted.status == "pending" and erasure.ERASURE_ID.fullmatch(accepted.id)
    assert accepted.counts == zero_counts()
    status = memory.erasure_status(project, accepted.id)
    assert status.status == "pending" and status.finished_at is None
    # Nothing was erased yet, but recall hides it already; the rest still answers.
    assert len(list(store.project_facts(project))) == 8
    for question in QUESTIONS:
        assert not [t for t in recalled_texts(memory, project, question) if names_atlas(t)]
    assert "Galway" in " ".join(recalled_texts(memory, project, "Who is in Galway?"))
    assert [p.id for p in store.pending_erasures(project)] == [accepted.id]
    assert project in store.erasing_projects()

    done = memory.complete_erasure(project, accepted.id)
    assert done is not None and done.status == "done" and done.finished_at
    assert done.counts["facts"] == 6 and done.counts["messages"] == 8
    assert memory.erasure_status(project, accepted.id) == done
    assert store.pending_erasures(project) == [] and project not in store.erasing_projects()
    # A duplicate (a message delivered twice, a retry after a lost answer) changes
    # nothing and writes no second audit record.
    assert memory.complete_erasure(project, accepted.id) == done
    records = [r for r in store.erasures(project) if r.id == accepted.id]
    assert len(records) == 1 and records[0].counts() == done.counts
    assert "atlas" not in repr(records[0]).lower()
    assert not [t for q in QUESTIONS for t in recalled_texts(memory, project, q) if names_atlas(t)]


def _reads(memory: Memory, project: str) -> dict[str, Any]:
    """What a user can read besides recall: listings, a subject's facts, a message,
    neighbourhoods."""
    listed = bodies.message_list(
        memory.list_messages(project, None, None, 100, None, passages=True)
    )
    first = listed["messages"][-1]["id"]  # type: ignore[index]
    return {
        "messages": listed,
        "message": bodies.message_with_passages(memory.message_with_passages(project, first)),
        "subject": bodies.facts(memory.list_facts(project, "Atlas", 100))["facts"],
        "near atlas": bodies.neighbourhood(memory.neighbourhood(project, "Atlas", 2)),
        "near maya": bodies.neighbourhood(memory.neighbourhood(project, "Maya Okafor", 2)),
    }


def test_reads_show_what_a_pending_erasure_will_leave(
    store: Any, memory: Memory, project: str
) -> None:
    seed(store, project, facts=4, lines=3)
    # A link between two entities that stay counts for both in the listing.
    store.put_facts(
        project,
        [fact("Maya Okafor", "works with", "Atlas"), fact("Maya Okafor", "mentors", "Ben Ode")],
    )
    before = _reads(memory, project)
    assert "Atlas" in repr(before) and "atlas" in repr(
        bodies.entity_list(memory.list_entities(project, None, 100, None))
    )
    accepted = memory.request_erasure(project, "Atlas", defer=True)
    # Pending: nothing was erased yet, and nothing about Atlas is shown.
    assert len([f for f in store.project_facts(project) if f.subject_key == "atlas"]) == 4
    pending = _reads(memory, project)
    # (The neighbourhood asked of Atlas names its centre: the name the caller gave.)
    assert "atlas" not in repr({k: v for k, v in pending.items() if k != "near atlas"}).lower()
    assert pending["subject"] == [] and pending["near atlas"]["edges"] == []
    assert [e["predicate"] for e in pending["near maya"]["edges"]] == ["lives in", "mentors"]
    # The messages keep their ids and lengths, masked where they named it.
    assert [m["id"] for m in pending["messages"]["messages"]] == [
        m["id"] for m in before["messages"]["messages"]
    ]
    content = pending["message"]["message"]["content"]
    assert erasure.MASK in content and "Maya likes tea" in content
    entities = bodies.entity_list(memory.list_entities(project, None, 100, None))
    assert "atlas" not in [e["key"] for e in entities["entities"]]  # type: ignore[union-attr]
    # Done: what was shown while pending is what the erasure left, the entities' counts
    # too (Maya's link to Atlas goes with Atlas).
    done = memory.complete_erasure(project, accepted.id)
    assert done is not None and done.status == "done"
    assert _reads(memory, project) == pending
    assert bodies.entity_list(memory.list_entities(project, None, 100, None)) == entities


def test_steps_stop_for_time_and_a_retry_resumes_without_losing_counts(
    store: Any, memory: Memory, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if store.capabilities.defers_erasure:
        pytest.skip("plans a page at a time: tests/contract/test_erasure_pages.py")
    monkeypatch.setattr(erasure, "STEP_FACTS", 2)
    monkeypatch.setattr(erasure, "STEP_MESSAGES", 3)
    seed(store, project, facts=7, lines=8)
    accepted = memory.request_erasure(project, "Atlas", defer=True)

    # Time for two steps, then none: the erasure stays pending with what was done.
    # (The first look sets how long the erasure is held.)
    clock = iter([1000.0, 1000.0, 1000.0] + [0.0] * 100)
    partial = memory.complete_erasure(project, accepted.id, lambda: next(clock))
    assert partial is not None and partial.status == "pending"
    assert partial.counts["facts"] == 4 and partial.counts["entities"] == 1
    assert memory.erasure_status(project, accepted.id).counts == partial.counts
    assert len([f for f in store.project_facts(project) if f.subject_key == "atlas"]) == 3
    assert store.erasures(project) == []

    # The retry (the next message) plans again from what is held: nothing is counted
    # twice, nothing comes back, the audit record is written once.
    done = memory.complete_erasure(project, accepted.id)
    assert done is not None and done.status == "done"
    assert done.counts["facts"] == 7 and done.counts["entities"] == 1
    assert done.counts["messages"] == 8
    assert [f.subject_key for f in store.project_facts(project)] != []
    assert not [f for f in store.project_facts(project) if f.subject_key == "atlas"]
    assert [r.counts() for r in store.erasures(project)] == [done.counts]


def test_one_holder_at_a_time_and_a_dead_holder_is_taken_over(store: Any, project: str) -> None:
    # The local worker polls while a request completes its own erasure, and on AWS a
    # duplicate message can meet the sweep: two holders side by side once lost the
    # counts of one (the audit record said 0 facts for an erasure of 180).
    now = [1_000_000.0]
    memory = Memory(
        store,
        Limits(bundle_characters=16_000, max_rows=200),
        clock=lambda: datetime.fromtimestamp(now[0], UTC),
    )
    seed(store, project, facts=4, lines=2)
    accepted = memory.request_erasure(project, "Atlas", defer=True)
    assert store.claim_erasure(project, accepted.id, "request_a", now[0], now[0] + 60)
    assert store.pending_erasure(project, accepted.id).holder == "request_a"
    # Another holder is refused and changes nothing; the holder itself may go on.
    with pytest.raises(erasure.ErasureHeld):
        memory.complete_erasure(project, accepted.id)
    assert store.pending_erasure(project, accepted.id).holder == "request_a"
    assert len([f for f in store.project_facts(project) if f.subject_key == "atlas"]) == 4
    assert not store.claim_erasure(project, accepted.id, "worker_b", now[0] + 59, now[0] + 99)
    assert store.claim_erasure(project, accepted.id, "request_a", now[0], now[0] + 60)
    # The worker's pass leaves it to its holder and goes on.
    assert complete_erasures(memory, project) == (0, False)
    # Once the holder's time has ended (it died), the next holder takes it over.
    now[0] += 61
    done = memory.complete_erasure(project, accepted.id)
    assert done is not None and done.status == "done" and done.counts["facts"] == 4
    # Claims on a finished or unknown erasure change nothing.
    assert not store.claim_erasure(project, accepted.id, "worker_c", now[0], now[0] + 60)
    assert not store.claim_erasure(project, "era_" + "0" * 32, "worker_c", now[0], now[0] + 60)


def test_a_holder_that_fails_lets_go_and_the_retry_finishes(
    store: Any, memory: Memory, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(store, project, facts=3, lines=2)
    accepted = memory.request_erasure(project, "Atlas", defer=True)
    erase = store.erase

    def fail(*_: Any) -> None:
        raise RuntimeError("the store failed mid-step")

    monkeypatch.setattr(store, "erase", fail)
    with pytest.raises(RuntimeError):
        memory.complete_erasure(project, accepted.id)
    # Still pending, and not held: the next pass need not wait out the hold.
    monkeypatch.setattr(store, "erase", erase)
    done = memory.complete_erasure(project, accepted.id)
    assert done is not None and done.status == "done" and done.counts["facts"] == 3


def test_a_synchronous_erasure_is_held_by_its_request_from_the_start(
    store: Any, memory: Memory, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(store, project, facts=3, lines=2)
    seen: list[PendingErasure] = []
    begin = store.begin_erasure

    def begin_and_look(pending: PendingErasure) -> None:
        begin(pending)
        seen.append(store.pending_erasure(pending.project, pending.id))
        # A worker polling at this moment is refused.
        with pytest.raises(erasure.ErasureHeld):
            memory.complete_erasure(pending.project, pending.id)

    monkeypatch.setattr(store, "begin_erasure", begin_and_look)
    status = memory.request_erasure(project, "Atlas", defer=False)
    assert seen[0].holder is not None and seen[0].holder.startswith("request_")
    assert status.status == "done" and status.counts["facts"] == 3


def test_a_synchronous_erasure_is_done_in_the_call(
    store: Any, memory: Memory, project: str
) -> None:
    seed(store, project, facts=3, lines=2)
    # A recall keeps the words of the texts it compared (domain/words.py); the erasure
    # leaves none of them in this process.
    assert any(names_atlas(t) for t in recalled_texts(memory, project, "Who does Atlas know?"))
    assert _words.cache_info().currsize > 0
    status = memory.request_erasure(project, "Atlas", defer=False)
    assert _words.cache_info().currsize == 0
    assert status.status == "done" and status.counts["facts"] == 3
    assert memory.erasure_status(project, status.id) == status
    assert store.pending_erasures(project) == []


@pytest.mark.parametrize("erasure_id", ["era_" + "0" * 32, "nope", "", "era_" + "x" * 32])
def test_an_unknown_erasure_is_not_found(memory: Memory, project: str, erasure_id: str) -> None:
    with pytest.raises(NotFound):
        memory.erasure_status(project, erasure_id)


def test_an_erasure_is_read_only_in_its_own_project(
    store: Any, memory: Memory, project: str
) -> None:
    status = memory.request_erasure(project, "Nobody", defer=True)
    with pytest.raises(NotFound):
        memory.erasure_status(unique("other"), status.id)
    assert memory.complete_erasure(unique("other"), status.id) is None
    assert memory.erasure_status(project, status.id).status == "pending"
