"""The local stand-in for the ingestion queue's worker: it rebuilds the reports of
entities whose facts changed, shortly after the write, off the request path."""

from __future__ import annotations

import threading

from ..api.resolver import logger
from ..domain.memory import Memory


class ReportWorker(threading.Thread):
    def __init__(self, memory: Memory, interval: float = 0.2) -> None:
        super().__init__(name="taisce-report-worker", daemon=True)
        self.memory = memory
        self.interval = interval
        self._stop = threading.Event()

    def run(self) -> None:
        while not self._stop.wait(self.interval):
            self.run_once()

    def run_once(self) -> None:
        try:
            projects = self.memory.store.dirty_projects()
        except Exception:
            logger.exception("report worker could not read pending work")
            return
        for project in projects:
            try:
                self.memory.rebuild_reports(project)
            except Exception:
                logger.exception("rebuilding reports failed")

    def stop(self) -> None:
        self._stop.set()
