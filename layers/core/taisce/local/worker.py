"""The local stand-in for the ingestion queue's worker: shortly after a write, off the
request path, it embeds and indexes what was stored (passages, names new to a role),
extracts facts from new messages (with an extractor configured) and rebuilds the
reports of entities whose facts changed: the passes of service/work.py, as the queue's
worker takes them, over every project with work."""

from __future__ import annotations

import threading
import time

from ..api.logs import logger
from ..service.memory import Memory
from ..service.work import (
    MODEL_STEPS,
    STEP_NAMES,
    VECTOR_BATCH,
    has_work,
    one_pass,
    projects_with_work,
)

# The steps of a pass between two report rebuilds (run() paces those).
WITHOUT_REPORTS: tuple[str, ...] = tuple(s for s in STEP_NAMES if s != "reports")
# The loop waits this many times the last rebuild's duration before the next one.
REPORT_DUTY = 19
# Batches of vectors one project gets in a pass (4 x 256 items: a few seconds of the
# local model) before the next project's turn: one thread serves every project, and a
# bulk load of one must not hold another's writes unembedded until it is all done.
VECTOR_TURN = 4
# Messages one project gets extracted in a pass, for the same reason (an extraction is
# a model call of a second or more).
EXTRACTION_TURN = 20
# Changed entities one project's reports are rebuilt around in a pass: a rebuild costs
# what their components hold (and, with a summary model, a model call a report).
REPORT_TURN = 200


class Worker(threading.Thread):
    def __init__(
        self,
        memory: Memory,
        interval: float = 0.2,
        report_interval: float = 1.0,
        vector_turn: int | None = VECTOR_TURN,
        extraction_turn: int | None = EXTRACTION_TURN,
        report_turn: int | None = REPORT_TURN,
    ) -> None:
        super().__init__(name="taisce-worker", daemon=True)
        self.memory = memory
        self.interval = interval
        # Batches of vectors per project per pass (None: all of them, for a command
        # that runs passes until nothing is left: `taisce reindex`).
        self.vector_turn = vector_turn
        self.extraction_turn = extraction_turn
        self.report_turn = report_turn
        # A rebuild costs what the changed components hold (thousands of facts in a
        # big project), however many writes marked them. Under steady writes the loop
        # rebuilds at most every `report_interval` seconds, and waits REPORT_DUTY
        # times as long as the last rebuild took, so that reports take at most ~5% of
        # the time and leave the CPU (and the GIL) to requests (bench/load_bench.py;
        # docs/measured-choices.md).
        self.report_interval = report_interval
        self.report_seconds = 0.0  # how long the last rebuild took
        self._stopping = threading.Event()  # not `_stop`: that is Thread._stop, which join() calls

    @classmethod
    def all_in_a_pass(cls, memory: Memory) -> Worker:
        """A worker for a command that runs passes until nothing is left (`taisce
        reindex`, a benchmark settling its store): no turns."""
        return cls(memory, vector_turn=None, extraction_turn=None, report_turn=None)

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
        """One pass over every project with work (reports too, unless `reports` is
        False); False if it left work it could not do."""
        memory = self.memory
        steps = STEP_NAMES if reports else WITHOUT_REPORTS
        try:
            work = projects_with_work(memory, steps)
        except Exception:
            logger.exception("the worker could not read pending work")
            return False
        report_seconds = 0.0
        turn_ended = False  # a project had more vectors than its turn: come back soon
        for project, needs in work.items():
            if reports and "extractions" in needs:
                # Extracted facts mark their entities' reports: rebuilt in this pass.
                needs.add("reports")
            turn, extractions = self.vector_turn, self.extraction_turn
            done = one_pass(
                memory,
                project,
                needs,
                best_effort=True,
                vector_batches=turn,
                extractions=extractions,
                report_marks=self.report_turn,
            )
            report_seconds += done.seconds.get("reports", 0.0)
            turn_ended |= turn is not None and done.done.get("vectors", 0) >= turn * VECTOR_BATCH
            turn_ended |= extractions is not None and done.done.get("extractions", 0) >= extractions
            turn_ended |= "reports" in done.more
        if reports:
            self.report_seconds = report_seconds
        try:
            if turn_ended or not any(needs - {"erasures"} for needs in work.values()):
                return True
            # Without reports, they wait for their turn: only work left by a model counts.
            return not has_work(memory, STEP_NAMES if reports else MODEL_STEPS)
        except Exception:
            return False

    def stop(self) -> None:
        self._stopping.set()
