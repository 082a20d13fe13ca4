"""domain.message_batch: which parts of a message batch both stores write."""

from __future__ import annotations

from taisce.domain.message_batch import batch_to_store, passages_by_message
from tests.contract.factories import message, with_passages


def test_the_first_copy_of_each_message_with_the_passages_of_its_text() -> None:
    first = message("First. Short.", id="m")
    again = message("Second, and quite a lot longer. " * 20, id="m")
    other = message("Other words.", id="o")
    messages, passages = with_passages(first, other, again, limit=10)
    batch = batch_to_store(messages, passages)
    assert [(m.id, m.content) for m in batch.messages] == [
        ("m", first.content),
        ("o", other.content),
    ]
    _, mine = with_passages(first, limit=10)
    _, theirs = with_passages(other, limit=10)
    assert batch.passages == [*mine, *theirs]
    assert passages_by_message(batch) == {"m": mine, "o": theirs}


def test_each_passage_id_once_in_the_batch_and_one_passage_per_place() -> None:
    m = message("One. Two.", id="m")
    n = message("One. Two.", id="n")
    _, (one, two) = with_passages(m, limit=4)
    same_place = two._replace(id="m#9")
    # An id already taken in the batch, though under another message with the text.
    borrowed = one._replace(message_id="n")
    batch = batch_to_store([m, n], [two, one, same_place, borrowed])
    assert batch == ([m, n], [two, one])
    assert passages_by_message(batch) == {"m": [two, one], "n": []}


def test_passages_of_no_message_in_the_batch_are_left_out() -> None:
    m = message("Kept.", id="m")
    _, stray = with_passages(message("Stray.", id="x"))
    assert batch_to_store([m], stray) == ([m], [])
