"""The use cases behind the routes: store, list, delete and recall memory, and the
background work that keeps reports and vectors up to date."""

from __future__ import annotations

import logging
import re
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from functools import cache, partial
from typing import TypeVar

from ..domain.aliases import (
    PROPOSAL_FLOOR,
    MergeProposals,
    MergeRequest,
    merge_keys,
    proposal_window,
    propose_merges,
)
from ..domain.controls import Limits, RecallControls, RecallRequest, resolve
from ..domain.deadline import Deadline
from ..domain.entity_counts import end_names
from ..domain.erasure import PendingView, hide_pending
from ..domain.errors import NotFound
from ..domain.filters import FactFilter
from ..domain.ingest import (
    ID_PATTERN,
    FactsRequest,
    MessagesRequest,
    make_fact,
    make_message,
    split_passages,
)
from ..domain.listing import (
    NEIGHBOURHOOD_BYTES,
    NEIGHBOURHOOD_FACTS,
    AliasPage,
    EntityPage,
    FactPage,
    MessagePage,
    Neighbourhood,
    ShownMessage,
    check_message_id,
    check_page,
    decode_cursor,
    encode_cursor,
    fact_bytes,
    fitting,
    neighbourhood_graph,
    wire_bytes,
)
from ..domain.model import ROLES, Alias, EntityCounts, Fact, MergeResult, Role, VectorKind
from ..domain.names import normalize_name
from ..domain.ports.extractor import Extractor
from ..domain.ports.spans import NO_SPANS, Spans
from ..domain.ports.store import Store
from ..domain.recall import recall as recall_steps
from ..domain.recalled import RecallAnswer
from ..domain.scope import project_of_partition, user_of
from ..domain.search import FactMatches, MessageMatches, check_search_text, search_offset
from ..domain.semantic import Semantic
from ..domain.timestamps import timestamp
from .background import BackgroundWork
from .erasure_cases import ErasureCases
from .search import fact_matches, message_matches
from .work import has_work, project_has_work

logger = logging.getLogger(__name__)
_T = TypeVar("_T")

# Seconds before the second attempt at an extraction (then doubled): a throttled or
# briefly unreachable model gets a moment before the next call.
EXTRACTION_RETRY_WAIT = 0.5


_BESIDE = ThreadPoolExecutor(max_workers=4, thread_name_prefix="beside")


def _beside(store: Store, read: Callable[[], _T]) -> Callable[[], _T]:
    """Start `read` now, in a thread if the store reads in parallel (its calls are
    round trips), else when asked; returns how to get its result."""
    if store.capabilities.parallel_reads:
        future = _BESIDE.submit(read)
        return future.result
    return read


def _now() -> datetime:
    return datetime.now(UTC)


def _written_vectors(facts: list[Fact]) -> list[tuple[VectorKind, str]]:
    """What storing these facts may have marked to embed: each fact's statement, and
    its names (those new to its role are marked; step 2 compares them)."""
    items: dict[tuple[VectorKind, str], None] = {}
    for f in facts:
        items[("fact", f.id)] = None
        for key in end_names(f):
            items[("entity", f"{f.source_role}:{key}")] = None
    return list(items)


class Memory(ErasureCases, BackgroundWork):
    """Every use case a route or a worker calls (the erasure and background ones are
    in service/erasure_cases.py and background.py). Each answers with the domain's
    records; a route's handler makes the body of them (api/bodies.py)."""

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
        spans: Spans = NO_SPANS,
        late_writes: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store = store
        self.late_writes = late_writes
        self.sleep = sleep
        # Where a recall's steps are timed (the edge's tracer; none by default).
        self.spans = spans
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

    def work_pending(self) -> bool:
        """Whether any project has work for the worker (service/work.py says which)."""
        return has_work(self)

    def project_work_pending(self, project: str) -> bool:
        """Whether this project has work for the worker (what `GET /v1/status` says)."""
        return project_has_work(self, project)

    def _as_seen(
        self, project: str, read: Callable[[str, Callable[[], PendingView]], _T], hides: bool = True
    ) -> _T:
        """`read(partition, view)`: what a request in `project` reads, with the pending
        erasures read beside it (in the same wave on DynamoDB) and shown as they will
        leave it. While the request's own user is being erased, the read is made again
        as a request without the user (domain/erasure.py, PendingView.shared_only): one
        more set of reads, only then. A read that `hides` nothing reads the pending
        erasures only for a request with a user."""
        if not hides and user_of(project) is None:
            return read(project, PendingView)
        view = cache(_beside(self.store, lambda: self.pending_view(project)))
        found = read(project, view)
        shared = view().shared_only
        if shared is None:
            return found
        return read(project_of_partition(project), lambda: shared)

    # -- writes ----------------------------------------------------------------

    def store_facts(self, project: str, request: FactsRequest) -> list[str]:
        recorded_at = timestamp(self.clock())
        # A user's pending erasure is read beside the tombstones (the same wave on
        # DynamoDB), and refuses the request before anything is written.
        refused = _beside(self.store, partial(self.refuse_while_erasing, project))
        facts = [make_fact(given, recorded_at) for given in request.facts]
        # Facts stored on purpose about an erased name bring it back: its tombstone is
        # lifted first, so a worker that rebuilds their reports at once is not refused
        # them (the embedded store refuses reports holding a tombstoned name).
        self._lift_tombstones(project, facts, refused)
        refused()
        # The store marks facts, names new to a role and passages for the worker to
        # embed; with a local model the request embeds its facts itself (read your writes;
        # only marks the write made are taken, so a duplicate embeds nothing).
        same = self.put_user_facts(project, facts, recorded_at)
        self.embed_written(project, _written_vectors(facts))
        # A fact identical to a stored one is answered with the stored one's id.
        return [same.get(f.id, f.id) for f in facts]

    def store_messages(self, project: str, request: MessagesRequest) -> list[str]:
        self.refuse_while_erasing(project)
        recorded_at = timestamp(self.clock())
        messages = [make_message(given, recorded_at) for given in request.messages]
        passages = [p for m in messages for p in split_passages(m)]
        new = self.store.put_messages(project, messages, passages)
        # Only a new message's passages were marked (one stored before keeps its own).
        self.embed_written(project, [("passage", p.id) for p in passages if p.message_id in new])
        return [m.id for m in messages]

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

    def list_facts(
        self, project: str, subject: str, limit: int | None = None, cursor: str | None = None
    ) -> FactPage:
        """A page of the facts whose subject is this name (an alias: its entity), in
        storing order, at most PAGE_BYTES of them."""
        size = check_page(limit)
        after = decode_cursor("facts", project, cursor, 1)[0] if cursor else None
        read = partial(self._subject_page, project, normalize_name(subject), after, size)
        return self._as_seen(project, read)

    def _subject_page(
        self,
        project: str,
        key: str,
        after: str | None,
        size: int,
        partition: str,
        view: Callable[[], PendingView],
    ) -> FactPage:
        # An alias lists the facts of its entity (domain/aliases.py).
        key = self.store.resolve_names(partition, [key]).get(key, key)
        rows = self.store.subject_page(partition, key, after, size + 1)
        page = rows[: fitting(fact_bytes(f) for _, f in rows[:size])]
        hidden = view()
        # A page can come out short while an erasure is pending; the cursor goes on
        # from the last fact read.
        more = len(rows) > len(page)
        return FactPage(
            [f for _, f in page if not hidden.hides_fact(f)],
            encode_cursor("facts", project, [page[-1][0]]) if more else None,
        )

    # -- listings (the memory explorer; domain/listing.py) -------------------------

    def list_entities(
        self, project: str, search: str | None, limit: int | None, cursor: str | None
    ) -> EntityPage:
        """Entities (not aliases) by key, each with its live facts per role; `search`
        keeps those whose normalised name holds the normalised text."""
        size = check_page(limit)
        after = decode_cursor("entities", project, cursor, 1)[0] if cursor else None
        contains = normalize_name(search) if search else None
        read = partial(self._entity_page, project, after, size, contains or None)
        return self._as_seen(project, read)

    def _entity_page(
        self,
        project: str,
        after: str | None,
        size: int,
        contains: str | None,
        partition: str,
        view: Callable[[], PendingView],
    ) -> EntityPage:
        rows = self.store.entity_page(partition, after, size + 1, contains)
        page = rows[:size]
        more = len(rows) > size
        hidden = view()
        shown = [e for e in page if not hidden.hides_entity(e.key)]
        if hidden.keys:
            shown = self._left_of(partition, shown, hidden)
        # A page can come out short while an erasure is pending; the cursor goes on
        # from the last entity read.
        return EntityPage(
            shown, encode_cursor("entities", project, [page[-1].key]) if more else None
        )

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

    def list_messages(
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
        before = tuple(decode_cursor("messages", project, cursor, 2)) if cursor else None
        read = partial(self._message_page, project, before, size, role, source, passages)
        return self._as_seen(project, read)

    def _message_page(
        self,
        project: str,
        before: tuple[str, ...] | None,
        size: int,
        role: Role | None,
        source: str | None,
        passages: bool,
        partition: str,
        view: Callable[[], PendingView],
    ) -> MessagePage:
        rows = self.store.message_page(partition, before, size + 1, role, source)  # type: ignore[arg-type]
        page = rows[:size]
        # Messages that name an entity being erased are shown as the erasure will
        # leave them, which needs their passages.
        hidden = view()
        named = [m.id for m in page if hidden.names_message(m)]
        wanted = [m.id for m in page] if passages else named
        held = self.store.passages_of_messages(partition, wanted) if wanted else {}
        listed = []
        for m in page:
            shown, kept = hidden.message(m, held.get(m.id, []))
            listed.append(ShownMessage(shown, kept if passages else None))
        # At most PAGE_BYTES: long messages (with their passages) end a page early.
        listed = listed[: fitting(m.weight() for m in listed)]
        last = page[len(listed) - 1] if listed else None
        more = len(rows) > len(listed)
        return MessagePage(
            listed,
            encode_cursor("messages", project, [last.recorded_at, last.id])
            if more and last
            else None,
        )

    def message_with_passages(self, project: str, message_id: str) -> ShownMessage:
        """One message with its passages (by start), as the pending erasures leave them."""
        check_message_id(message_id)
        return self._as_seen(project, partial(self._message, message_id))

    def _message(
        self, message_id: str, partition: str, view: Callable[[], PendingView]
    ) -> ShownMessage:
        m = self.store.message(partition, message_id)
        if m is None:
            raise NotFound(f"no message with id {message_id!r}")
        m, passages = view().message(m, self.store.passages_of(partition, message_id))
        return ShownMessage(m, passages)

    def search_facts(
        self,
        project: str,
        q: str,
        role: Role | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        deadline: Deadline | None = None,
    ) -> FactMatches:
        """The facts holding these words, best first (domain/search.py), every role
        unless one is given, closed facts too."""
        size = check_page(limit)
        words = check_search_text(q)
        offset = search_offset("search-facts", project, cursor, words, role, None)
        if self.semantic is None:
            return FactMatches([], None, ["search"])
        index = self.semantic.within(deadline).index
        asked = (project, words, role, offset, size)
        return self._as_seen(project, partial(fact_matches, self.store, index, asked))

    def search_messages(
        self,
        project: str,
        q: str,
        role: Role | None = None,
        source: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        deadline: Deadline | None = None,
    ) -> MessageMatches:
        """The messages holding these words, best first, each with the passages that
        matched (domain/search.py)."""
        size = check_page(limit)
        words = check_search_text(q)
        offset = search_offset("search-messages", project, cursor, words, role, source)
        if self.semantic is None:
            return MessageMatches([], None, ["search"])
        index = self.semantic.within(deadline).index
        asked = (project, words, role, source, offset, size)
        return self._as_seen(project, partial(message_matches, self.store, index, asked))

    def neighbourhood(self, project: str, name: str, hops: int) -> Neighbourhood:
        """The facts (every role, live ones) naming an entity, and with hops 2 those
        of the entities they link to: at most NEIGHBOURHOOD_FACTS in all."""
        return self._as_seen(project, partial(self._neighbourhood, normalize_name(name), hops))

    def _neighbourhood(
        self, key: str, hops: int, project: str, view: Callable[[], PendingView]
    ) -> Neighbourhood:
        key = self.store.resolve_names(project, [key]).get(key, key)
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
        # At most PAGE_BYTES of facts, nearest first (hop 1 came first).
        weights = (wire_bytes(f.subject, f.predicate, f.object, f.statement) for f, _ in walked)
        return neighbourhood_graph(key, walked[: fitting(weights, NEIGHBOURHOOD_BYTES)])

    def recall(
        self, project: str, request: RecallRequest, deadline: Deadline | None = None
    ) -> RecallAnswer:
        """One recall (domain/recall.py), without what pending erasures will remove.
        Past the `deadline` no model or index call is waited for: those steps degrade."""
        controls = resolve(request, self.limits)
        # The pending erasures are read beside the recall (one more read, in parallel
        # where the store reads in parallel): their names are hidden from the answer.
        return self._as_seen(project, partial(self._recall, request, controls, deadline))

    def _recall(
        self,
        request: RecallRequest,
        controls: RecallControls,
        deadline: Deadline | None,
        project: str,
        erasing: Callable[[], PendingView],
    ) -> RecallAnswer:
        answer = recall_steps(
            self.store,
            project,
            request.question,
            controls,
            semantic=self.semantic.within(deadline) if self.semantic else None,
            now=timestamp(self.clock()),
            spans=self.spans,
        )
        view = erasing()
        with self.spans.span("recall.dates"):
            return self._dated(project, hide_pending(answer, view.keys, view.spared))

    def _dated(self, project: str, answer: RecallAnswer) -> RecallAnswer:
        """The recalled passages with their message's occurred_at and recorded_at, their
        messages read in one batch (read one at a time, they cost a 16,000-character
        recall dozens of SQLite queries or DynamoDB GetItems). A passage the store read
        with both times (its recorded_at set: the embedded store's join) keeps them."""
        ids = list(
            dict.fromkeys(
                r.passage.message_id for r in answer.passages if r.passage.recorded_at is None
            )
        )
        if not ids:
            return answer
        found = self.store.messages_by_ids(project, ids)
        times = {m.id: (m.occurred_at, m.recorded_at) for m in found}
        passages = [
            r._replace(passage=r.passage._replace(occurred_at=t[0], recorded_at=t[1]))
            if (t := times.get(r.passage.message_id))
            else r
            for r in answer.passages
        ]
        return replace(answer, passages=passages)

    # -- entities and aliases (domain/aliases.py) ----------------------------------

    def merge_entities(self, project: str, request: MergeRequest) -> MergeResult:
        alias_key, into_key = merge_keys(request.alias, request.into)
        self.refuse_while_erasing(project)
        return self.store.merge_entities(project, alias_key, request.alias, into_key, request.into)

    def aliases(self, project: str) -> list[Alias]:
        """Every alias of the project, by normalised alias."""
        return list(self.store.aliases(project))

    def alias_page(self, project: str, limit: int | None, cursor: str | None) -> AliasPage:
        """A page of the project's aliases, by normalised alias."""
        size = check_page(limit)
        after = decode_cursor("aliases", project, cursor, 1)[0] if cursor else None

        def read(partition: str, _: Callable[[], PendingView]) -> list[Alias]:
            return self.store.alias_page(partition, after, size + 1)

        rows = self._as_seen(project, read, hides=False)
        page = rows[:size]
        more = len(rows) > size
        return AliasPage(
            page, encode_cursor("aliases", project, [page[-1].alias_key]) if more else None
        )

    def merge_proposals(self, project: str, deadline: Deadline | None = None) -> MergeProposals:
        """Pairs of names similar enough to be one entity; degraded (and no pairs) when
        no model is configured or the model or index failed, degraded with the pairs
        found so far when the deadline came before every name was compared."""
        if self.semantic is None:
            return MergeProposals(PROPOSAL_FLOOR, [], ["proposals"])
        floor = self.semantic.floors.proposal
        # A window of the names that moves with each request (domain/aliases.py,
        # proposal_window): successive requests compare every name. While the asking
        # user is being erased, the window is read from the shared names only.
        window = self._as_seen(
            project,
            lambda p, _: proposal_window(
                lambda limit, offset: self.store.entity_names(p, limit, offset),
                self.store.proposal_offset(p),
            ),
            hides=False,
        )
        semantic = self.semantic
        try:
            found, complete = propose_merges(
                project,
                window.names,
                semantic.embedder,
                semantic.index,
                floor=floor,
                deadline=deadline,
            )
        except Exception:  # a model or index failure degrades the answer, never fails it
            logger.exception("proposing merges failed")
            return MergeProposals(floor, [], ["proposals"])
        if not complete:  # the next request compares this window again
            return MergeProposals(floor, found, ["proposals"])
        self.store.set_proposal_offset(project, window.following)
        return MergeProposals(floor, found, [])
