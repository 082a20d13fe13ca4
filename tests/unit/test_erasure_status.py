"""domain.erasure_status: which record answers an erasure's status, on every store."""

from __future__ import annotations

from taisce.domain.erasure_status import erasure_status
from taisce.domain.model import ErasureStatus, PendingErasure

ID = "era_" + "0" * 32
PENDING = PendingErasure(
    id=ID,
    project="p",
    subject_hash="h",
    names=("atlas",),
    requested_at="2026-12-03T07:00:00Z",
    counts={"facts": 2, "entities": 1, "messages": 0, "passages": 0, "reports": 0},
)
DONE = ErasureStatus(
    ID,
    "done",
    {"facts": 4, "entities": 1, "messages": 3, "passages": 2, "reports": 1},
    "2026-12-03T07:00:00Z",
    "2026-12-03T07:00:01Z",
)


def test_a_pending_erasure_answers_with_the_counts_so_far() -> None:
    assert erasure_status(ID, PENDING, None) == ErasureStatus(
        ID, "pending", PENDING.counts, PENDING.requested_at
    )


def test_the_finished_record_wins_over_a_pending_one_read_beside_it() -> None:
    assert erasure_status(ID, None, DONE) == DONE
    assert erasure_status(ID, PENDING, DONE) == DONE


def test_no_record_is_no_erasure() -> None:
    assert erasure_status(ID, None, None) is None
