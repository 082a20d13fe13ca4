"""Which record answers GET /v1/erasures/{id}, the rule both stores follow.

An erasure has a pending record until it finishes, then a finished one (a store
writes the one and removes the other at once). A store reads both; when it finds
both, the finished one answers: done is final, and a pending record seen beside it
is a read that saw it before its removal. A store that reads one after the other
reads the pending record first, so that a finish between the reads is seen as done,
never as no erasure at all.
"""

from __future__ import annotations

from .model import ErasureStatus, PendingErasure


def erasure_status(
    erasure_id: str, pending: PendingErasure | None, finished: ErasureStatus | None
) -> ErasureStatus | None:
    """The status to answer from what the store read; None for an id it never had."""
    if finished is not None:
        return finished
    if pending is not None:
        return ErasureStatus(erasure_id, "pending", pending.counts, pending.requested_at)
    return None
