"""How a conversation is kept as messages, without a framework or a server: ids that
sort in the order written, structured turns marked in their id, and reading back in
the order recorded even where the listing's text order is not."""

from __future__ import annotations

from taisce_client.integrations.transcript import Turn, _oldest_first, new_messages
from taisce_client.models import StoredMessage


def test_ids_sort_in_the_order_written_and_mark_structured_turns() -> None:
    turns = [Turn("user", f"turn {i}") for i in range(12)] + [Turn.of_record("tool", {"a": 1})]
    messages = new_messages("lc", "s", turns)
    ids = [m.id or "" for m in messages]
    assert sorted(ids) == ids
    assert all(len(i) <= 128 for i in ids)
    assert ids[0].endswith(".t") and ids[-1].endswith(".j")
    assert {m.source for m in messages} == {"s"}
    # Keyed ids are the same each time (a node run twice stores once).
    keyed = new_messages("lg", "s", turns[:2], keys=["k0", "k1"])
    assert [m.id for m in keyed] == ["lg.00000.k0.t", "lg.00001.k1.t"]
    assert new_messages("lg", "s", turns[:2], keys=["k0", "k1"]) == keyed


def test_reading_back_orders_by_the_moment_recorded() -> None:
    # A time on a whole second has no fraction, and sorts after later times as text.
    newest_first = [
        {
            "id": "b",
            "role": "assistant",
            "content": "second",
            "recorded_at": "2026-12-04T10:00:07Z",
        },
        {"id": "a", "role": "user", "content": "first", "recorded_at": "2026-12-04T10:00:06.9Z"},
        {"id": "c", "role": "user", "content": "third", "recorded_at": "2026-12-04T10:00:07.25Z"},
    ]
    stored = [StoredMessage.from_wire(m) for m in newest_first]
    assert [t.content for t in _oldest_first(stored)] == ["first", "second", "third"]
    structured = {
        "id": "x.j",
        "role": "tool",
        "content": '{"a": 1}',
        "recorded_at": "2026-12-04T10:00:08Z",
    }
    (turn,) = _oldest_first([StoredMessage.from_wire(structured)], ("x",))
    assert turn.structured and turn.record() == {"a": 1}
    # Another writer's message in the same source reads back as text, whatever its id.
    (other,) = _oldest_first([StoredMessage.from_wire(structured)], ("lc", "lg"))
    assert not other.structured and other.content == '{"a": 1}'
