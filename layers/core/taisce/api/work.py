"""Background work on AWS: the work message, how the API sends one, and one pass over
a project's work by the same Memory entry points the local worker thread calls.

A work message only says that a project has work (and which ids were stored, for
fact extraction): the work itself is the marks the store wrote in the same
transaction as the records. So a message that is lost, sent twice or sent to the
dead-letter queue loses nothing: the next message or the scheduled sweep finds the
marks. Messages never carry stored text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from ..domain.erasure import ErasureHeld
from ..domain.extraction import EXTRACTION_ATTEMPTS
from ..domain.ingest import MAX_BATCH, Id
from ..domain.memory import EXTRACTION_BATCH, VECTOR_BATCH, Memory
from ..ports import WorkKind, WorkQueue
from .resolver import logger


class WorkMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    project: Annotated[str, StringConstraints(min_length=1)]
    kind: Literal["messages", "facts", "sweep", "erasure"]
    ids: Annotated[list[Id], Field(max_length=MAX_BATCH)] = []


class WorkLeft(Exception):
    """Marks seen before a pass were still there after it (the model, the vector index
    or the extractor failed): the message is retried, later, by SQS."""


def announce(queue: WorkQueue | None, project: str, kind: WorkKind, ids: list[str]) -> None:
    """Tell the worker after a write. Never fails the write: what was stored is stored
    with its marks, and the scheduled sweep finds marks no message announced."""
    if queue is None:
        return
    try:
        queue.send(project, kind, ids)
    except Exception:
        logger.exception("could not queue work; the scheduled sweep will find it")


# Seconds a pass keeps, after its last extraction, for vectors and reports.
FINISH_SECONDS = 60.0


def extraction_seconds(timeout: float, calls_per_attempt: int, retry_wait: float) -> float:
    """The longest one message's extraction can take: every attempt of the domain
    (EXTRACTION_ATTEMPTS) waits `timeout` for each of its client calls, with the
    domain's waits between attempts. The worker starts an extraction only with this
    much time left (plus FINISH_SECONDS), so a pass ends before Lambda's timeout."""
    waits = sum(retry_wait * 2**n for n in range(EXTRACTION_ATTEMPTS - 1))
    return EXTRACTION_ATTEMPTS * calls_per_attempt * timeout + waits


class Budget:
    """The time a pass may still use: `seconds_left` (the Lambda context's remaining
    time) against the worst case of one extraction. None means no limit (tests,
    the local worker)."""

    def __init__(self, seconds_left: Callable[[], float], per_extraction: float) -> None:
        self.seconds_left = seconds_left
        self.per_extraction = per_extraction

    def room_for_extraction(self) -> bool:
        return self.seconds_left() >= self.per_extraction + FINISH_SECONDS

    def room_to_finish(self) -> bool:
        return self.seconds_left() >= FINISH_SECONDS


def extract_facts(
    memory: Memory, project: str, message_ids: list[str], budget: Budget | None = None
) -> tuple[int, bool]:
    """Extract the facts of these messages, then of any other message of the project
    still marked (one whose work message was lost). Runs before vectors and reports, so
    the facts it stores are indexed and reported in the same pass. Idempotent: a
    message already extracted (or recorded as failed) is skipped without a model call.

    Returns (messages handled, whether it stopped for time): with a budget, no
    extraction starts that could outlast the invocation; the rest keep their marks."""
    if memory.extractor is None:
        return 0, False
    done = 0

    def room() -> bool:
        return budget is None or budget.room_for_extraction()

    for message_id in message_ids:
        if not room():
            return done, True
        memory.extract_message(project, message_id)
        done += 1
    # The project's other marked messages, a page at a time (Memory.extract_pending,
    # with the budget checked before each one).
    seen: set[str] = set(message_ids)
    while pending := [m for m in memory.store.pending_extractions(project, EXTRACTION_BATCH)]:
        fresh = [m for m in pending if m not in seen]
        if not fresh:
            break
        for message_id in fresh:
            if not room():
                return done, True
            seen.add(message_id)
            memory.extract_message(project, message_id)
            done += 1
        if len(pending) < EXTRACTION_BATCH:
            break
    return done, False


def _marks(memory: Memory, project: str) -> set[tuple[str, ...]]:
    store = memory.store
    found: set[tuple[str, ...]] = {("dirty", *m) for m in store.dirty_entities(project)}
    if memory.semantic is not None:
        found |= {
            ("vector", v.kind, v.id, v.text) for v in store.pending_vectors(project, VECTOR_BATCH)
        }
    return found


def work_on(
    memory: Memory,
    work: WorkMessage,
    budget: Budget | None = None,
    queue: WorkQueue | None = None,
) -> dict[str, int]:
    """One pass over a project's work. Raises WorkLeft if it could not do work that was
    waiting when it began (work that arrived meanwhile has a message of its own).

    With a budget, a pass that runs short of time leaves the rest of its work marked
    and queues a pass to continue (`deferred`: 1), rather than being cut off by
    Lambda's timeout; without a queue the scheduled sweep finds the marks."""
    deferred = False
    extracted = 0
    erased = 0
    if work.kind in ("erasure", "sweep"):
        erased, deferred = complete_erasures(memory, work.project, budget, queue)
        if deferred:
            return {"erasures": erased, "extracted": 0, "indexed": 0, "reports": 0, "deferred": 1}
    if work.kind in ("messages", "sweep"):
        ids = work.ids if work.kind == "messages" else []
        extracted, deferred = extract_facts(memory, work.project, ids, budget)
    if budget is not None and not budget.room_to_finish():
        _continue(queue, work.project)
        return {
            "erasures": erased,
            "extracted": extracted,
            "indexed": 0,
            "reports": 0,
            "deferred": 1,
        }
    before = _marks(memory, work.project)
    indexed = memory.index_pending(work.project)
    reports = memory.rebuild_reports(work.project)
    stuck = before & _marks(memory, work.project)
    if stuck:
        raise WorkLeft(f"{len(stuck)} marks of this project are still waiting after a pass")
    if deferred:
        _continue(queue, work.project)
    return {
        "erasures": erased,
        "extracted": extracted,
        "indexed": indexed,
        "reports": reports,
        "deferred": int(deferred),
    }


def complete_erasures(
    memory: Memory, project: str, budget: Budget | None = None, queue: WorkQueue | None = None
) -> tuple[int, bool]:
    """Complete the project's pending erasures, oldest first, before any other work (an
    extraction then finds their tombstones). Returns (how many finished, whether it
    stopped for time): an erasure not finished keeps its pending record, and a message
    is queued to go on with it (the sweep finds it too, through erasing_projects)."""
    finished = 0
    seconds_left = budget.seconds_left if budget is not None else None
    for pending in memory.store.pending_erasures(project):
        try:
            status = memory.complete_erasure(project, pending.id, seconds_left)
        except ErasureHeld:
            # Its holder finishes it; if the holder died, a later pass (a message, the
            # sweep) takes it over once the holder's time ends.
            logger.info("erasure held by another worker or request: left to it")
            continue
        if status is not None and status.status == "pending":
            logger.info("erasure deferred for time: a message is queued to go on")
            if queue is not None:
                queue.send(project, "erasure", [pending.id])
            return finished, True
        finished += 1
    return finished, False


def _continue(queue: WorkQueue | None, project: str) -> None:
    """Queue the rest of a pass that ran short of time (a sweep pass for the project
    extracts every message still marked)."""
    logger.info("pass deferred for time: its project has work left, a pass is queued")
    if queue is not None:
        queue.send(project, "sweep", [])


def sweep(memory: Memory, queue: WorkQueue) -> int:
    """Queue a pass for every project with marks (the scheduled safety net). The passes
    go through the queue, so a project's work still runs one pass at a time."""
    store = memory.store
    projects = set(store.dirty_projects()) | set(store.erasing_projects())
    if memory.extractor is not None:
        projects |= set(store.extraction_projects())
    if memory.semantic is not None:
        projects |= set(store.vector_projects())
    for project in sorted(projects):
        queue.send(project, "sweep", [])
    return len(projects)
