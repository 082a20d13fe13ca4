"""The use cases behind the routes: store, list, delete and recall memory, and the
background work that keeps reports and vectors up to date."""

from __future__ import annotations

import contextlib
import logging
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Literal, TypeVar

from .aliases import (
    PROPOSAL_FLOOR,
    PROPOSAL_NAMES,
    Alias,
    MergeProposals,
    MergeRequest,
    MergeResult,
    merge_keys,
    propose_merges,
)
from .controls import Limits, RecallRequest, resolve
from .erasure import (
    ERASURE_ID,
    MAX_PASSES,
    ErasureHeld,
    ErasurePlan,
    ErasureRecord,
    ErasureStatus,
    PendingErasure,
    PendingView,
    fact_keys,
    hide_pending,
    plan_erasure,
    plan_steps,
    subject_hash,
    tombstone_hashes,
    zero_counts,
)
from .errors import NotFound
from .extraction import EXTRACTION_ATTEMPTS, extracted_facts, extraction_prompt, parse_output
from .filters import FactFilter
from .ingest import (
    ID_PATTERN,
    FactsRequest,
    MessagesRequest,
    make_fact,
    make_message,
    split_passages,
    timestamp,
)
from .listing import (
    NEIGHBOURHOOD_FACTS,
    EntityCounts,
    EntityPage,
    MessagePage,
    Neighbourhood,
    ShownMessage,
    check_message_id,
    check_page,
    decode_cursor,
    encode_cursor,
    neighbourhood_graph,
)
from .model import ROLES, ExtractionFailure, Fact, PendingVector, Role, VectorItem, VectorKind
from .names import normalize_name
from .ports.extractor import ExtractionError, Extractor
from .ports.store import Store
from .recall import Semantic, recall
from .recalled import RecallAnswer
from .reports import build_reports
from .summaries import SummaryWriter
from .words import forget_words
from .work import EXTRACTION_BATCH, VECTOR_BATCH, has_work

logger = logging.getLogger(__name__)
_T = TypeVar("_T")

# A rebuild reads at most this many facts of one component: it bounds the work one
# write can cause (a giant component is summarised from its first facts).
COMPONENT_FACTS = 20_000
# Seconds before the second attempt at an extraction (then doubled): a throttled or
# briefly unreachable model gets a moment before the next call.
EXTRACTION_RETRY_WAIT = 0.5
# The worker starts an erasure step only with this much of its time left: a step is
# at most STEP_FACTS facts or STEP_MESSAGES messages (domain/erasure.py), plus the
# plan before it, which reads the project.
ERASURE_STEP_SECONDS = 120.0
# How long a holder with no time bound (the embedded store's request) holds an
# erasure before another may take it over: far beyond an erasure's work there.
ERASURE_HOLD_SECONDS = 900.0


_BESIDE = ThreadPoolExecutor(max_workers=4, thread_name_prefix="beside")


def _beside(store: Store, read: Callable[[], _T]) -> Callable[[], _T]:
    """Start `read` now, in a thread if the store reads in parallel (its calls are
    round trips), else when asked; returns how to get its result."""
    if getattr(store, "parallel_reads", False):
        future = _BESIDE.submit(read)
        return future.result
    return read


def _now() -> datetime:
    return datetime.now(UTC)


class Memory:
    def __init__(
        self,
        store: Store,
        limits: Limits,
        *,
        semantic: Semantic | None = None,
        clock: Callable[[], datetime] = _now,
        extractor: Extractor | None = None,
        retry_wait: float = EXTRACTION_RETRY_WAIT,
        summary_model: Extractor | None = None,
    ) -> None:
        self.store = store
        self.limits = limits
        self.semantic = semantic
        self.clock = clock
        self.extractor = extractor
        # Seconds before the second attempt at an extraction, doubling after.
        self.retry_wait = retry_wait
        # The model that writes report summaries (None: built from statements), and
        # how the summaries of this process's rebuilds were written (domain/summaries.py).
        self.summary_model = summary_model
        self.summary_counts: Counter[str] = Counter()

    # -- writes ----------------------------------------------------------------

    def store_facts(self, project: str, request: FactsRequest) -> list[str]:
        recorded_at = timestamp(self.clock())
        facts = [make_fact(given, recorded_at) for given in request.facts]
        # Facts stored on purpose about an erased name bring it back: its tombstone is
        # lifted first, so a worker that rebuilds their reports at once is not refused
        # them (the embedded store refuses reports holding a tombstoned name).
        self._lift_tombstones(project, facts)
        # The store marks names new to a role, and passages, for the worker to embed:
        # storing never waits on the model.
        self.store.put_facts(project, facts)
        return [f.id for f in facts]

    def store_messages(self, project: str, request: MessagesRequest) -> list[str]:
        recorded_at = timestamp(self.clock())
        messages = [make_message(given, recorded_at) for given in request.messages]
        passages = [p for m in messages for p in split_passages(m)]
        self.store.put_messages(project, messages, passages)
        return [m.id for m in messages]

    def _index(self, project: str, items: Sequence[PendingVector]) -> None:
        """Embed items in one model call per batch and index them by kind. Raises
        if the model or the index fails (the caller keeps them pending)."""
        assert self.semantic is not None
        vectors = self.semantic.embedder.embed([i.text for i in items])
        by_kind: dict[VectorKind, list[VectorItem]] = {}
        for item, vector in zip(items, vectors, strict=True):
            # A fact's statement is not copied into the index's text side: recall
            # scores facts' words itself, over the candidates it may see.
            text = None if item.kind == "fact" else item.text
            by_kind.setdefault(item.kind, []).append(
                VectorItem(item.id, vector, item.role, text, item.position, item.occurred_at)
            )
        for kind, batch in by_kind.items():
            self.semantic.index.upsert(project, kind, batch)

    def index_pending(self, project: str, batch: int = VECTOR_BATCH) -> int:
        """Embed and index what storing left pending, a batch at a time. Returns how
        many were indexed; what fails stays pending for the next pass."""
        if self.semantic is None:
            return 0
        done = 0
        while pending := self.store.pending_vectors(project, batch):
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

    def delete_fact(self, project: str, fact_id: str) -> None:
        if not re.fullmatch(ID_PATTERN, fact_id):
            # No fact can have such an id: answered without echoing it or asking the store.
            raise NotFound("no fact with that id (ids are 1-128 characters of A-Z a-z 0-9 ._:@-)")
        if not self.store.delete_fact(project, fact_id):
            raise NotFound(f"no fact with id {fact_id!r}")
        if self.semantic is not None:
            # Best effort: a vector left behind is never read (recall scores only the
            # facts the store still holds).
            try:
                self.semantic.index.delete(project, "fact", [fact_id])
            except Exception:
                logger.exception("deleting a fact's vector failed")

    # -- reads -----------------------------------------------------------------

    def facts_of_subject(self, project: str, subject: str) -> list[Fact]:
        """The facts whose subject is this name (an alias: its entity), in storing order."""
        key = normalize_name(subject)
        # An alias lists the facts of its entity (domain/aliases.py).
        key = self.store.resolve_names(project, [key]).get(key, key)
        view = _beside(self.store, lambda: self.pending_view(project))
        facts = self.store.facts_with_subject(project, key)
        hidden = view()
        return [f for f in facts if not hidden.hides_fact(f)]

    # -- listings (the memory explorer; domain/listing.py) -------------------------

    def entity_page(
        self, project: str, search: str | None, limit: int | None, cursor: str | None
    ) -> EntityPage:
        """Entities (not aliases) by key, each with its live facts per role; `search`
        keeps those whose normalised name holds the normalised text."""
        size = check_page(limit)
        after = decode_cursor("entities", cursor, 1)[0] if cursor else None
        contains = normalize_name(search) if search else None
        view = _beside(self.store, lambda: self.pending_view(project))
        rows = self.store.entity_page(project, after, size + 1, contains or None)
        page = rows[:size]
        more = len(rows) > size
        hidden = view()
        shown = [e for e in page if not hidden.hides_entity(e.key)]
        if hidden.keys:
            shown = self._left_of(project, shown, hidden)
        # A page can come out short while an erasure is pending; the cursor goes on
        # from the last entity read.
        return EntityPage(shown, encode_cursor("entities", [page[-1].key]) if more else None)

    def _left_of(
        self, project: str, entities: list[EntityCounts], hidden: PendingView
    ) -> list[EntityCounts]:
        """The entities as a pending erasure will leave them: their facts counted again
        without those the erasure takes (links to the erased entity, facts that name it),
        and those left with none dropped. One read of the listed entities' facts (on
        DynamoDB a Query per entity, in one wave), only while an erasure is pending: the
        counts the store keeps would still show what is going."""
        if not entities:
            return []
        keys = [e.key for e in entities]
        held = sum(sum(e.counts.values()) for e in entities)
        counts: dict[str, Counter[Role]] = {key: Counter() for key in keys}
        # Each fact comes once: it counts for each listed entity it names, as a read
        # per entity would have found it for each.
        for fact in self.store.facts_about(project, keys, ROLES, limit=held):
            if hidden.hides_fact(fact):
                continue
            for key in {fact.subject_key, fact.object_key}:
                if key in counts:
                    counts[key][fact.source_role] += 1
        return [replace(e, counts=dict(counts[e.key])) for e in entities if counts[e.key]]

    def message_page(
        self,
        project: str,
        role: Role | None,
        source: str | None,
        limit: int | None,
        cursor: str | None,
        passages: bool = False,
    ) -> MessagePage:
        """Messages newest first (by recorded_at, then id), of one role and/or source;
        with `passages`, each with its passages (by start), read for the page at once."""
        size = check_page(limit)
        before = tuple(decode_cursor("messages", cursor, 2)) if cursor else None
        view = _beside(self.store, lambda: self.pending_view(project))
        rows = self.store.message_page(project, before, size + 1, role, source)  # type: ignore[arg-type]
        page = rows[:size]
        more = len(rows) > size
        last = page[-1] if page else None
        # Messages that name an entity being erased are shown as the erasure will
        # leave them, which needs their passages.
        hidden = view()
        named = [m.id for m in page if hidden.names_message(m)]
        wanted = [m.id for m in page] if passages else named
        held = self.store.passages_of_messages(project, wanted) if wanted else {}
        listed = []
        for m in page:
            shown, kept = hidden.message(m, held.get(m.id, []))
            listed.append(ShownMessage(shown, kept if passages else None))
        return MessagePage(
            listed,
            encode_cursor("messages", [last.recorded_at, last.id]) if more and last else None,
        )

    def shown_message(self, project: str, message_id: str) -> ShownMessage:
        """One message with its passages (by start), as the pending erasures leave them."""
        check_message_id(message_id)
        view = _beside(self.store, lambda: self.pending_view(project))
        m = self.store.message(project, message_id)
        if m is None:
            raise NotFound(f"no message with id {message_id!r}")
        m, passages = view().message(m, self.store.passages_of(project, message_id))
        return ShownMessage(m, passages)

    def neighbourhood_of(self, project: str, name: str, hops: int) -> Neighbourhood:
        """The facts (every role, live ones) naming an entity, and with hops 2 those
        of the entities they link to: at most NEIGHBOURHOOD_FACTS in all."""
        key = normalize_name(name)
        key = self.store.resolve_names(project, [key]).get(key, key)
        view = _beside(self.store, lambda: self.pending_view(project))
        live = FactFilter(valid_at=timestamp(self.clock()))
        walked: list[tuple[Fact, int]] = []
        seen: set[str] = set()
        found = self.store.facts_about(project, [key], ROLES, NEIGHBOURHOOD_FACTS, filters=live)
        hidden = view()
        for f in found:
            seen.add(f.id)
            if not hidden.hides_fact(f):
                walked.append((f, 1))
        if hops == 2:
            ends = [k for f, _ in walked for k in (f.subject_key, f.object_key)]
            further = [k for k in dict.fromkeys(ends) if k is not None and k != key]
            room = NEIGHBOURHOOD_FACTS - len(walked)
            if further and room > 0:
                more = self.store.facts_about(
                    project, further, ROLES, room, exclude=seen, filters=live
                )
                walked += [(f, 2) for f in more if not hidden.hides_fact(f)]
        return neighbourhood_graph(key, walked)

    def recall_answer(self, project: str, request: RecallRequest) -> RecallAnswer:
        """One recall (domain/recall.py), without what pending erasures will remove."""
        controls = resolve(request, self.limits)
        # The pending erasures are read beside the recall (one more read, in parallel
        # where the store reads in parallel): their names are hidden from the answer.
        erasing = _beside(self.store, lambda: self.erasing_names(project))
        answer = recall(
            self.store,
            project,
            request.question,
            controls,
            semantic=self.semantic,
            now=timestamp(self.clock()),
        )
        return hide_pending(answer, erasing())

    # -- background work ---------------------------------------------------------

    def work_pending(self) -> bool:
        """Whether any project has work for the worker (domain/work.py says which)."""
        return has_work(self)

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
        marks = self.store.dirty_entities(project)
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
                    return written
        self.store.clear_dirty(project, marks)
        self._count_summaries(project, writer)
        return written

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

    # -- erasure (domain/erasure.py) ---------------------------------------------------

    def erase(self, project: str, subject: str) -> dict[str, int]:
        """Erase everything held about the entity `subject` now; returns what was removed.

        Idempotent: erasing a name nothing is held about removes nothing (zero counts),
        and a retry after a failure part-way finishes the job."""
        return self.request_erasure(project, subject, defer=False).counts

    def request_erasure(self, project: str, subject: str, *, defer: bool) -> ErasureStatus:
        """Accept an erasure: its tombstones and its pending record first (durable, so
        nothing is lost if the rest fails; recall hides the names from now on), then,
        unless `defer`, complete it in this call. Deferred, the worker completes it
        (complete_erasure) and the status says pending until then."""
        key = normalize_name(subject)
        # An entity is all its names: erasing an alias or the entity erases the entity
        # and every alias merged into it (docs/API.md, "Erasure").
        entity = self.store.resolve_names(project, [key]).get(key, key)
        merged = {a.alias_key for a in self.store.aliases(project) if a.into_key == entity}
        names = (key, *sorted(({entity} | merged) - {key}))
        # The tombstones first: an extraction that checks them cannot re-create the
        # entity while it is being erased.
        for name in names:
            self.store.erase(project, ErasurePlan(subject_hash(project, name)))
        now = self.clock()
        # Completed here: held by this request from the start, so that the worker
        # (the local one polls) does not take it up beside it.
        holder = None if defer else f"request_{uuid.uuid4().hex}"
        pending = PendingErasure(
            id=f"era_{uuid.uuid4().hex}",
            project=project,
            subject_hash=subject_hash(project, key),
            names=names,
            requested_at=timestamp(now),
            holder=holder,
            held_until=None if defer else now.timestamp() + ERASURE_HOLD_SECONDS,
        )
        self.store.begin_erasure(pending)
        if defer:
            return ErasureStatus(pending.id, "pending", zero_counts(), pending.requested_at)
        status = self.complete_erasure(project, pending.id, holder=holder)
        assert status is not None  # recorded just above
        return status

    def complete_erasure(
        self,
        project: str,
        erasure_id: str,
        seconds_left: Callable[[], float] | None = None,
        *,
        holder: str | None = None,
    ) -> ErasureStatus | None:
        """Do a pending erasure's work in bounded steps (plan_steps) and finish it.
        Idempotent and resumable: each plan is made from what the store still holds,
        so a retry, a duplicate message or a step that failed part-way erases what is
        left and never brings anything back; the audit record is written once
        (finish_erasure). With `seconds_left`, stops between steps when fewer than
        ERASURE_STEP_SECONDS are left and returns the pending status (the caller
        queues the rest). None for an id the project never had. Raises ErasureHeld if
        another holder is working on it (claim_erasure): one at a time, so that no
        step's counts are lost to another's finish."""
        holder = holder or f"worker_{uuid.uuid4().hex}"
        now = self.clock().timestamp()
        hold = seconds_left() if seconds_left is not None else ERASURE_HOLD_SECONDS
        held = self.store.claim_erasure(project, erasure_id, holder, now, now + hold)
        # Read once held: with the counts of any holder before this one.
        pending = self.store.pending_erasure(project, erasure_id)
        if pending is None:  # finished already, or never this project's
            return self.store.erasure_status(project, erasure_id)
        if not held:
            raise ErasureHeld(erasure_id)
        try:
            return self._complete_held(pending, holder, now, seconds_left)
        except Exception:
            # Let go, so that the retry (a message, the sweep, the local worker) need
            # not wait out the hold; what was erased stays erased and counted.
            with contextlib.suppress(Exception):
                self.store.claim_erasure(project, erasure_id, holder, now, 0.0)
            raise

    def _complete_held(
        self,
        pending: PendingErasure,
        holder: str,
        now: float,
        seconds_left: Callable[[], float] | None,
    ) -> ErasureStatus | None:
        """complete_erasure's work, once `holder` holds the erasure."""
        project, erasure_id = pending.project, pending.id
        counts = dict(pending.counts)
        first = True

        def out_of_time() -> bool:
            return seconds_left is not None and seconds_left() < ERASURE_STEP_SECONDS

        for name in pending.names:
            for _ in range(MAX_PASSES):
                plan = plan_erasure(self.store, project, name)
                if plan.empty:
                    break
                # In bounded steps only where time is bounded (the Lambda worker); in one
                # call otherwise: the embedded store then erases in one transaction, which
                # its byte-level guarantee (no trace left in the file) was measured on.
                steps = plan_steps(plan) if seconds_left is not None else [plan]
                for step in steps:
                    if out_of_time():
                        # Let go at once: the message queued for the rest takes it up.
                        self.store.claim_erasure(project, erasure_id, holder, now, 0.0)
                        return ErasureStatus(erasure_id, "pending", counts, pending.requested_at)
                    reports = self.store.erase(project, step)
                    done = step.counts(reports)
                    if not first:  # every step carries the entity keys; counted once
                        done["entities"] = 0
                    first = False
                    self.store.add_erasure_counts(project, erasure_id, done)
                    for kind, count in done.items():
                        counts[kind] += count
        self.store.remove_aliases(project, pending.names)
        self.flush_erased_vectors(project)
        forget_words()
        finished_at = timestamp(self.clock())
        record = ErasureRecord(
            id=erasure_id,
            project=project,
            subject_hash=pending.subject_hash,
            erased_at=finished_at,
            **counts,
        )
        if self.store.finish_erasure(record, pending.requested_at):
            return ErasureStatus(erasure_id, "done", counts, pending.requested_at, finished_at)
        return self.store.erasure_status(project, erasure_id)

    def erasure_status(self, project: str, erasure_id: str) -> ErasureStatus:
        if not ERASURE_ID.fullmatch(erasure_id):
            raise NotFound("no erasure with this id")
        status = self.store.erasure_status(project, erasure_id)
        if status is None:
            raise NotFound("no erasure with this id")
        return status

    def erasing_names(self, project: str) -> set[str]:
        """The names of this project's pending erasures (recall hides them)."""
        return {n for p in self.store.pending_erasures(project) for n in p.names}

    def pending_view(self, project: str) -> PendingView:
        """How the reads show what the pending erasures will leave."""
        return PendingView(tuple(sorted(self.erasing_names(project))))

    def flush_erased_vectors(self, project: str) -> int:
        """Delete from the vector index what erasures left recorded; raises if the index
        fails (the ids stay recorded, so the next erasure retries them)."""
        items = self.store.erased_vectors(project)
        if not items:
            return 0
        if self.semantic is None:
            # No index to delete from; kept, the ids (an entity's holds its name) would
            # outlive the erasure.
            self.store.clear_erased_vectors(project, items)
            return 0
        by_kind: dict[VectorKind, list[str]] = {}
        for kind, item_id in items:
            by_kind.setdefault(kind, []).append(item_id)
        for kind, ids in by_kind.items():
            self.semantic.index.delete(project, kind, ids)
        self.store.clear_erased_vectors(project, items)
        return len(items)

    def erased_names(self, project: str, keys: Collection[str]) -> set[str]:
        """Which of these normalised names have been erased (and not stored again)."""
        hashes = tombstone_hashes(project, keys)
        return {hashes[h] for h in self.store.erased(project, list(hashes))}

    def drop_erased(self, project: str, facts: Sequence[Fact]) -> list[Fact]:
        """The facts that name no erased entity, in order: extraction runs this before
        storing, so a late extraction never brings an erased entity back. A fact names
        an entity as erasure decides it: as subject or entity object, or as whole words
        in its texts (names of up to 12 words; longer ones only as subject or object)."""
        keys = [fact_keys(f) for f in facts]
        erased = self.erased_names(project, set().union(*keys)) if facts else set()
        return [f for f, named in zip(facts, keys, strict=True) if not named & erased]

    def _lift_tombstones(self, project: str, facts: Sequence[Fact]) -> None:
        ends = {k for f in facts for k in (f.subject_key, f.object_key) if k}
        hashes = tombstone_hashes(project, ends)
        erased = self.store.erased(project, list(hashes))
        if erased:
            self.store.clear_erased(project, erased)

    # -- entities and aliases (domain/aliases.py) ----------------------------------

    def merge(self, project: str, request: MergeRequest) -> MergeResult:
        alias_key, into_key = merge_keys(request.alias, request.into)
        return self.store.merge_entities(project, alias_key, request.alias, into_key, request.into)

    def alias_list(self, project: str) -> list[Alias]:
        """Every alias of the project, by normalised alias."""
        return list(self.store.aliases(project))

    def proposals(self, project: str) -> MergeProposals:
        """Pairs of names similar enough to be one entity; degraded (and no pairs) when
        no model is configured or the model or index failed."""
        if self.semantic is None:
            return MergeProposals(PROPOSAL_FLOOR, [], ["proposals"])
        names = self.store.entity_names(project, PROPOSAL_NAMES)
        try:
            found = propose_merges(project, names, self.semantic.embedder, self.semantic.index)
        except Exception:  # a model or index failure degrades the answer, never fails it
            logger.exception("proposing merges failed")
            return MergeProposals(PROPOSAL_FLOOR, [], ["proposals"])
        return MergeProposals(PROPOSAL_FLOOR, found, [])

    # -- extraction (messages -> facts) ----------------------------------------------

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

    def extract_message(self, project: str, message_id: str) -> ExtractionResult:
        """Extract one stored message's facts: the one entry point for every worker
        (the local thread, a queue consumer). Idempotent: a message whose mark is gone
        (done, failed, or never marked) is skipped, and a retry after a crash stores
        the same facts under the same ids, once."""
        if self.extractor is None or not self.store.extraction_pending(project, message_id):
            return ExtractionResult("skipped")
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
                    self.store_extracted_facts(project, facts)
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

    def store_extracted_facts(self, project: str, facts: Sequence[Fact]) -> None:
        """The one way extracted facts are stored: one all-or-nothing batch, without
        facts about erased entities (a late extraction must not bring them back)."""
        facts = self.drop_erased(project, facts)
        if facts:
            self.store.put_facts(project, facts)

    def replay_extractions(
        self, project: str | None = None, message_ids: Collection[str] | None = None
    ) -> list[ExtractionFailure]:
        """Put failed extractions back in the queue (the worker picks them up)."""
        return self.store.replay_extractions(project, message_ids)


@dataclass(frozen=True, slots=True)
class ExtractionResult:
    status: Literal["stored", "failed", "skipped"]
    facts: int = 0
    # Facts the model returned whose quote is not in the message.
    dropped: int = 0
    error: str | None = None
