"""The memory's erasure use cases (the rules and the plan are domain/erasure.py): an
erasure requested, held by one worker and completed in bounded steps, its status, and
what reads and recalls hide while it is pending. Part of `Memory` (service/memory.py)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from datetime import datetime

from ..domain.erasable import refusal
from ..domain.erasure import (
    ERASURE_ID,
    MAX_PASSES,
    ErasureHeld,
    PendingView,
    fact_keys,
    plan_erasure,
    plan_steps,
    subject_hash,
    tombstone_hashes,
    tombstone_keys,
    user_tombstone,
)
from ..domain.erasure_pages import PlanCursor, plan_page
from ..domain.erasure_preview import (
    ErasurePreview,
    Reach,
    entity_keys,
    messages_of,
    needs_token_problem,
    preview_of,
    preview_token_matches,
    reach_of,
)
from ..domain.errors import ErasurePending, InvalidRequest, NotFound
from ..domain.model import (
    ErasureRecord,
    ErasureStatus,
    Fact,
    PendingErasure,
    VectorKind,
    zero_counts,
)
from ..domain.names import normalize_name
from ..domain.ports.store import Store
from ..domain.scope import (
    USER_ERASURE,
    Scope,
    ScopeErased,
    ScopeGuard,
    erased_user,
    project_of_partition,
    user_erasure_names,
    user_of,
)
from ..domain.semantic import Semantic
from ..domain.timestamps import parse_timestamp, timestamp
from ..domain.words import forget_words

# The worker starts an erasure step only with this much of its time left: a step is
# at most STEP_FACTS facts or STEP_MESSAGES messages (domain/erasure.py), plus the
# plan before it, which reads the project.
ERASURE_STEP_SECONDS = 120.0

# How long a holder with no time bound (the embedded store's request) holds an
# erasure before another may take it over: far beyond an erasure's work there.
ERASURE_HOLD_SECONDS = 900.0

# Why a write into a user's scope is refused while that user's erasure is pending.
_PENDING = (
    "this user's erasure is pending: nothing was written; send it again once the "
    "erasure is done (its status_url reads done)"
)

# A paged erasure saves where it stands at least every this many pages read.
SAVE_EVERY = 20

# A user's paged erasure scans the user's partition a second time, started once this
# many seconds (Memory.late_writes) have passed since it was accepted: a write into the
# scope checks for the erasure before it writes, so one that checked just before the
# erasure was accepted can land after the first scan passed its keys. No write lasts
# longer than its function's timeout, so none lands after the second scan began. Its
# cursors carry this prefix.
RESCAN = "rescan|"


class ErasureCases:
    """Memory's erasure use cases; Memory.__init__ sets what it holds."""

    store: Store
    semantic: Semantic | None
    clock: Callable[[], datetime]
    # The longest a write request can last (its function's timeout, with a margin): a
    # user's paged erasure scans again once this has passed since it was accepted (0:
    # no second scan, for a caller with no concurrent writes).
    late_writes: float
    sleep: Callable[[float], None]

    def erase_user(self, partition: str) -> ErasureStatus:
        """Erase everything in one user's scope (messages, passages, facts, entities,
        aliases, reports, vectors); the shared memory is untouched. The tombstone and
        the audit record go under the project and name the user by a hash only. The
        embedded store erases it now, in one transaction; a store that erases in steps
        (DynamoDB) records a pending erasure of the project, completed in pages by the
        worker (complete_erasure), the status pending until then."""
        if not isinstance(partition, Scope):
            raise InvalidRequest("user is required to erase a user's scope")
        hashed = user_tombstone(partition.project, partition.user)
        erase_scope = getattr(self.store, "erase_scope", None)
        if erase_scope is None:
            return self._request_user_erasure(partition, hashed)
        now = timestamp(self.clock())
        record = ErasureRecord(
            id=f"era_{uuid.uuid4().hex}",
            project=partition.project,
            subject_hash=hashed,
            erased_at=now,
        )
        counts = erase_scope(str(partition), hashed, record)
        # No erased text stays in this process's caches either.
        forget_words()
        return ErasureStatus(record.id, "done", counts, requested_at=now, finished_at=now)

    def refuse_while_erasing(self, partition: str) -> None:
        """Refuse a write into a user's scope while that user's erasure is pending: it
        would be taken by the erasure after being accepted, or, written behind the
        erasure's cursor, outlive it. One Query (the project's pending erasures) before
        a user's write, on a store that erases a user in pages only (the embedded store
        erases a user in one transaction, so none is ever pending there)."""
        if self.user_erasing(partition):
            raise ErasurePending(_PENDING)

    def user_erasing(self, partition: str) -> bool:
        """Whether the partition's user (a Scope's) has an erasure pending: one Query
        of the project's pending erasures, on a store that erases a user in pages."""
        user = user_of(partition)
        if user is None or getattr(self.store, "erase_scope_page", None) is None:
            return False
        pending = self.store.pending_erasures(project_of_partition(partition))
        return any(erased_user(p.names) == user for p in pending)

    def put_user_facts(self, partition: str, facts: list[Fact], recorded_at: str) -> dict[str, str]:
        """Store facts; a user's, on a store that erases a user in pages, guarded by the
        user's tombstone in the write itself: an erasure accepted after the request's
        check of the pending erasures (and after `recorded_at`) refuses it whole."""
        user = user_of(partition)
        if user is None or getattr(self.store, "erase_scope_page", None) is None:
            return self.store.put_facts(partition, facts)
        project = project_of_partition(partition)
        guard = ScopeGuard(project, user_tombstone(project, user), recorded_at)
        try:
            return self.store.put_facts(partition, facts, guard=guard)
        except ScopeErased:
            raise ErasurePending(_PENDING) from None

    def _request_user_erasure(self, partition: Scope, hashed: str) -> ErasureStatus:
        """A user's erasure on a store that erases a page at a time: its tombstone first
        (an extraction finishing later checks it and writes nothing into the scope),
        then its pending record under the project, for the worker."""
        if getattr(self.store, "erase_scope_page", None) is None:
            raise InvalidRequest("erasing everything of a user is not available on this store")
        now = timestamp(self.clock())
        self.store.add_tombstones(partition.project, [hashed], at=now)
        pending = PendingErasure(
            id=f"era_{uuid.uuid4().hex}",
            project=partition.project,
            subject_hash=hashed,
            names=user_erasure_names(partition.user),
            requested_at=now,
        )
        self.store.begin_erasure(pending)
        return ErasureStatus(pending.id, "pending", zero_counts(), pending.requested_at)

    def erase_now(
        self, project: str, subject: str, also: Sequence[str] = (), token: str | None = None
    ) -> dict[str, int]:
        """Erase everything held about the entity `subject` now (and the entities named
        in `also`); returns what was removed.

        Idempotent: erasing a name nothing is held about removes nothing (zero counts),
        and a retry after a failure part-way finishes the job."""
        status = self.request_erasure(project, subject, defer=False, also=also, token=token)
        return status.counts

    def request_erasure(
        self,
        project: str,
        subject: str,
        *,
        defer: bool | None = None,
        also: Sequence[str] = (),
        token: str | None = None,
    ) -> ErasureStatus:
        """Accept an erasure: its tombstones and its pending record first (durable, so
        nothing is lost if the rest fails; recall hides the names from now on), then,
        unless deferred, complete it in this call. Deferred, the worker completes it
        (complete_erasure) and the status says pending until then. `defer` None: as
        the store's capabilities say (defers_erasure)."""
        refused = refusal(subject)
        if refused:
            # The HTTP route refuses it first (ErasureRequest); every other caller here.
            raise InvalidRequest(f"subject {refused}")
        # A name's erasure in a user's memory that is itself being erased: refused, its
        # record and status would go with the user's.
        self.refuse_while_erasing(project)
        if defer is None:
            defer = self.store.capabilities.defers_erasure
        key = normalize_name(subject)
        reach = self._reach(project, key, also)
        if reach.needs_token and not preview_token_matches(project, reach, token):
            raise InvalidRequest(needs_token_problem(reach))
        names, spared = reach.names, reach.spared
        # The tombstones first: an extraction that checks them cannot re-create the
        # entity while it is being erased.
        tombstoned = [k for name in names for k in tombstone_keys(name)]
        self.store.add_tombstones(project, [subject_hash(project, k) for k in tombstoned])
        now = self.clock()
        # Completed here: held by this request from the start, so that the worker
        # (the local one polls) does not take it up beside it.
        holder = None if defer else f"request_{uuid.uuid4().hex}"
        pending = PendingErasure(
            id=f"era_{uuid.uuid4().hex}",
            project=project,
            subject_hash=subject_hash(project, key),
            names=names,
            spared=spared,
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

        def out_of_time() -> bool:
            return seconds_left is not None and seconds_left() < ERASURE_STEP_SECONDS

        # A store that defers erasure (DynamoDB) plans a page at a time, so that the
        # worker's memory is one page's whatever the project's size; the embedded store
        # plans the whole entity and erases it in one transaction, which its byte-level
        # guarantee (no trace left in the file) was measured on.
        user = erased_user(pending.names)
        if user is not None:
            stopped = self._erase_user_pages(
                pending, Scope(project, user), counts, out_of_time, seconds_left is not None
            )
        elif self.store.capabilities.defers_erasure:
            stopped = self._erase_in_pages(pending, counts, out_of_time)
        else:
            stopped = self._erase_whole(pending, counts, out_of_time, seconds_left is not None)
        if stopped:
            # Let go at once: the message queued for the rest takes it up.
            self.store.claim_erasure(project, erasure_id, holder, now, 0.0)
            return ErasureStatus(erasure_id, "pending", counts, pending.requested_at)
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

    def _erase_whole(
        self,
        pending: PendingErasure,
        counts: dict[str, int],
        out_of_time: Callable[[], bool],
        in_steps: bool,
    ) -> bool:
        """Each name planned whole, applied in one step (or in bounded steps where time
        is bounded), adding to `counts`; True if it stopped for time."""
        first = True
        for name in pending.names:
            for _ in range(MAX_PASSES):
                plan = plan_erasure(self.store, pending.project, name, pending.spared)
                if plan.empty:
                    break
                for step in plan_steps(plan) if in_steps else [plan]:
                    if out_of_time():
                        return True
                    done = step.counts(self.store.erase(pending.project, step))
                    if not first:  # every step carries the entity keys; counted once
                        done["entities"] = 0
                    first = False
                    self._count(pending, counts, done)
        return False

    def _erase_in_pages(
        self, pending: PendingErasure, counts: dict[str, int], out_of_time: Callable[[], bool]
    ) -> bool:
        """Each name planned a page at a time from where the erasure stands
        (domain/erasure_pages.py), each page's step applied with its counts and the
        cursor after it, adding to `counts`; True if it stopped for time."""
        names = pending.names
        cursor: PlanCursor | None = PlanCursor.loads(pending.cursor)
        unsaved = 0
        while cursor is not None and cursor.name < len(names):
            if out_of_time():
                return True
            page = plan_page(self.store, pending.project, names, cursor, pending.spared)
            done = zero_counts()
            if page.step is not None:
                done = page.step.counts(self.store.erase(pending.project, page.step))
                if not page.counts_entities:  # later steps carry them too
                    done["entities"] = 0
            cursor = page.after or PlanCursor(len(names))
            unsaved += 1
            # Saved with every step (its counts) and every SAVE_EVERY pages: a retry from
            # an older cursor reads those pages again and finds nothing left in them.
            if page.step is not None or unsaved >= SAVE_EVERY or cursor.name == len(names):
                self._count(pending, counts, done, cursor.dumps())
                unsaved = 0
        return False

    def _erase_user_pages(
        self,
        pending: PendingErasure,
        partition: Scope,
        counts: dict[str, int],
        out_of_time: Callable[[], bool],
        waits: bool,
    ) -> bool:
        """A user's scope erased a page at a time from where the erasure stands (the
        store's cursor, saved with each page's counts), then its vectors deleted from
        the index and their record dropped; True if it stopped for time (or, without
        `waits`, before the second scan: see RESCAN)."""
        saved = pending.cursor
        while saved != USER_ERASURE:  # not every page of both scans done yet
            rescan = saved is not None and saved.startswith(RESCAN)
            cursor = saved
            if saved is not None and rescan:
                cursor = saved.removeprefix(RESCAN) or None
                if cursor is None and not self._late_writes_over(pending, out_of_time, waits):
                    return True
            if out_of_time():
                return True
            done, cursor = self.store.erase_scope_page(str(partition), cursor)  # type: ignore[attr-defined]
            if cursor is not None:
                saved = RESCAN + cursor if rescan else cursor
            else:
                saved = USER_ERASURE if rescan or self.late_writes <= 0 else RESCAN
            self._count(pending, counts, done, saved)
        self.flush_erased_vectors(partition)
        self.store.erase_scope_finish(str(partition))  # type: ignore[attr-defined]
        return False

    def _late_writes_over(
        self, pending: PendingErasure, out_of_time: Callable[[], bool], waits: bool
    ) -> bool:
        """Whether no write that checked before the erasure was accepted can still land
        (`late_writes` after it was accepted). A pass bounded in time (`waits`: a queue's,
        whose continuation would come at once) waits for it; False if its time ends
        first. The local worker's pass does not hold its one thread: it comes back on
        its own timer."""
        accepted = parse_timestamp(pending.requested_at).timestamp()
        while (left := accepted + self.late_writes - self.clock().timestamp()) > 0:
            if not waits or out_of_time():
                return False
            self.sleep(min(left, 1.0))
        return True

    def _count(
        self,
        pending: PendingErasure,
        counts: dict[str, int],
        done: dict[str, int],
        cursor: str | None = None,
    ) -> None:
        self.store.add_erasure_counts(pending.project, pending.id, done, cursor)
        for kind, count in done.items():
            counts[kind] += count

    def erasure_status(self, project: str, erasure_id: str) -> ErasureStatus:
        if not ERASURE_ID.fullmatch(erasure_id):
            raise NotFound("no erasure with this id")
        status = self.store.erasure_status(project, erasure_id)
        if status is None:
            raise NotFound("no erasure with this id")
        return status

    def erasing_names(self, project: str) -> set[str]:
        """The names of this project's pending erasures (recall hides them)."""
        return set(self.pending_view(project).keys)

    def pending_view(self, project: str) -> PendingView:
        """How the reads show what the pending erasures will leave: their names, and
        the names they spare that none of them erases."""
        pending = self.store.pending_erasures(project)
        view = _view_of(pending)
        user = user_of(project)
        # A user's erasure is recorded under the project, which a user's request reads
        # with its own partition: no read more to know whether its user is going.
        if user is None or not any(erased_user(p.names) == user for p in pending):
            return view
        shared = project_of_partition(project)
        return replace(view, shared_only=_view_of([p for p in pending if p.project == shared]))

    # -- what an erasure reaches, and its preview ----------------------------------

    def _reach(self, project: str, key: str, also: Sequence[str]) -> Reach:
        """The names an erasure of `key` takes and spares (domain/erasure_preview.py)."""
        # An entity is all its names: erasing an alias or the entity erases the entity
        # and every alias merged into it (docs/API.md, "Erasure").
        entity = self.store.resolve_names(project, [key]).get(key, key)
        aliases = self.store.aliases(project)
        merged = {a.alias_key for a in aliases if a.into_key == entity}
        known = set(entity_keys(self.store, project)) | {a.alias_key for a in aliases}
        reach = reach_of(key, entity, merged, known, [normalize_name(a) for a in also])
        if reach.is_entity:
            return reach
        # A subject that is no entity: what share of the messages it would mask.
        view, masked, messages = reach.view, 0, 0
        for message in messages_of(self.store, project):
            messages += 1
            masked += view.names_message(message)
        return replace(reach, masked=masked, messages=messages)

    def preview_erasure(
        self, project: str, subject: str, also: Sequence[str] = ()
    ) -> ErasurePreview:
        """What an erasure of `subject` would take, nothing removed (`dry_run`)."""
        refused = refusal(subject)
        if refused:
            raise InvalidRequest(f"subject {refused}")
        self.refuse_while_erasing(project)
        reach = self._reach(project, normalize_name(subject), also)
        return preview_of(self.store, project, reach)

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

    def _lift_tombstones(
        self, project: str, facts: Sequence[Fact], before_write: Callable[[], None]
    ) -> None:
        ends = {
            t for f in facts for k in (f.subject_key, f.object_key) if k for t in tombstone_keys(k)
        }
        hashes = tombstone_hashes(project, ends)
        erased = self.store.erased(project, list(hashes))
        if erased:
            before_write()
            self.store.clear_erased(project, erased)


def _view_of(pending: Sequence[PendingErasure]) -> PendingView:
    """What these pending erasures hide: their names (a user's erasure holds no name,
    only its mark) and the names they spare that none of them erases."""
    names = {n for p in pending for n in p.names if erased_user(p.names) is None}
    spared = {n for p in pending for n in p.spared} - names
    return PendingView(tuple(sorted(names)), tuple(sorted(spared)))
