"""A message of the longest size, on both stores: its passages read back whole and in
order, each is embedded by the worker (however the store keeps them: DynamoDB keeps a
long message's passages in pages, with one vector mark a page), a recall finds one by
meaning, and an erasure of a name it holds once takes that passage and leaves the rest."""

from __future__ import annotations

from typing import Any

from taisce.adapters.dynamodb.keys import message_pk
from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.domain.controls import Limits
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.service.memory import Memory
from tests.contract.factories import unique
from tests.contract.passage_recall import recalled_passages

LONGEST = 99_000
FILLER = "The committee went over the budget lines and the minutes of the last meeting. "
NEEDLE = "Siobhan Quill keeps her grandmother's violin in a cedar case under the stairs. "


def long_content() -> str:
    """99,000 characters of filler with one sentence naming Siobhan Quill in the middle."""
    half = FILLER * (LONGEST // (2 * len(FILLER)))
    return (half + NEEDLE + half)[:LONGEST].strip()


def store_long(memory: Memory, project: str) -> tuple[str, str]:
    """A long message and a short one; their ids."""
    request = MessagesRequest.model_validate(
        {
            "messages": [
                {"role": "user", "content": long_content()},
                {"role": "assistant", "content": "Noted, thanks."},
            ]
        }
    )
    long_id, short_id = memory.store_messages(project, request)
    return long_id, short_id


def assert_no_mark_names_her(store: Any, project: str, message_ids: tuple[str, ...]) -> None:
    """Nothing waiting to be embedded holds Siobhan Quill's name, and every passage the
    messages keep still waits (the worker has not run)."""
    pending = store.pending_vectors(project, 10_000)
    assert not any("Siobhan" in v.text or "Quill" in v.text for v in pending)
    kept = {p.id for m in message_ids for p in store.passages_of(project, m)}
    assert {v.id for v in pending if v.kind == "passage"} == kept


def test_a_long_message_reads_back_whole_and_in_order(store: Any) -> None:
    memory = Memory(store, Limits())
    project = unique("long")
    long_id, short_id = store_long(memory, project)
    content = long_content()
    passages = store.passages_of(project, long_id)
    assert len(passages) > 1_000
    assert [p.start for p in passages] == sorted(p.start for p in passages)
    assert all(content[p.start : p.end] == p.quote for p in passages)
    assert "".join(p.quote for p in passages).replace(" ", "") == content.replace(" ", "")
    assert len({p.id for p in passages}) == len(passages)
    assert {(p.message_id, p.role) for p in passages} == {(long_id, "user")}
    # One storing position, after nothing and before the short message's.
    positions = {p.position for p in passages}
    (short,) = store.passages_of(project, short_id)
    assert len(positions) == 1 and None not in positions
    assert short.position is not None and short.position > min(positions)  # type: ignore[operator]
    # Read by id, as a recall reads them: a passage from the middle and the short one.
    middle = passages[len(passages) // 2]
    read = store.passages_by_ids(project, [short.id, middle.id])
    assert [(p.id, p.quote, p.start) for p in read] == [
        (p.id, p.quote, p.start) for p in (short, middle)
    ]


def test_the_worker_takes_every_passage_once_and_clears_the_marks(store: Any) -> None:
    project = unique("long-marks")
    long_id, short_id = store_long(Memory(store, Limits()), project)
    wanted = {p.id for p in store.passages_of(project, long_id)}
    wanted |= {p.id for p in store.passages_of(project, short_id)}
    texts = {p.id: p.quote for m in (long_id, short_id) for p in store.passages_of(project, m)}
    taken: list[str] = []
    for _ in range(len(wanted)):
        pending = store.pending_vectors(project, 10)
        assert {v.kind for v in pending} <= {"passage"}
        if not pending:
            break
        assert all(v.text == texts[v.id] for v in pending)
        taken += [v.id for v in pending]
        store.clear_pending_vectors(project, pending)
    assert sorted(taken) == sorted(wanted)
    assert store.pending_vectors(project, 10) == []


def test_a_passage_of_a_long_message_is_recalled_by_meaning(semantic_memory: Memory) -> None:
    project = unique("long-recall")
    long_id, _ = store_long(semantic_memory, project)
    semantic_memory.index_pending(project)
    assert semantic_memory.store.pending_vectors(project, 10) == []
    found = recalled_passages(
        semantic_memory, project, "Where is the old violin kept?", max_characters=600
    )
    assert any("violin" in p["quote"] and p["message_id"] == long_id for p in found), found


def test_erasing_a_name_a_long_message_holds_once(store: Any) -> None:
    memory = Memory(store, Limits())
    project = unique("long-erase")
    long_id, short_id = store_long(memory, project)
    before = store.passages_of(project, long_id)
    done = memory.erase_now(project, "Siobhan Quill")
    assert done["messages"] == 1
    after = store.passages_of(project, long_id)
    assert not any("Siobhan" in p.quote or "Quill" in p.quote for p in after)
    assert 0 < len(before) - len(after) <= 3
    # Every other passage stays as it was, in its place.
    assert after == [p for p in before if "Siobhan" not in p.quote and "Quill" not in p.quote]
    message = store.message(project, long_id)
    assert "Siobhan" not in message.content and "violin" not in message.content
    assert len(store.passages_of(project, short_id)) == 1
    assert_no_mark_names_her(store, project, (long_id, short_id))
    if isinstance(store, DynamoDbStore):  # no item of the message's partition holds the name
        items = list(
            store.table._query(
                KeyConditionExpression="PK = :pk",
                ExpressionAttributeValues={":pk": {"S": message_pk(project, long_id)}},
            )
        )
        assert items and not any("Siobhan" in str(i) for i in items)


def test_an_erasure_leaves_no_pending_mark_holding_the_name(store: Any) -> None:
    """A short message's passage (one mark each) and the entity's name: what waits to be
    embedded goes with what it is about, before the worker ever runs."""
    memory = Memory(store, Limits())
    project = unique("marks-erase")
    facts = [
        {"subject": "Siobhan Quill", "predicate": "plays", "object": "violin",
         "object_kind": "value", "source_role": "user"},
    ]  # fmt: skip
    memory.store_facts(project, FactsRequest.model_validate({"facts": facts}))
    messages = [
        {"role": "user", "content": "Siobhan Quill tunes the violin. The rain kept on."},
        {"role": "user", "content": "The bus was late again this morning."},
    ]
    named, other = memory.store_messages(
        project, MessagesRequest.model_validate({"messages": messages})
    )
    assert any("Siobhan" in v.text for v in store.pending_vectors(project, 100))
    memory.erase_now(project, "Siobhan Quill")
    assert_no_mark_names_her(store, project, (named, other))


def test_an_erasure_after_a_reindex_leaves_no_mark_holding_the_name(store: Any) -> None:
    """`taisce reindex` marks each passage of a long message by itself: those marks go
    with the passages an erasure drops, as the page's does."""
    memory = Memory(store, Limits())
    project = unique("long-reindex")
    long_id, short_id = store_long(memory, project)
    store.mark_everything(project)
    assert any("Siobhan" in v.text for v in store.pending_vectors(project, 10_000))
    memory.erase_now(project, "Siobhan Quill")
    assert_no_mark_names_her(store, project, (long_id, short_id))
