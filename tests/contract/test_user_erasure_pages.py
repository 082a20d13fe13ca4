"""A user's erasure on DynamoDB, a page at a time: stopped for time between pages, it
resumes where it stood (the cursor saved with each page's counts), counts each record
once, and leaves the shared memory and other users as they were. From the moment it is
accepted, the user's own requests see only the shared memory (on both stores)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from typing import Any

import pytest

from taisce.adapters.dynamodb import scope_erasure
from taisce.adapters.dynamodb.keys import identity_key
from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.api import bodies
from taisce.domain.aliases import MergeRequest
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.errors import ErasurePending, NotFound
from taisce.domain.fact_identity import fact_identity
from taisce.domain.ingest import FactsRequest, MessagesRequest, make_message, split_passages
from taisce.domain.scope import scope
from taisce.service.memory import Memory
from taisce.service.work import one_pass
from tests.contract.factories import unique


def _facts(n: int, subject: str) -> FactsRequest:
    given = [
        {"subject": subject, "predicate": "likes", "object": f"thing {i}", "source_role": "user"}
        for i in range(n)
    ]
    return FactsRequest.model_validate({"facts": given})


def test_a_users_erasure_resumes_page_by_page(
    dynamo: DynamoDbStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scope_erasure, "PAGE", 2)
    memory = Memory(dynamo, Limits())
    project = unique("user-erasure")
    alice, bob = scope(project, "alice"), scope(project, "bob")
    memory.store_facts(project, _facts(2, "Acme"))
    memory.store_facts(alice, _facts(5, "Mom"))
    # Her move closes where she lived: that fact's content marker is left unnamed by its
    # claim (stale), and must go too.
    for town in ("Cork", "Galway"):
        moved = {"subject": "Alice", "predicate": "lives in", "object": town, "source_role": "user"}
        memory.store_facts(alice, FactsRequest.model_validate({"facts": [moved]}))
    lived = dynamo.facts_with_subject(str(alice), "alice")
    assert [f.valid_to is not None for f in lived] == [True, False]
    markers = [identity_key(str(alice), fact_identity(replace(f, valid_to=None))) for f in lived]
    memory.store_facts(bob, _facts(1, "Mom"))
    sent = [{"id": f"m{i}", "role": "user", "content": f"Note {i}."} for i in range(3)]
    memory.store_messages(alice, MessagesRequest.model_validate({"messages": sent}))
    # The worker's reports of each partition (it works one at a time, by its name).
    built = {p: memory.rebuild_reports(str(p)) for p in (project, alice, bob)}
    assert all(built.values()), built
    status = memory.erase_user(alice)
    assert status.status == "pending"
    # Two pages a call, then out of time: three calls leave it pending, with counts.
    pages = iter(range(1_000))

    def seconds_left() -> Any:
        return 1_000.0 if next(pages) % 3 else 0.0

    statuses = []
    for _ in range(20):
        done = memory.complete_erasure(project, status.id, seconds_left)
        assert done is not None
        statuses.append(done.status)
        if done.status == "done":
            break
    assert statuses[0] == "pending" and statuses[-1] == "done", statuses
    assert done.counts == {
        "facts": 7,
        "entities": 9,
        "messages": 3,
        "passages": 3,
        "reports": built[alice],
    }
    assert dynamo.erasure_status(alice, status.id) == done
    assert list(dynamo.facts_with_subject(alice, "mom")) == []
    assert len(dynamo.facts_with_subject(bob, "mom")) == 1
    assert len(dynamo.facts_with_subject(alice, "acme")) == 2
    assert dynamo.message_page(alice, None, 10, None, None) == []
    assert dynamo.reports_of_entity(alice, "mom", ["user"]) == []
    assert [dynamo.table._get(k) for k in markers] == [None, None]
    assert dynamo.reports_of_entity(str(bob), "mom", ["user"]) != []


def dynamo_marks(store: Any, partition: str) -> list[Any]:
    """The entities of the partition marked for the worker's report rebuild."""
    return list(store.dirty_entities(partition))


def _seen(memory: Memory, partition: str, message_id: str) -> dict[str, Any]:
    """Every read route's answer to a request in `partition`."""
    question = RecallRequest.model_validate({"question": "What about Mom and Acme?", "hops": 2})
    try:
        message = bodies.message_with_passages(memory.message_with_passages(partition, message_id))
    except NotFound:
        message = None
    return {
        # Without a model a recall's steps are its facts (reports and passages degraded).
        "recall": bodies.recall(memory.recall(partition, question)),
        "facts": {s: bodies.facts(memory.list_facts(partition, s)) for s in ("Mom", "Ma")},
        "entities": bodies.entity_list(memory.list_entities(partition, None, 100, None)),
        "messages": bodies.message_list(memory.list_messages(partition, None, None, 100, None)),
        "message": message,
        "neighbourhood": bodies.neighbourhood(memory.neighbourhood(partition, "Acme", 2)),
        "aliases": bodies.aliases(memory.alias_page(partition, 100, None)),
    }


def test_a_user_being_erased_sees_only_the_shared_memory(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scope_erasure, "PAGE", 2)
    memory = Memory(store, Limits())
    project = unique("user-pending")
    alice = scope(project, "alice")
    memory.store_facts(project, _facts(2, "Acme"))
    mom = {"subject": "Mom", "predicate": "works at", "object": "Acme", "source_role": "user"}
    memory.store_facts(alice, FactsRequest.model_validate({"facts": [mom]}))
    memory.store_facts(alice, _facts(4, "Mom"))
    memory.merge_entities(alice, MergeRequest(alias="Ma", into="Mom"))
    sent = [{"id": f"m{i}", "role": "user", "content": f"Mom rang Acme {i}."} for i in range(3)]
    memory.store_messages(alice, MessagesRequest.model_validate({"messages": sent}))
    shared = _seen(memory, project, "m0")
    before = _seen(memory, alice, "m0")
    # Not vacuous: each route shows something of hers before.
    assert [k for k in shared if before[k] == shared[k]] == []
    checked = datetime.now(UTC)
    status = memory.erase_user(alice)
    if status.status == "pending":  # DynamoDB: held, two pages, then out of time
        left = iter([1_000.0] * 3)
        stopped = memory.complete_erasure(project, status.id, lambda: next(left, 0.0))
        assert stopped is not None and stopped.status == "pending"
        assert sum(stopped.counts.values()) > 0
        assert _seen(memory, alice, "m0") == shared
        # Her writes meanwhile are refused, not taken by the erasure after a 200 (nor
        # left behind its cursor): nothing of them is stored. So is a name's erasure (or
        # its preview) in her memory: its record would go with hers.
        again = [{"id": "m9", "role": "user", "content": "Mom rang again."}]
        writes = [
            partial(memory.store_facts, alice, _facts(1, "Mom")),
            partial(
                memory.store_messages, alice, MessagesRequest.model_validate({"messages": again})
            ),
            partial(memory.merge_entities, alice, MergeRequest(alias="Mum", into="Mom")),
            partial(memory.request_erasure, alice, "Mom"),
            partial(memory.preview_erasure, alice, "Mom"),
        ]
        for write in writes:
            with pytest.raises(ErasurePending):
                write()
        assert _seen(memory, alice, "m0") == shared
        # The worker leaves her partition's work (its reports to build) to the erasure:
        # what it wrote behind the erasure's cursor would outlive it.
        assert dynamo_marks(store, str(alice))
        passed = one_pass(memory, str(alice), best_effort=True).counts()
        assert sum(passed.values()) == 0, passed
        done = memory.complete_erasure(project, status.id, lambda: 1_000.0)
        assert done is not None and done.status == "done"
        # A write that found no erasure pending (checked before it was accepted) and
        # lands after its tombstone is refused by the tombstone, checked in the write.
        late = Memory(store, Limits(), clock=lambda: checked)
        with pytest.raises(ErasurePending):
            late.store_facts(alice, _facts(1, "Late"))
    assert _seen(memory, alice, "m0") == shared
    # Once it is done she starts again from the shared memory: what she stores is hers,
    # and nothing erased comes back with it.
    memory.store_facts(alice, _facts(1, "Mom"))
    fresh = _seen(memory, alice, "m0")
    assert [f["object"] for f in fresh["facts"]["Mom"]["facts"]] == ["thing 0"]
    assert fresh["facts"]["Ma"] == shared["facts"]["Ma"]
    assert fresh["messages"] == shared["messages"]


@pytest.mark.parametrize("late_writes", [0.0, 5.0])
def test_a_message_landing_after_the_first_scan_goes_with_the_second(
    dynamo: DynamoDbStore, monkeypatch: pytest.MonkeyPatch, late_writes: float
) -> None:
    # A message write checks for the user's pending erasure, then writes (messages
    # carry no tombstone check in the write itself): one that checked just before the
    # erasure was accepted lands whenever it lands, possibly behind the first scan.
    now = [datetime.now(UTC).timestamp()]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    memory = Memory(
        dynamo,
        Limits(),
        clock=lambda: datetime.fromtimestamp(now[0], UTC),
        late_writes=late_writes,
        sleep=sleep,
    )
    project = unique("user-late")
    alice = scope(project, "alice")
    sent = [{"id": "m0", "role": "user", "content": "Mom rang."}]
    memory.store_messages(alice, MessagesRequest.model_validate({"messages": sent}))
    status = memory.erase_user(alice)
    late_message = MessagesRequest.model_validate(
        {"messages": [{"id": "late", "role": "user", "content": "Mom rang again."}]}
    ).messages
    written = make_message(late_message[0], "2026-01-01T00:00:00Z")
    scanned = dynamo.erase_scope_page
    landed: list[str] = []

    def erase_scope_page(partition: str, cursor: str | None) -> Any:
        done, after = scanned(partition, cursor)
        if after is None and not landed:  # the first scan's last page
            dynamo.put_messages(str(alice), [written], split_passages(written))
            landed.append(written.id)
        return done, after

    monkeypatch.setattr(dynamo, "erase_scope_page", erase_scope_page)
    done = memory.complete_erasure(project, status.id, lambda: 1_000.0)
    assert done is not None and done.status == "done" and landed == ["late"]
    left = dynamo.message_page(alice, None, 10, None, None)
    if late_writes:
        # The second scan began once no write that checked before could still land.
        assert left == [] and done.counts["messages"] == 2
        assert sum(slept) == pytest.approx(late_writes)
    else:
        assert [m.id for m in left] == ["late"] and slept == []


def test_the_local_worker_does_not_wait_for_the_second_scan(dynamo: DynamoDbStore) -> None:
    # Its one thread serves every project: a pass with no time bound stops before the
    # second scan while a late write could still land, and a later pass does it.
    now = [datetime.now(UTC).timestamp()]

    def sleep(seconds: float) -> None:
        raise AssertionError("the local worker's pass must not sleep")

    clock = lambda: datetime.fromtimestamp(now[0], UTC)  # noqa: E731
    memory = Memory(dynamo, Limits(), clock=clock, late_writes=5.0, sleep=sleep)
    project = unique("user-late-local")
    alice = scope(project, "alice")
    sent = [{"id": "m0", "role": "user", "content": "Mom rang."}]
    memory.store_messages(alice, MessagesRequest.model_validate({"messages": sent}))
    status = memory.erase_user(alice)
    first = memory.complete_erasure(project, status.id)
    assert first is not None and first.status == "pending" and first.counts["messages"] == 1
    assert dynamo.message_page(alice, None, 10, None, None) == []
    now[0] += 5.0
    done = memory.complete_erasure(project, status.id)
    assert done is not None and done.status == "done" and done.counts["messages"] == 1
