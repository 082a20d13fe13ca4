"""Background work on AWS: the work message, how the API sends one, and one pass over
a project's work by the same Memory entry points the local worker thread calls.

A work message only says that a project has work (and which ids were stored, for
fact extraction): the work itself is the marks the store wrote in the same
transaction as the records. So a message that is lost, sent twice or sent to the
dead-letter queue loses nothing: the next message or the scheduled sweep finds the
marks. Messages never carry stored text.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from ..domain.ingest import MAX_BATCH, Id
from ..domain.memory import VECTOR_BATCH, Memory
from ..ports import WorkKind, WorkQueue
from .resolver import logger


class WorkMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    project: Annotated[str, StringConstraints(min_length=1)]
    kind: Literal["messages", "facts", "sweep"]
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


def extract_facts(memory: Memory, project: str, message_ids: list[str]) -> int:
    """Extract the facts of these messages, then of any other message of the project
    still marked (one whose work message was lost). Runs before vectors and reports, so
    the facts it stores are indexed and reported in the same pass. Idempotent: a
    message already extracted (or recorded as failed) is skipped without a model call."""
    if memory.extractor is None:
        return 0
    for message_id in message_ids:
        memory.extract_message(project, message_id)
    return len(message_ids) + memory.extract_pending(project)


def _marks(memory: Memory, project: str) -> set[tuple[str, ...]]:
    store = memory.store
    found: set[tuple[str, ...]] = {("dirty", *m) for m in store.dirty_entities(project)}
    if memory.semantic is not None:
        found |= {
            ("vector", v.kind, v.id, v.text) for v in store.pending_vectors(project, VECTOR_BATCH)
        }
    return found


def work_on(memory: Memory, work: WorkMessage) -> dict[str, int]:
    """One pass over a project's work. Raises WorkLeft if it could not do work that was
    waiting when it began (work that arrived meanwhile has a message of its own)."""
    if work.kind in ("messages", "sweep"):
        extract_facts(memory, work.project, work.ids if work.kind == "messages" else [])
    before = _marks(memory, work.project)
    indexed = memory.index_pending(work.project)
    reports = memory.rebuild_reports(work.project)
    stuck = before & _marks(memory, work.project)
    if stuck:
        raise WorkLeft(f"{len(stuck)} marks of this project are still waiting after a pass")
    return {"indexed": indexed, "reports": reports}


def sweep(memory: Memory, queue: WorkQueue) -> int:
    """Queue a pass for every project with marks (the scheduled safety net). The passes
    go through the queue, so a project's work still runs one pass at a time."""
    store = memory.store
    projects = set(store.dirty_projects())
    if memory.extractor is not None:
        projects |= set(store.extraction_projects())
    if memory.semantic is not None:
        projects |= set(store.vector_projects())
    for project in sorted(projects):
        queue.send(project, "sweep", [])
    return len(projects)
