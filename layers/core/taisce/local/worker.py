"""The local stand-in for the ingestion queue's worker: shortly after a write, off the
request path, it embeds and indexes what was stored (passages, names new to a role),
extracts facts from new messages (with an extractor configured) and rebuilds the
reports of entities whose facts changed."""

from __future__ import annotations

import threading
import time

from ..api.resolver import logger
from ..api.work import complete_erasures
from ..domain.memory import Memory

# The loop waits this many times the last rebuild's duration before the next one.
REPORT_DUTY = 19


class Worker(threading.Thread):
    def __init__(self, memory: Memory, interval: float = 0.2, report_interval: float = 1.0) -> None:
        super().__init__(name="taisce-worker", daemon=True)
        self.memory = memory
        self.interval = interval
        # A rebuild costs what the changed components hold (thousands of facts in a
        # big project), however many writes marked them. Under steady writes the loop
        # rebuilds at most every `report_interval` seconds, and waits REPORT_DUTY
        # times as long as the last rebuild took, so that reports take at most ~5% of
        # the time and leave the CPU (and the GIL) to requests: recall p95 under load
        # was 79 ms with rebuilds every pass, 28 ms without any (bench/load_bench.py).
        self.report_interval = report_interval
        self.report_seconds = 0.0  # how long the last rebuild took
        self._stopping = threading.Event()  # not `_stop`: that is Thread._stop, which join() calls

    def run(self) -> None:
        wait = self.interval
        next_reports = 0.0
        while not self._stopping.wait(wait):
            reports = time.monotonic() >= next_reports
            # Back off while passes leave work behind (a model or index that keeps
            # failing), up to 30 s; come back to the short interval once they do not.
            wait = self.interval if self.run_once(reports=reports) else min(wait * 2, 30.0)
            if reports:
                pause = max(self.report_interval, REPORT_DUTY * self.report_seconds)
                next_reports = time.monotonic() + pause

    def run_once(self, *, reports: bool = True) -> bool:
        """One pass over the pending work (reports too, unless `reports` is False);
        False if it left work it could not do."""
        store = self.memory.store
        try:
            erasing = store.erasing_projects()
        except Exception:
            logger.exception("the worker could not read pending work")
            return False
        for project in erasing:  # first: later work then finds their tombstones
            try:
                complete_erasures(self.memory, project)
            except Exception:
                logger.exception("completing an erasure failed")
        try:
            vectors = store.vector_projects() if self.memory.semantic is not None else []
            extractions = store.extraction_projects() if self.memory.extractor is not None else []
            rebuild = store.dirty_projects() if reports else []
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
        if extractions and reports:
            # Extracted facts mark their entities' reports: rebuild them in this pass.
            try:
                rebuild = store.dirty_projects()
            except Exception:
                logger.exception("the worker could not read pending work")
                return False
        started = time.monotonic()
        for project in rebuild:
            try:
                self.memory.rebuild_reports(project)
            except Exception:
                logger.exception("rebuilding reports failed")
        if reports:
            self.report_seconds = time.monotonic() - started
        try:
            if not (vectors or extractions or rebuild):
                return True
            if reports:
                return not self.memory.work_pending()
            # Reports wait for their turn: only work left by a model counts here.
            return not (
                (self.memory.semantic is not None and store.vector_projects())
                or (self.memory.extractor is not None and store.extraction_projects())
            )
        except Exception:
            return False

    def stop(self) -> None:
        self._stopping.set()
