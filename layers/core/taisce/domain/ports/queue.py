"""The work queue (AWS: SQS FIFO; locally the worker thread polls the store instead)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..model import WorkKind


class WorkQueue(Protocol):
    """Tells the worker that a project has work. Never carries text: only the project
    and the ids stored. The work itself is the marks the store wrote with the records,
    so a message lost or sent twice loses nothing and does nothing twice."""

    def send(self, project: str, kind: WorkKind, ids: Sequence[str]) -> None: ...
