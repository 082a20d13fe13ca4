"""The memory's background work, as the worker runs it (service/work.py `one_pass`):
vectors for what storing left pending, the reports around entities whose facts changed,
and facts extracted from stored messages. Part of `Memory` (service/memory.py), kept in
a module of its own because no route calls it: storing never waits on it."""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from ..domain.erasure import user_tombstone
from ..domain.extraction import (
    EXTRACTION_ATTEMPTS,
    extracted_facts,
    extraction_prompt,
    parse_output,
)
from ..domain.filters import FactFilter
from ..domain.model import (
    ExtractionFailure,
    Fact,
    Message,
    PendingVector,
    Role,
    VectorItem,
    VectorKind,
)
from ..domain.ports.extractor import ExtractionError, Extractor
from ..domain.ports.store import Store
from ..domain.reports import build_reports
from ..domain.scope import Scope, ScopeErased, ScopeGuard, as_scope
from ..domain.semantic import Semantic
from ..domain.summaries import SummaryWriter
from ..domain.timestamps import timestamp
from .work import EXTRACTION_BATCH, VECTOR_BATCH

logger = logging.getLogger(__name__)

# A rebuild reads at most this many facts of one component: it bounds the work one
# write can cause (a giant component is summarised from its first facts).
COMPONENT_FACTS = 20_000

# Read your writes: a request with at most this many texts to embed (a fact's statement
# and its new names, a new message's passages) embeds them before it answers; a bigger
# one leaves them to the worker (about 5 ms a text unloaded: a write waits at most
# about 100 ms). A chat turn or a few facts is under it.
EMBED_ON_WRITE_MAX = 16


class BackgroundWork:
    """Memory's background work; Memory.__init__ sets what it holds."""

    store: Store
    semantic: Semantic | None
    clock: Callable[[], datetime]
    extractor: Extractor | None
    retry_wait: float
    summary_model: Extractor | None
    summary_counts: Counter[str]
    # From ErasureCases (service/erasure_cases.py): a late extraction stores no fact
    # about an erased entity.
    drop_erased: Callable[[str, Sequence[Fact]], list[Fact]]

    def _index(self, project: str, items: Sequence[PendingVector]) -> None:
        """Embed items in one model call per batch and index them by kind. Raises
        if the model or the index fails (the caller keeps them pending)."""
        assert self.semantic is not None
        vectors = self.semantic.embedder.embed([i.text for i in items])
        by_kind: dict[VectorKind, list[VectorItem]] = {}
        for item, vector in zip(items, vectors, strict=True):
            # Every text goes to the index's text side too: recall searches passages
            # and reports by words there, and a search by words (domain/search.py)
            # facts as well (recall scores facts' words itself, over its candidates).
            by_kind.setdefault(item.kind, []).append(
                VectorItem(item.id, vector, item.role, item.text, item.position, item.occurred_at)
            )
        for kind, batch in by_kind.items():
            self.semantic.index.upsert(project, kind, batch)

    def embed_written(self, project: str, items: Sequence[tuple[VectorKind, str]]) -> None:
        """With a local model, embed what a request has just stored before it answers
        (Semantic.embed_on_write): the marks its write made, as the worker would take
        them, so a recall right after finds them by meaning. A failure leaves them to
        the worker; storing never fails for it."""
        semantic = self.semantic
        if semantic is None or not semantic.embed_on_write or not items:
            return
        if len(items) > EMBED_ON_WRITE_MAX:
            # A bulk write: the request would wait the model's whole time (measured: 100
            # facts and 20 messages at 48 items a second instead of 3,830). Its items go to
            # the worker; until then recall ranks a named entity's new facts by words.
            return
        try:
            marks = self.store.vector_marks(project, items)
            if not marks:
                return
            self._index(project, marks)
            self._unindex_vanished(project, marks)
            self.store.clear_pending_vectors(project, marks)
        except Exception:
            logger.exception("embedding on write failed; the worker will embed the items")

    def index_pending(
        self, project: str, batch: int = VECTOR_BATCH, max_batches: int | None = None
    ) -> int:
        """Embed and index what storing left pending, a batch at a time (at most
        `max_batches` of them, if given). Returns how many were indexed; what fails, or
        is past the batches allowed, stays pending for the next pass."""
        if self.semantic is None:
            return 0
        done = 0
        batches = 0
        while (max_batches is None or batches < max_batches) and (
            pending := self.store.pending_vectors(project, batch)
        ):
            batches += 1
            try:
                self._index(project, pending)
                self._unindex_vanished(project, pending)
            except Exception:
                logger.exception("indexing failed; %d items stay pending", len(pending))
                break
            self.store.clear_pending_vectors(project, pending)
            done += len(pending)
            if len(pending) < batch:
                break
        return done

    def _unindex_vanished(self, project: str, items: Sequence[PendingVector]) -> None:
        """Delete the vectors just written of items no longer held (facts too: a kind
        not checked here would lose every vector it just wrote). An erasure that
        committed while they were embedded found nothing to delete in the index yet;
        one that commits after this check deletes them itself."""
        assert self.semantic is not None
        by_kind: dict[VectorKind, list[str]] = {}
        for item in items:
            by_kind.setdefault(item.kind, []).append(item.id)
        held: set[str] = set()
        if ids := by_kind.get("passage"):
            held.update(p.id for p in self.store.passages_by_ids(project, ids))
        if ids := by_kind.get("fact"):
            held.update(self.store.held_facts(project, ids))
        if ids := by_kind.get("report"):
            held.update(r.id for r in self.store.reports_by_ids(project, ids))
        if ids := by_kind.get("entity"):
            # An entity's id is "<role>:<name>"; its name row goes only with an erasure
            # (or a merge, whose alias's vector may go too: recall resolves aliases).
            names = self.store.known_names(project, {i.partition(":")[2] for i in ids})
            held.update(i for i in ids if i.partition(":")[2] in names)
        vanished = False
        for kind, ids in by_kind.items():
            gone = [i for i in ids if i not in held]
            if gone:
                self.semantic.index.delete(project, kind, gone)
                vanished = True
        if vanished:
            # Their text was written after the erasure (or deletion) that took them had
            # purged the index: purged again, so no trace of it stays in storage.
            self.semantic.index.purge()

    def _component_facts(self, project: str, role: Role, keys: Collection[str]) -> list[Fact]:
        """The facts of one role's connected components around these entities."""
        seen_facts: dict[str, Fact] = {}
        visited = set(keys)
        frontier = sorted(keys)
        while frontier and len(seen_facts) < COMPONENT_FACTS:
            found = list(
                self.store.facts_about(
                    project,
                    frontier,
                    [role],
                    COMPONENT_FACTS - len(seen_facts),
                    seen_facts,
                    # Reports sum up what holds when they are built, not closed facts.
                    FactFilter(valid_at=timestamp(self.clock())),
                )
            )
            following: list[str] = []
            for f in found:
                seen_facts[f.id] = f
                for k in (f.subject_key, f.object_key):
                    if k and k not in visited:
                        visited.add(k)
                        following.append(k)
            frontier = following
        return sorted(seen_facts.values(), key=lambda f: (f.recorded_at, f.id))

    def rebuild_reports(self, project: str) -> int:
        """Rebuild the reports around the entities whose facts changed. Returns how
        many reports were written. Run by a worker after writes, never by a recall."""
        return self.rebuild_reports_turn(project, None)[0]

    def rebuild_reports_turn(self, project: str, max_marks: int | None) -> tuple[int, bool]:
        """`rebuild_reports` around at most `max_marks` of the changed entities (None:
        all), the first in key order: how many reports were written, and whether marks
        were left for the next turn. A rebuild around the rest may redo a report this
        one wrote (a component holding entities of both), which costs time, not truth."""
        marks = self.store.dirty_entities(project)
        more = max_marks is not None and len(marks) > max_marks
        if more:
            marks = marks[:max_marks]
        dirty: dict[Role, set[str]] = {}
        for role, key, _ in marks:
            dirty.setdefault(role, set()).add(key)
        written = 0
        # One writer per pass: its call, time and failure budgets are the pass's.
        writer = (
            SummaryWriter(self.summary_model) if self.summary_model is not None and marks else None
        )
        for role, keys in dirty.items():
            facts = self._component_facts(project, role, keys)
            reached = set(keys) | {k for f in facts for k in (f.subject_key, f.object_key) if k}
            stale = self.store.report_components(project, role, reached)
            reports = [r for r in build_reports(facts, rewrite=writer) if r.role == role]
            dropped = self.store.replace_reports(project, role, stale, reports)
            written += len(reports)
            if self.semantic is not None:
                try:
                    self.semantic.index.delete(project, "report", dropped)
                    # Only what was stored: a store may refuse reports that name an
                    # entity erased since the facts were read.
                    ids = [r.id for r in reports]
                    stored = self.store.reports_by_ids(project, ids) if ids else []
                    if stored:
                        items = [
                            PendingVector("report", r.id, f"{r.title}. {r.summary}", r.role)
                            for r in stored
                        ]
                        self._index(project, items)
                        self._unindex_vanished(project, items)
                except Exception:
                    # The marks stay, so the next pass rebuilds and indexes them again.
                    logger.exception("indexing reports failed")
                    self._count_summaries(project, writer)
                    return written, more
        self.store.clear_dirty(project, marks)
        self._count_summaries(project, writer)
        return written, more

    def _count_summaries(self, project: str, writer: SummaryWriter | None) -> None:
        if writer is None or not writer.counts:
            return
        self.summary_counts.update(writer.counts)
        logger.info(
            "report summaries of project %s: %d by the model, %d kept statements after a "
            "model failure, %d not asked (past the pass's budget)",
            project,
            writer.counts["llm"],
            writer.counts["fallback"],
            writer.counts["not_asked"],
        )

    def extract_pending(self, project: str, batch: int = EXTRACTION_BATCH) -> int:
        """Extract every message of the project waiting for it. Returns how many were
        handled (stored or recorded as failed); each leaves the pending list."""
        if self.extractor is None:
            return 0
        done = 0
        while pending := self.store.pending_extractions(project, batch):
            for message_id in pending:
                self.extract_message(project, message_id)
                done += 1
            if len(pending) < batch:
                break
        return done

    def extract_message(
        self, project: str, message_id: str, ready: Callable[[], bool] | None = None
    ) -> ExtractionResult:
        """Extract one stored message's facts: the one entry point for every worker
        (the local thread, a queue consumer). Idempotent: a message whose mark is gone
        (done, failed, or never marked) is skipped, and a retry after a crash stores
        the same facts under the same ids, once. `ready` is asked only for a message
        still to extract (it may complete erasures first, or find no time left:
        "deferred", the mark kept), so a redelivered work message costs one read."""
        if self.extractor is None or not self.store.extraction_pending(project, message_id):
            return ExtractionResult("skipped")
        if ready is not None and not ready():
            return ExtractionResult("deferred")
        message = self.store.message(project, message_id)
        if message is None:
            self.store.finish_extraction(project, message_id)
            return ExtractionResult("skipped")
        prompt = extraction_prompt(message)
        error = ""
        for attempt in range(1, EXTRACTION_ATTEMPTS + 1):
            if attempt > 1:
                time.sleep(self.retry_wait * 2 ** (attempt - 2))
            try:
                output = parse_output(self.extractor.extract(prompt))
            except ExtractionError as exc:
                error = str(exc)
            except Exception as exc:  # an adapter bug must not stall the queue either
                error = f"the extractor failed: {type(exc).__name__}"
            else:
                facts, dropped = extracted_facts(message, output, timestamp(self.clock()))
                if dropped:
                    logger.warning(
                        "extraction of message %s: %d facts dropped, quote not found",
                        message_id,
                        dropped,
                    )
                if facts:
                    self.store_extracted_facts(project, facts, message)
                # Cleared only once the facts are stored: a crash before this line
                # leaves the mark, and the retry stores the same ids once.
                self.store.finish_extraction(project, message_id)
                return ExtractionResult("stored", len(facts), dropped)
            logger.warning(
                "extraction of message %s, attempt %d of %d: %s",
                message_id,
                attempt,
                EXTRACTION_ATTEMPTS,
                error,
            )
        failure = ExtractionFailure(
            project, message_id, error, EXTRACTION_ATTEMPTS, timestamp(self.clock())
        )
        self.store.finish_extraction(project, message_id, failure)
        return ExtractionResult("failed", error=error)

    def store_extracted_facts(
        self, project: str, facts: Sequence[Fact], source: Message | None = None
    ) -> None:
        """The one way extracted facts are stored: one all-or-nothing batch, without
        facts about erased entities (a late extraction must not bring them back). In a
        user's partition, names resolve as the user's requests resolve them (the user's
        aliases over the shared ones), and the write is guarded by the user's
        tombstone: an extraction of a message recorded before the user's erasure, done
        after it, stores nothing."""
        partition = as_scope(project)
        facts = self.drop_erased(partition, facts)
        if not facts:
            return
        guard = None
        if isinstance(partition, Scope) and source is not None:
            tombstone = user_tombstone(partition.project, partition.user)
            guard = ScopeGuard(partition.project, tombstone, source.recorded_at)
        try:
            self.store.put_facts(partition, facts, guard)
        except ScopeErased:
            logger.info("extracted facts of a message of an erased user's scope: not stored")

    def replay_extractions(
        self, project: str | None = None, message_ids: Collection[str] | None = None
    ) -> list[ExtractionFailure]:
        """Put failed extractions back in the queue (the worker picks them up)."""
        return self.store.replay_extractions(project, message_ids)


@dataclass(frozen=True, slots=True)
class ExtractionResult:
    status: Literal["stored", "failed", "skipped", "deferred"]
    facts: int = 0
    # Facts the model returned whose quote is not in the message.
    dropped: int = 0
    error: str | None = None
