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

import logging
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from ..domain.erasure import ErasureHeld
from ..domain.extraction import EXTRACTION_ATTEMPTS
from ..domain.ingest import MAX_BATCH, Id
from ..domain.model import WorkKind
from ..domain.ports.queue import WorkQueue

if TYPE_CHECKING:
    from ..domain.model import ErasureStatus
    from ..domain.ports.extractor import Extractor
    from ..domain.ports.store import Store
    from ..domain.recall import Semantic

logger = logging.getLogger(__name__)


class WorkingMemory(Protocol):
    """What a pass needs of service.memory.Memory, which calls this module: typed by
    this protocol so that the two modules do not import each other."""

    store: Store
    extractor: Extractor | None
    semantic: Semantic | None

    def index_pending(self, project: str, batch: int = ...) -> int: ...

    def rebuild_reports(self, project: str) -> int: ...

    def complete_erasure(
        self,
        project: str,
        erasure_id: str,
        seconds_left: Callable[[], float] | None = None,
        *,
        holder: str | None = None,
    ) -> ErasureStatus | None: ...

    def extract_message(self, project: str, message_id: str) -> object: ...


_T = TypeVar("_T")

# Texts embedded per model call by the worker.
VECTOR_BATCH = 256
# Messages read per look at the pending extraction marks.
EXTRACTION_BATCH = 50
# Seconds a pass keeps, after its last extraction, for vectors and reports.
FINISH_SECONDS = 60.0

Step = Literal["erasures", "extractions", "vectors", "reports"]
# A pass's steps in the order it takes them: erasures first (an extraction then finds
# their tombstones), extraction before vectors and reports (the facts it stores are
# indexed and reported in the same pass).
STEPS: tuple[Step, ...] = ("erasures", "extractions", "vectors", "reports")
# The steps a queue message asks for. Every pass indexes and rebuilds reports: marks
# found are done, whichever write left them.
STEPS_OF: dict[WorkKind, tuple[Step, ...]] = {
    "sweep": STEPS,
    "erasure": ("erasures", "vectors", "reports"),
    "messages": ("extractions", "vectors", "reports"),
    "facts": ("vectors", "reports"),
}


class WorkMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    project: Annotated[str, StringConstraints(min_length=1)]
    kind: WorkKind
    ids: Annotated[list[Id], Field(max_length=MAX_BATCH)] = []


class WorkLeft(Exception):
    """Marks seen before a pass were still there after it (the model, the vector index
    or the extractor failed): the message is retried, later, by SQS."""


# -- which projects have work ---------------------------------------------------------


def _listers(memory: WorkingMemory) -> dict[Step, Callable[[], list[str]]]:
    """How to list the projects needing each step this memory can take: vectors need
    a model, extraction an extractor (without them their marks are not work)."""
    store = memory.store
    listers: dict[Step, Callable[[], list[str]]] = {"erasures": store.erasing_projects}
    if memory.extractor is not None:
        listers["extractions"] = store.extraction_projects
    if memory.semantic is not None:
        listers["vectors"] = store.vector_projects
    listers["reports"] = store.dirty_projects
    return listers


def projects_with_work(
    memory: WorkingMemory, steps: Collection[Step] = STEPS
) -> dict[str, set[Step]]:
    """Each project with marks for these steps, sorted, with the steps it needs."""
    found: dict[str, set[Step]] = {}
    for step, listed in _listers(memory).items():
        if step in steps:
            for project in listed():
                found.setdefault(project, set()).add(step)
    return {project: found[project] for project in sorted(found)}


def has_work(memory: WorkingMemory, steps: Collection[Step] = STEPS) -> bool:
    """Whether any project has marks for these steps (stops at the first list found)."""
    return any(listed() for step, listed in _listers(memory).items() if step in steps)


# -- the time a pass may use -----------------------------------------------------------


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


# -- one pass --------------------------------------------------------------------------


@dataclass
class Pass:
    """What one pass did. `deferred`: it ran short of time and queued the rest."""

    erasures: int = 0
    extracted: int = 0
    indexed: int = 0
    reports: int = 0
    deferred: bool = False
    report_seconds: float = 0.0  # the local worker paces its rebuilds by this

    def counts(self) -> dict[str, int]:
        return {
            "erasures": self.erasures,
            "extracted": self.extracted,
            "indexed": self.indexed,
            "reports": self.reports,
            "deferred": int(self.deferred),
        }


def one_pass(
    memory: WorkingMemory,
    project: str,
    steps: Collection[Step] = STEPS,
    *,
    message_ids: Sequence[str] = (),
    budget: Budget | None = None,
    queue: WorkQueue | None = None,
    best_effort: bool = False,
) -> Pass:
    """One pass over a project's work: these steps, in the order of STEPS, extracting
    `message_ids` first. Each step reads its own marks, so a step with none costs a
    read.

    A queue message's pass (best_effort False) raises the first failure, and WorkLeft
    if it could not do work that was waiting when it began (work that arrived
    meanwhile has a message of its own): SQS retries the message. With a budget, a
    pass that runs short of time leaves the rest of its work marked and queues a pass
    to continue (`deferred`) rather than being cut off by Lambda's timeout; without a
    queue the scheduled sweep finds the marks.

    The local worker's pass (best_effort True) logs a step that fails and goes on
    with the next; the worker retries on its own timer."""
    done = Pass()
    if "erasures" in steps:
        done.erasures, done.deferred = _step(
            best_effort,
            "completing an erasure failed",
            lambda: complete_erasures(memory, project, budget, queue),
            (0, False),
        )
        if done.deferred:
            return done
    if "extractions" in steps:
        done.extracted, done.deferred = _step(
            best_effort,
            "extracting facts failed",
            lambda: extract_facts(memory, project, message_ids, budget),
            (0, False),
        )
    if budget is not None and not budget.room_to_finish():
        _continue(queue, project)
        done.deferred = True
        return done
    before = set() if best_effort else _marks(memory, project)
    if "vectors" in steps:
        done.indexed = _step(
            best_effort, "indexing vectors failed", lambda: memory.index_pending(project), 0
        )
    if "reports" in steps:
        started = time.monotonic()
        done.reports = _step(
            best_effort, "rebuilding reports failed", lambda: memory.rebuild_reports(project), 0
        )
        done.report_seconds = time.monotonic() - started
    if not best_effort and (stuck := before & _marks(memory, project)):
        raise WorkLeft(f"{len(stuck)} marks of this project are still waiting after a pass")
    if done.deferred:
        _continue(queue, project)
    return done


def _step(best_effort: bool, failed: str, run: Callable[[], _T], otherwise: _T) -> _T:
    """A step's result; in a best-effort pass a failure is logged and `otherwise` given."""
    if not best_effort:
        return run()
    try:
        return run()
    except Exception:
        logger.exception(failed)
        return otherwise


def work_on(
    memory: WorkingMemory,
    work: WorkMessage,
    budget: Budget | None = None,
    queue: WorkQueue | None = None,
) -> dict[str, int]:
    """The pass a queue message asks for (one_pass), as the worker's answer."""
    ids = work.ids if work.kind == "messages" else []
    steps = STEPS_OF[work.kind]
    return one_pass(
        memory, work.project, steps, message_ids=ids, budget=budget, queue=queue
    ).counts()


def complete_erasures(
    memory: WorkingMemory,
    project: str,
    budget: Budget | None = None,
    queue: WorkQueue | None = None,
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


def extract_facts(
    memory: WorkingMemory, project: str, message_ids: Sequence[str], budget: Budget | None = None
) -> tuple[int, bool]:
    """Extract the facts of these messages, then of any other message of the project
    still marked (one whose work message was lost). Idempotent: a message already
    extracted (or recorded as failed) is skipped without a model call.

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
    # The project's other marked messages, a page at a time, the budget checked
    # before each one.
    seen: set[str] = set(message_ids)
    while pending := memory.store.pending_extractions(project, EXTRACTION_BATCH):
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


def _marks(memory: WorkingMemory, project: str) -> set[tuple[str, ...]]:
    store = memory.store
    found: set[tuple[str, ...]] = {("dirty", *m) for m in store.dirty_entities(project)}
    if memory.semantic is not None:
        found |= {
            ("vector", v.kind, v.id, v.text) for v in store.pending_vectors(project, VECTOR_BATCH)
        }
    return found


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


def sweep(memory: WorkingMemory, queue: WorkQueue) -> int:
    """Queue a pass for every project with marks (the scheduled safety net). The passes
    go through the queue, so a project's work still runs one pass at a time."""
    projects = projects_with_work(memory)
    for project in projects:
        queue.send(project, "sweep", [])
    return len(projects)
