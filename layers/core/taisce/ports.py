"""The ports the domain depends on. Adapters implement them; the domain never imports one."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Protocol

from .domain.aliases import Alias, EntityName, MergeResult
from .domain.erasure import ErasurePlan, ErasureRecord, ErasureStatus, PendingErasure
from .domain.filters import FactFilter, MessageFilter
from .domain.listing import EntityCounts
from .domain.model import Fact, FactPointer, Message, Passage, Role
from .domain.reports import Report


class Store(Protocol):
    """Where one project's facts, entities, messages and passages live.

    Every method is scoped to one project; nothing crosses projects. Writes of a
    batch are all or nothing, and a record whose id is already stored is kept
    as it was (so a retried request stores once).
    """

    def put_facts(self, project: str, facts: Sequence[Fact]) -> None:
        """Store new facts; in the same transaction, close what they contradict.

        The stored facts that share a new fact's subject, role and single-valued
        predicate go through `domain.validity.plan_closings` with the batch (new
        facts only: an id already stored changes nothing), and the stored facts it
        closes get their `valid_to` with the batch, all or nothing.
        """
        ...

    def facts_about(
        self,
        project: str,
        keys: Sequence[str],
        roles: Collection[Role],
        limit: int,
        exclude: Collection[str] = (),
        filters: FactFilter | None = None,
    ) -> Iterator[Fact]:
        """Facts whose subject or entity object is one of `keys`, said by one of `roles`.

        Grouped by key in the order given, each group in storing order, each fact
        once, none in `exclude`, only those `filters` admit, at most `limit` in all.
        Lazy: a recall stops reading when its bundle closes, so an adapter should
        fetch as it is read, and apply `filters` in its query.
        """
        ...

    def facts_with_subject(self, project: str, key: str) -> list[Fact]:
        """Every fact with this subject, closed ones too, in storing order."""
        ...

    def delete_fact(self, project: str, fact_id: str) -> bool: ...

    def known_names(
        self, project: str, keys: Collection[str], roles: Collection[Role] | None = None
    ) -> set[str]:
        """Which of these normalised names are entities of the project: named by a
        live fact of one of `roles`, or by any fact ever stored if roles is None."""
        ...

    def put_messages(
        self, project: str, messages: Sequence[Message], passages: Sequence[Passage]
    ) -> set[str]:
        """Store messages and their passages; returns the ids of messages new to the store.

        Each message new to the store gets the next position of its project's storing
        order (in the batch's order, after every earlier batch's), which its passages'
        vector marks carry (PendingVector.position); a message already stored keeps
        its own. Positions within a batch are consecutive; between batches a store may
        leave a gap (DynamoDB reserves a batch's range before it knows which are new)."""
        ...

    def passages_of(self, project: str, message_id: str) -> list[Passage]: ...

    # Vectors: storing a passage, or a name new to a role, writes a pending mark in the
    # same transaction; a worker embeds the marks in batches and clears them.

    def vector_projects(self) -> list[str]:
        """Projects with pending vectors."""
        ...

    def pending_vectors(self, project: str, limit: int) -> list[PendingVector]: ...

    def clear_pending_vectors(self, project: str, items: Sequence[PendingVector]) -> None:
        """Clear these marks (a mark rewritten since with other text stays)."""
        ...

    def held_facts(self, project: str, ids: Collection[str]) -> set[str]:
        """Which of these fact ids the store still holds (for the worker: a vector
        written for a fact deleted or erased meanwhile is deleted again)."""
        ...

    def fact_pointers(self, project: str, ids: Sequence[str]) -> list[FactPointer]:
        """The pointers of the facts of these ids the store still holds, in the order
        given (unknown ids left out); the caller applies roles and filters."""
        ...

    def passages_by_ids(
        self,
        project: str,
        ids: Sequence[str],
        messages: MessageFilter | None = None,
        times: bool = False,
    ) -> list[Passage]:
        """The passages with these ids, in the order given (unknown ids left out),
        only those of messages that `messages` admits; with `times`, each carries its
        message's occurred_at (a store may fill it anyway where it is free)."""
        ...

    # Reports: a fact written or deleted marks its entities dirty (per role) in the
    # same transaction; a worker later reads the marks, rebuilds their reports and
    # clears exactly the marks it read (a mark rewritten meanwhile stays).

    def dirty_projects(self) -> list[str]: ...

    def dirty_entities(self, project: str) -> list[tuple[Role, str, str]]:
        """(role, entity key, token) of each mark."""
        ...

    def clear_dirty(self, project: str, marks: Sequence[tuple[Role, str, str]]) -> None: ...

    def report_components(self, project: str, role: Role, keys: Collection[str]) -> set[str]: ...

    def replace_reports(
        self, project: str, role: Role, components: Collection[str], reports: Sequence[Report]
    ) -> list[str]: ...

    def reports_by_ids(self, project: str, ids: Sequence[str]) -> list[Report]: ...

    def reports_of_entity(
        self, project: str, key: str, roles: Collection[Role]
    ) -> list[Report]: ...

    # -- extraction (messages -> facts) ---------------------------------------------
    # With an extractor configured, storing a message new to the store writes a pending
    # extraction mark in the same transaction. A worker extracts the message, stores its
    # facts (put_facts), then clears the mark; after the last failed attempt the mark is
    # replaced by a failure record, in one transaction, until replayed.

    def message(self, project: str, message_id: str) -> Message | None: ...

    def extraction_projects(self) -> list[str]:
        """Projects with messages waiting for extraction."""
        ...

    def pending_extractions(self, project: str, limit: int) -> list[str]:
        """Ids of messages waiting for extraction, at most `limit`."""
        ...

    def extraction_pending(self, project: str, message_id: str) -> bool: ...

    def finish_extraction(
        self, project: str, message_id: str, failure: ExtractionFailure | None = None
    ) -> None:
        """Clear the message's mark; with a failure, record it in the same write."""
        ...

    def failed_extractions(self, project: str | None = None) -> list[ExtractionFailure]:
        """Failure records, of one project or of all, by project and message id."""
        ...

    def replay_extractions(
        self, project: str | None = None, message_ids: Collection[str] | None = None
    ) -> list[ExtractionFailure]:
        """Turn these failure records (all, or of one project, or these messages) back
        into pending marks, each in one write. Returns the records replayed."""
        ...

    # Entities and aliases (domain/aliases.py): a merged name is an alias of one entity.
    # Writes resolve an alias to its entity, so an alias never holds facts of its own.

    def resolve_names(
        self, project: str, keys: Collection[str], roles: Collection[Role] | None = None
    ) -> dict[str, str]:
        """Which of these names find an entity, and which: each key that is an entity
        (as known_names decides) maps to itself, each alias of such an entity to it."""
        ...

    def merge_entities(
        self, project: str, alias_key: str, alias_text: str, into_key: str, into_text: str
    ) -> MergeResult:
        """Make `alias_key` an alias of the entity `into_key` (or of the entity that name
        is an alias of), checked by domain.aliases.plan_merge: re-key the alias's facts
        (both directions) and its name counts, report and vector marks to the target,
        and re-point the alias's own aliases. All or nothing, or re-runnable to the end
        (DynamoDB); merging again into the same entity changes nothing more."""
        ...

    def aliases(self, project: str) -> list[Alias]:
        """Every alias of the project, by alias key."""
        ...

    def entity_names(self, project: str, limit: int) -> list[EntityName]:
        """Up to `limit` entities named by a live fact (not aliases), by key."""
        ...

    def entity_keys(self, project: str, limit: int) -> list[str]:
        """Up to `limit` keys of entity names held (live or not, not aliases), by key:
        the names recall step 2 compares by spelling, read on every such recall, so it
        is a cheap listing (callers confirm a key with resolve_names)."""
        ...

    # Listings for the memory explorer (domain/listing.py): one page at a time, read
    # from the project's own records only (on DynamoDB, its listing partitions).

    def entity_page(
        self, project: str, after: str | None, limit: int, contains: str | None
    ) -> list[EntityCounts]:
        """Up to `limit` entities named by a live fact (not aliases), by key (as UTF-8
        bytes), those after `after` only, whose key holds `contains` if given."""
        ...

    def message_page(
        self,
        project: str,
        before: tuple[str, str] | None,
        limit: int,
        role: Role | None,
        source: str | None,
    ) -> list[Message]:
        """Up to `limit` messages newest first: by (recorded_at, id) descending, only
        those before `before`, of this role and this source if given."""
        ...

    # Erasure (domain/erasure.py): reads of a whole project to find what names an
    # entity, one step that applies the plan, tombstones and the audit record. Nothing
    # here holds a name: tombstones and records are hashes (erasure.subject_hash).

    def project_facts(self, project: str) -> Iterator[Fact]:
        """Every fact of the project, each once, in no promised order."""
        ...

    def project_entities(self, project: str) -> Iterator[str]:
        """The key of every entity name held (live or not)."""
        ...

    def project_messages(self, project: str) -> Iterator[Message]: ...

    def passages_of_messages(
        self, project: str, message_ids: Sequence[str]
    ) -> dict[str, list[Passage]]:
        """passages_of for each of these messages (read at once where the store can)."""
        ...

    def erase(self, project: str, plan: ErasurePlan) -> int:
        """Apply the plan: the tombstone, then delete its facts (with their name counts
        and report marks), its entities (names, role counts, pending vector marks),
        redact its messages (content and source rewritten, passages deleted or given
        the new source), drop the reports of every component its facts belonged to
        (marking their members for a rebuild) and record the ids of every vector to
        delete (or delete them, where the vector index shares the store's file). All or
        nothing, or in steps that a retry of the same erasure completes. Returns how
        many reports were dropped."""
        ...

    def remove_aliases(self, project: str, keys: Collection[str]) -> int:
        """Forget every alias whose own name or whose entity is one of `keys` (erasure);
        returns how many went."""
        ...

    def erased(self, project: str, hashes: Collection[str]) -> set[str]:
        """Which of these subject hashes have a tombstone."""
        ...

    def clear_erased(self, project: str, hashes: Collection[str]) -> None: ...

    def erased_vectors(self, project: str) -> list[tuple[VectorKind, str]]:
        """Vectors of erased items still to delete from the VectorIndex."""
        ...

    def clear_erased_vectors(
        self, project: str, items: Sequence[tuple[VectorKind, str]]
    ) -> None: ...

    def erasures(self, project: str | None = None) -> list[ErasureRecord]:
        """Audit records, oldest first."""
        ...

    # Erasure requests (docs/API.md, "Erasure"): recorded when accepted, completed in
    # steps by the request or the worker, finished once.

    def begin_erasure(self, pending: PendingErasure) -> None:
        """Record an accepted erasure durably (and list its project for the worker)."""
        ...

    def pending_erasure(self, project: str, erasure_id: str) -> PendingErasure | None: ...

    def pending_erasures(self, project: str) -> list[PendingErasure]:
        """The project's erasures not finished, oldest first (recall hides their names)."""
        ...

    def erasing_projects(self) -> list[str]:
        """Projects with an erasure not finished (the worker's and the sweep's list)."""
        ...

    def claim_erasure(
        self, project: str, erasure_id: str, holder: str, now: float, until: float
    ) -> bool:
        """Make `holder` the one working on a pending erasure until `until` (seconds
        since the epoch), at once: True if it was unheld, held by `holder`, or its
        holder's time had ended at `now`; False, changing nothing, otherwise (or if it
        is no longer pending). An `until` already past lets it go."""
        ...

    def add_erasure_counts(self, project: str, erasure_id: str, counts: dict[str, int]) -> None:
        """Add what one step removed to the pending erasure's counts."""
        ...

    def finish_erasure(self, record: ErasureRecord, requested_at: str) -> bool:
        """At once: the pending erasure goes (with its names), its status becomes done
        with the record's counts, and the audit record is written. False, changing
        nothing, if it was no longer pending (a retry or a duplicate finished it): the
        audit record is written once."""
        ...

    def erasure_status(self, project: str, erasure_id: str) -> ErasureStatus | None:
        """Pending or done, None for an id the project never had."""
        ...


@dataclass(frozen=True, slots=True)
class PendingVector:
    """An item waiting for its vector: what to embed and where to index it."""

    kind: Literal["entity", "passage", "report", "fact"]
    id: str
    text: str
    role: Role | None
    # A passage's message's place in its project's storing order (None: stored
    # before positions were kept, or not a passage); the index keeps it with the vector.
    position: int | None = None
    # When a passage's message occurred (its stored form; "" if the message holds no
    # time), kept by the index with the vector: a recall that names a month or day
    # orders by it without reading passages. None: not carried (a mark written before
    # times were kept, or not a passage): recall then reads the passages for it.
    occurred_at: str | None = None


@dataclass(frozen=True, slots=True)
class Credential:
    id: str
    project: str
    label: str | None
    created_at: str
    revoked_at: str | None = None


@dataclass(frozen=True, slots=True)
class ExtractionFailure:
    """A message whose extraction failed every attempt: kept until replayed."""

    project: str
    message_id: str
    error: str
    attempts: int
    failed_at: str


class CredentialStore(Protocol):
    """Bearer credentials, kept only as hashes."""

    def add_credential(self, credential: Credential, secret_hash: str) -> None: ...

    def project_for(self, secret_hash: str) -> str | None:
        """The project of a live credential with this hash, or None."""
        ...

    def list_credentials(self, project: str | None = None) -> list[Credential]: ...

    def revoke_credential(self, credential_id: str, revoked_at: str) -> bool: ...


class EmbeddingError(Exception):
    """The embedding model failed (unreachable, throttled, malformed answer)."""


class VectorIndexError(Exception):
    """The vector index failed to read or write."""


class Embedder(Protocol):
    """A text embedding model. Vectors are unit length, so a dot product is the cosine."""

    name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order, from as few model calls as the model allows.

        Raises EmbeddingError when the model fails.
        """
        ...


VectorKind = Literal["entity", "passage", "report", "fact"]


@dataclass(frozen=True, slots=True)
class VectorItem:
    id: str
    vector: Sequence[float]
    # The role a passage or report speaks for; None for entity names.
    role: Role | None = None
    # The text the vector was made from, for the lexical side of hybrid search.
    text: str | None = None
    # A passage's message's storing position (PendingVector.position), returned with
    # its hits: recall's neighbour signal reads it without another round trip.
    position: int | None = None
    # A passage's message's time (PendingVector.occurred_at: "" the message holds none,
    # None not carried), returned with its hits for recall's month and day factors.
    occurred_at: str | None = None


class Hit(NamedTuple):
    """One item a search found. A plain tuple, not a frozen dataclass: a recall makes
    ~1,000 (400 passages by vector, up to 400 by words, 200 facts), and a tuple is
    made in about half the time."""

    id: str
    score: float
    # The item's storing position, where the index holds one (VectorItem.position).
    position: int | None = None
    # Its message's time, where the index holds one (VectorItem.occurred_at): "" the
    # message holds none; None not carried (an entry indexed before times were kept).
    occurred_at: str | None = None


class VectorIndex(Protocol):
    """Nearest neighbours by cosine, per project and kind, filtered by role.

    Raises VectorIndexError when the index fails.
    """

    def upsert(self, project: str, kind: VectorKind, items: Sequence[VectorItem]) -> None: ...

    def search(
        self,
        project: str,
        kind: VectorKind,
        vector: Sequence[float],
        k: int,
        roles: Collection[Role] | None = None,
    ) -> list[Hit]:
        """The k nearest items, best first (ties by id); only those of `roles` if given."""
        ...

    def search_text(
        self,
        project: str,
        kind: VectorKind,
        text: str,
        k: int,
        roles: Collection[Role] | None = None,
    ) -> list[Hit]:
        """The k items whose text best matches `text` by BM25, best first."""
        ...

    def similarities(
        self, project: str, kind: VectorKind, vector: Sequence[float], ids: Collection[str]
    ) -> dict[str, float]:
        """The cosine with `vector` of each of these items that has a vector (items
        without one are left out): scores a given set, unlike `search`, so that what the
        caller may not see never takes a place."""
        ...

    def delete(self, project: str, kind: VectorKind, ids: Collection[str]) -> None: ...

    def purge(self) -> None:
        """Drop what deleted items leave behind in storage the index keeps itself (the
        embedded index's full-text segments and its WAL); nothing where a service
        manages its own storage."""
        ...


# -- extraction ------------------------------------------------------------------------


class ExtractionError(Exception):
    """The extraction model failed (unreachable, throttled, timed out) or its output
    was malformed, partial or broke the schema. The message never quotes the input."""


@dataclass(frozen=True, slots=True)
class ExtractionPrompt:
    """What an extractor asks its model: instructions, the message, and the JSON schema
    the answer must follow (as a forced tool's input, or as structured output)."""

    system: str
    user: str
    schema: Mapping[str, Any]
    tool_name: str
    tool_description: str


class Extractor(Protocol):
    """A language model that returns facts as JSON following `prompt.schema`."""

    name: str

    def extract(self, prompt: ExtractionPrompt) -> str | Mapping[str, Any]:
        """The model's answer: JSON text, or the already parsed tool input. One model
        call; the domain validates the answer and retries.

        Raises ExtractionError when the model fails or its answer was cut off.
        """
        ...


# -- the work queue (AWS: SQS FIFO; locally the worker thread polls the store instead) --

WorkKind = Literal["messages", "facts", "sweep", "erasure"]


class WorkQueue(Protocol):
    """Tells the worker that a project has work. Never carries text: only the project
    and the ids stored. The work itself is the marks the store wrote with the records,
    so a message lost or sent twice loses nothing and does nothing twice."""

    def send(self, project: str, kind: WorkKind, ids: Sequence[str]) -> None: ...
