"""The local stand-in for the ingestion queue's worker: shortly after a write, off the
request path, it embeds and indexes what was stored (passages, names new to a role),
extracts facts from new messages (with an extractor configured) and rebuilds the
reports of entities whose facts changed."""

from __future__ import annotations

import threading

from ..api.resolver import logger
from ..domain.memory import Memory


class Worker(threading.Thread):
    def __init__(self, memory: Memory, interval: float = 0.2) -> None:
        super().__init__(name="taisce-worker", daemon=True)
        self.memory = memory
        self.interval = interval
        self._stop = threading.Event()

    def run(self) -> None:
        wait = self.interval
        while not self._stop.wait(wait):
            # Back off while passes leave work behind (a model or index that keeps
            # failing), up to 30 s; come back to the short interval once they do not.
            wait = self.interval if self.run_once() else min(wait * 2, 30.0)

    def run_once(self) -> bool:
        """One pass over the pending work; False if it left work it could not do."""
        store = self.memory.store
        try:
            vectors = store.vector_projects() if self.memory.semantic is not None else []
            extractions = store.extraction_projects() if self.memory.extractor is not None else []
            reports = store.dirty_projects()
        except Exception:
            logger.exception("the worker could not read pending work")
            return False
        for project in vectors:
            try:
                self.memory.index_pending(project)
            except Exception:
                logger.exception("indexing vectors failed")
        for project in extractions:
            try:
                self.memory.extract_pending(project)
            except Exception:
                logger.exception("extracting facts failed")
        if extractions:
            # Extracted facts mark their entities' reports: rebuild them in this pass.
            try:
                reports = store.dirty_projects()
            except Exception:
                logger.exception("the worker could not read pending work")
                return False
        for project in reports:
            try:
                self.memory.rebuild_reports(project)
            except Exception:
                logger.exception("rebuilding reports failed")
        try:
            return not (vectors or extractions or reports) or not self.memory.work_pending()
        except Exception:
            return False

    def stop(self) -> None:
        self._stop.set()
