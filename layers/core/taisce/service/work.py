"""Background work: which projects have some, and what one pass over a project does.
Both workers run these: the local thread (taisce/local/worker.py) and the queue's
Lambda consumer (functions/worker/app.py); `Memory.work_pending` asks the same lists.

The work itself is the marks the store wrote in the same transaction as the records
(erasures pending, messages to extract, vectors to embed, entities whose reports are
stale). A work message only says that a project has work (and which message ids were
stored, for extraction), so a message that is lost, sent twice or sent to the
dead-letter queue loses nothing: the next message or the scheduled sweep finds the
marks. Messages never carry stored text.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, get_args

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from ..domain.erasure import ErasureHeld
from ..domain.extraction import EXTRACTION_ATTEMPTS
from ..domain.ingest import MAX_BATCH, Id
from ..domain.model import WorkKind
from ..domain.ports.queue import WorkQueue
from ..domain.scope import as_scope

if TYPE_CHECKING:
    from ..domain.ports.store import Store
    from .memory import Memory

logger = logging.getLogger(__name__)


# Texts embedded per model call by the worker.
VECTOR_BATCH = 256
# Messages read per look at the pending extraction marks.
EXTRACTION_BATCH = 50
# Seconds a pass keeps, after its last extraction, for vectors and reports.
FINISH_SECONDS = 60.0


class WorkMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    project: Annotated[str, StringConstraints(min_length=1)]
    kind: WorkKind
    ids: Annotated[list[Id], Field(max_length=MAX_BATCH)] = []


class WorkLeft(Exception):
    """Marks seen before a pass were still there after it (the model, the vector index
    or the extractor failed): the message is retried, later, by SQS."""


# -- the steps of a pass ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StepDone:
    """What one step of a pass did: how many it handled, and whether it ran short of
    time (the rest keeps its marks)."""

    count: int
    deferred: bool = False
    # It stopped at the end of its turn (PassContext) with work left.
    more: bool = False


@dataclass(frozen=True, slots=True)
class PassContext:
    """What a step is given besides the memory: the project, the message ids a queue
    message announced, the pass's time and the queue to continue on. `held`: the
    erasures this pass found held by another worker (not asked again in the pass)."""

    project: str
    message_ids: Sequence[str] = ()
    allowance: TimeAllowance | None = None
    queue: WorkQueue | None = None
    held: set[str] = field(default_factory=set)
    # At most this many batches of vectors, and this many extractions, in the pass
    # (None: all): the local worker takes the projects in turns, so one project's bulk
    # load does not hold the others'.
    vector_batches: int | None = None
    extractions: int | None = None
    # And reports rebuilt around at most this many changed entities.
    report_marks: int | None = None


@dataclass(frozen=True, slots=True)
class WorkStep:
    """One kind of background work, everything the worker needs to know of it: adding
    a step is adding one of these to STEPS (and, where it calls one, its Memory
    method; its marks are written by the store with the records that need it)."""

    # As queue messages, the local worker and the logs name it.
    name: str
    # Its count in a pass's answer (Pass.counts).
    counted_as: str
    # The queue messages that ask for it (a sweep asks for every step).
    asked_by: frozenset[WorkKind]
    # The projects with marks for it.
    projects: Callable[[Store], list[str]]
    # Whether one project has marks for it (reads that project's partitions only).
    pending_in: Callable[[Store, str], bool]
    # Do it for one project.
    run: Callable[[Memory, PassContext], StepDone]
    # Logged when it fails in a best-effort pass.
    failed: str
    # Whether this memory can do it at all (a model, an extractor): without, its marks
    # are not work.
    available: Callable[[Memory], bool] = lambda memory: True
    # Its work is a model's (the local worker's passes between report rebuilds answer
    # for these).
    uses_model: bool = False
    # Runs in the time a pass keeps for its end (FINISH_SECONDS), after the steps
    # that may stop for time; `marks` are what a queue's pass must not leave behind
    # of what it found (WorkLeft).
    finishing: bool = False
    marks: Callable[[Memory, str], set[tuple[str, ...]]] | None = None
    # Ran short of time: it queued its own continuation and the pass ends here (else
    # the pass goes on to the finishing steps and queues a sweep pass for the rest).
    ends_pass_when_deferred: bool = False


def _erasures(memory: Memory, context: PassContext) -> StepDone:
    return StepDone(
        *complete_erasures(memory, context.project, context.allowance, context.queue, context.held)
    )


def _extractions(memory: Memory, context: PassContext) -> StepDone:
    turn = context.extractions
    started: list[None] = []  # one per extraction this pass began

    def ready() -> bool:
        """Room for one more extraction, and no erasure accepted since the pass began
        left pending: one is completed first (a consistent read of the project's
        pending erasures, then its steps), so the model is never sent what an
        accepted erasure takes, and the erasure waits one extraction at most, not
        the rest of the pass. False when there is no time left for either."""
        allowance = context.allowance
        if turn is not None and len(started) >= turn:
            return False
        if allowance is not None and not allowance.room_for_extraction():
            return False
        _, stopped = complete_erasures(
            memory, context.project, allowance, context.queue, context.held
        )
        if not stopped:
            started.append(None)
        return not stopped

    count, stopped = extract_facts(memory, context.project, context.message_ids, ready)
    # The end of a turn is no shortage of time: the next pass goes on.
    return StepDone(count, stopped and not (turn is not None and count >= turn))


def _reports(memory: Memory, context: PassContext) -> StepDone:
    written, more = memory.rebuild_reports_turn(context.project, context.report_marks)
    return StepDone(written, more=more)


def _vector_marks(memory: Memory, project: str) -> set[tuple[str, ...]]:
    if memory.semantic is None:
        return set()
    pending = memory.store.pending_vectors(project, VECTOR_BATCH)
    return {("vector", v.kind, v.id, v.text) for v in pending}


def _report_marks(memory: Memory, project: str) -> set[tuple[str, ...]]:
    return {("dirty", *m) for m in memory.store.dirty_entities(project)}


ALL_KINDS: frozenset[WorkKind] = frozenset(get_args(WorkKind))

# A pass's steps in the order it takes them: erasures first (an extraction then finds
# their tombstones and the messages they masked), extraction before vectors and reports
# (the facts it stores are indexed and reported in the same pass). Every pass, whatever
# message asked for it, completes the project's pending erasures first (a retried
# `messages` or `facts` message included: an erasure queued behind it in the project's
# message group is not left waiting for its own message), indexes and rebuilds
# reports: marks found are done, whichever write left them.
STEPS: tuple[WorkStep, ...] = (
    WorkStep(
        name="erasures",
        counted_as="erasures",
        asked_by=ALL_KINDS,
        projects=lambda store: store.erasing_projects(),
        pending_in=lambda store, project: bool(store.pending_erasures(project)),
        run=_erasures,
        failed="completing an erasure failed",
        ends_pass_when_deferred=True,
    ),
    WorkStep(
        name="extractions",
        counted_as="extracted",
        asked_by=frozenset({"sweep", "messages"}),
        projects=lambda store: store.extraction_projects(),
        pending_in=lambda store, project: bool(store.pending_extractions(project, 1)),
        run=_extractions,
        failed="extracting facts failed",
        available=lambda memory: memory.extractor is not None,
        uses_model=True,
    ),
    WorkStep(
        name="vectors",
        counted_as="indexed",
        asked_by=ALL_KINDS,
        projects=lambda store: store.vector_projects(),
        pending_in=lambda store, project: bool(store.pending_vectors(project, 1)),
        run=lambda memory, context: StepDone(
            memory.index_pending(context.project, max_batches=context.vector_batches)
        ),
        failed="indexing vectors failed",
        available=lambda memory: memory.semantic is not None,
        uses_model=True,
        finishing=True,
        marks=_vector_marks,
    ),
    WorkStep(
        name="reports",
        counted_as="reports",
        asked_by=ALL_KINDS,
        projects=lambda store: store.dirty_projects(),
        pending_in=lambda store, project: bool(store.dirty_entities(project)),
        run=_reports,
        failed="rebuilding reports failed",
        finishing=True,
        marks=_report_marks,
    ),
)
STEP_NAMES: tuple[str, ...] = tuple(s.name for s in STEPS)
# The steps whose work is a model's.
MODEL_STEPS: tuple[str, ...] = tuple(s.name for s in STEPS if s.uses_model)
# The steps each queue message asks for.
STEPS_OF: dict[WorkKind, tuple[str, ...]] = {
    kind: tuple(s.name for s in STEPS if kind in s.asked_by) for kind in sorted(ALL_KINDS)
}


# -- which projects have work ---------------------------------------------------------


def _listers(memory: Memory, steps: Collection[str]) -> list[tuple[str, Callable[[], list[str]]]]:
    """How to list the projects needing each of these steps that this memory can take."""
    return [(s.name, _lister(s, memory)) for s in STEPS if s.name in steps and s.available(memory)]


def _lister(step: WorkStep, memory: Memory) -> Callable[[], list[str]]:
    """How to list the projects needing this step (a closure per step, listed later)."""
    return lambda: step.projects(memory.store)


def projects_with_work(memory: Memory, steps: Collection[str] = STEP_NAMES) -> dict[str, set[str]]:
    """Each project with marks for these steps, sorted, with the steps it needs."""
    found: dict[str, set[str]] = {}
    for step, listed in _listers(memory, steps):
        for project in listed():
            found.setdefault(project, set()).add(step)
    return {project: found[project] for project in sorted(found)}


def has_work(memory: Memory, steps: Collection[str] = STEP_NAMES) -> bool:
    """Whether any project has marks for these steps (stops at the first list found)."""
    return any(listed() for _, listed in _listers(memory, steps))


def project_has_work(memory: Memory, project: str) -> bool:
    """Whether this one project has marks for a step this memory can take: its own
    partitions only, never the index of every project with work."""
    return any(s.pending_in(memory.store, project) for s in STEPS if s.available(memory))


# -- the time a pass may use -----------------------------------------------------------


def extraction_seconds(timeout: float, calls_per_attempt: int, retry_wait: float) -> float:
    """The longest one message's extraction can take: every attempt of the domain
    (EXTRACTION_ATTEMPTS) waits `timeout` for each of its client calls, with the
    domain's waits between attempts. The worker starts an extraction only with this
    much time left (plus FINISH_SECONDS), so a pass ends before Lambda's timeout."""
    waits = sum(retry_wait * 2.0**n for n in range(EXTRACTION_ATTEMPTS - 1))
    return EXTRACTION_ATTEMPTS * calls_per_attempt * timeout + waits


class TimeAllowance:
    """The seconds a pass may still use: `seconds_left` (the Lambda context's remaining
    time) against the worst case of one extraction. A pass given none has no limit
    (tests, the local worker). Not domain/budget.py's Bundle, which counts characters."""

    def __init__(self, seconds_left: Callable[[], float], per_extraction: float) -> None:
        self.seconds_left = seconds_left
        self.per_extraction = per_extraction

    def room_for_extraction(self) -> bool:
        return self.seconds_left() >= self.per_extraction + FINISH_SECONDS

    def room_to_finish(self) -> bool:
        return self.seconds_left() >= FINISH_SECONDS


# -- one pass --------------------------------------------------------------------------


@dataclass
class Pass:
    """What one pass did: each step's count and seconds, by step name. `deferred`: it
    ran short of time and queued the rest."""

    done: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    deferred: bool = False
    # The steps that stopped at the end of their turn with work left.
    more: set[str] = field(default_factory=set)

    def counts(self) -> dict[str, int]:
        counted = {s.counted_as: self.done.get(s.name, 0) for s in STEPS}
        return {**counted, "deferred": int(self.deferred)}


def one_pass(
    memory: Memory,
    project: str,
    steps: Collection[str] = STEP_NAMES,
    *,
    message_ids: Sequence[str] = (),
    allowance: TimeAllowance | None = None,
    queue: WorkQueue | None = None,
    best_effort: bool = False,
    vector_batches: int | None = None,
    extractions: int | None = None,
    report_marks: int | None = None,
) -> Pass:
    """One pass over a project's work: these steps, in the order of STEPS, extracting
    `message_ids` first. Each step reads its own marks, so a step with none costs a
    read.

    A queue message's pass (best_effort False) raises the first failure, and WorkLeft
    if it could not do work that was waiting when it began (work that arrived
    meanwhile has a message of its own): SQS retries the message. With an allowance,
    a pass that runs short of time leaves the rest of its work marked and queues a
    pass to continue (`deferred`) rather than being cut off by Lambda's timeout;
    without a queue the scheduled sweep finds the marks.

    The local worker's pass (best_effort True) logs a step that fails and goes on
    with the next; the worker retries on its own timer."""
    done = Pass()
    if memory.user_erasing(as_scope(project)):
        # Its user's erasure takes the partition's marks with it; a report or vector
        # written meanwhile, behind the erasure's cursor, would outlive it.
        logger.info("the partition's user is being erased: its work is left to the erasure")
        return done
    context = PassContext(
        project,
        message_ids,
        allowance,
        queue,
        vector_batches=vector_batches,
        extractions=extractions,
        report_marks=report_marks,
    )
    before: set[tuple[str, ...]] | None = None
    for step in STEPS:
        if step.finishing and before is None:
            if allowance is not None and not allowance.room_to_finish():
                _continue(queue, project)
                done.deferred = True
                return done
            before = set() if best_effort else _marks(memory, project)
        if step.name not in steps:
            continue
        started = time.monotonic()
        result = _step(best_effort, step.failed, functools.partial(step.run, memory, context))
        done.done[step.name] = result.count
        done.seconds[step.name] = time.monotonic() - started
        if result.more:
            done.more.add(step.name)
        if result.deferred:
            done.deferred = True
            if step.ends_pass_when_deferred:
                return done
    if not best_effort and before and (stuck := before & _marks(memory, project)):
        raise WorkLeft(f"{len(stuck)} marks of this project are still waiting after a pass")
    if done.deferred:
        _continue(queue, project)
    return done


def _step(best_effort: bool, failed: str, run: Callable[[], StepDone]) -> StepDone:
    """A step's result; in a best-effort pass a failure is logged and nothing counted."""
    if not best_effort:
        return run()
    try:
        return run()
    except Exception:
        logger.exception(failed)
        return StepDone(0)


def _marks(memory: Memory, project: str) -> set[tuple[str, ...]]:
    """The marks of the finishing steps that a queue's pass must leave none of."""
    found: set[tuple[str, ...]] = set()
    for step in STEPS:
        if step.marks is not None:
            found |= step.marks(memory, project)
    return found


def work_on(
    memory: Memory,
    work: WorkMessage,
    allowance: TimeAllowance | None = None,
    queue: WorkQueue | None = None,
) -> dict[str, int]:
    """The pass a queue message asks for (one_pass), as the worker's answer."""
    ids = work.ids if work.kind == "messages" else []
    steps = STEPS_OF[work.kind]
    return one_pass(
        memory, work.project, steps, message_ids=ids, allowance=allowance, queue=queue
    ).counts()


def complete_erasures(
    memory: Memory,
    project: str,
    allowance: TimeAllowance | None = None,
    queue: WorkQueue | None = None,
    held: set[str] | None = None,
) -> tuple[int, bool]:
    """Complete the project's pending erasures, oldest first, before any other work (an
    extraction then finds their tombstones). Returns (how many finished, whether it
    stopped for time): an erasure not finished keeps its pending record, and a message
    is queued to go on with it (the sweep finds it too, through erasing_projects).
    `held`: ids found held by another holder, skipped, and added to when found."""
    finished = 0
    seconds_left = allowance.seconds_left if allowance is not None else None
    skipped = held if held is not None else set()
    for pending in memory.store.pending_erasures(project):
        if pending.id in skipped:
            continue
        try:
            status = memory.complete_erasure(project, pending.id, seconds_left)
        except ErasureHeld:
            # Its holder finishes it; if the holder died, a later pass (a message, the
            # sweep) takes it over once the holder's time ends.
            logger.info("erasure held by another worker or request: left to it")
            skipped.add(pending.id)
            continue
        if status is not None and status.status == "pending":
            logger.info("erasure deferred for time: a message is queued to go on")
            if queue is not None:
                queue.send(project, "erasure", [pending.id])
            return finished, True
        finished += 1
    return finished, False


def extract_facts(
    memory: Memory,
    project: str,
    message_ids: Sequence[str],
    room: Callable[[], bool] = lambda: True,
) -> tuple[int, bool]:
    """Extract the facts of these messages, then of any other message of the project
    still marked (one whose work message was lost). Idempotent: a message already
    extracted (or recorded as failed) is skipped without a model call.

    Returns (messages handled, whether it stopped for time): `room` is asked before
    each extraction (the pass's: time left for its worst case, erasures accepted since
    completed first), not for a message already extracted; when it says no, the rest
    keep their marks."""
    if memory.extractor is None:
        return 0, False
    done = 0
    for message_id in message_ids:
        if memory.extract_message(project, message_id, room).status == "deferred":
            return done, True
        done += 1
    # The project's other marked messages, a page at a time, the time checked
    # before each one.
    seen: set[str] = set(message_ids)
    while pending := memory.store.pending_extractions(project, EXTRACTION_BATCH):
        fresh = [m for m in pending if m not in seen]
        if not fresh:
            break
        for message_id in fresh:
            seen.add(message_id)
            if memory.extract_message(project, message_id, room).status == "deferred":
                return done, True
            done += 1
        if len(pending) < EXTRACTION_BATCH:
            break
    return done, False


def _continue(queue: WorkQueue | None, project: str) -> None:
    """Queue the rest of a pass that ran short of time (a sweep pass for the project
    extracts every message still marked)."""
    logger.info("pass deferred for time: its project has work left, a pass is queued")
    if queue is not None:
        queue.send(project, "sweep", [])


# -- telling the worker ----------------------------------------------------------------


def announce(queue: WorkQueue | None, project: str, kind: WorkKind, ids: list[str]) -> None:
    """Tell the worker after a write. Never fails the write: what was stored is stored
    with its marks, and the scheduled sweep finds marks no message announced."""
    if queue is None:
        return
    try:
        queue.send(project, kind, ids)
    except Exception:
        logger.exception("could not queue work; the scheduled sweep will find it")


def erasures_pending(memory: Memory) -> int:
    """Erasures accepted and not yet finished, over every project (a figure the sweep
    reports: one that stays above zero is an erasure that cannot finish)."""
    return sum(len(memory.store.pending_erasures(p)) for p in memory.store.erasing_projects())


def sweep(memory: Memory, queue: WorkQueue) -> int:
    """Queue a pass for every project with marks (the scheduled safety net). The passes
    go through the queue, so a project's work still runs one pass at a time."""
    projects = projects_with_work(memory)
    for project in projects:
        queue.send(project, "sweep", [])
    return len(projects)
