"""The ports the domain depends on. Adapters implement them; the domain never imports one."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from .domain.model import Fact, Message, Passage, Role
from .domain.reports import Report


class Store(Protocol):
    """Where one project's facts, entities, messages and passages live.

    Every method is scoped to one project; nothing crosses projects. Writes of a
    batch are all or nothing, and a record whose id is already stored is kept
    as it was (so a retried request stores once).
    """

    def put_facts(self, project: str, facts: Sequence[Fact]) -> None: ...

    def facts_about(
        self,
        project: str,
        keys: Sequence[str],
        roles: Collection[Role],
        limit: int,
        exclude: Collection[str] = (),
    ) -> Iterator[Fact]:
        """Facts whose subject or entity object is one of `keys`, said by one of `roles`.

        Grouped by key in the order given, each group in storing order, each fact
        once, none in `exclude`, at most `limit` in all. Lazy: a recall stops reading
        when its bundle closes, so an adapter should fetch as it is read.
        """
        ...

    def facts_with_subject(self, project: str, key: str) -> list[Fact]: ...

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
        """Store messages and their passages; returns the ids of messages new to the store."""
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

    def passages_by_ids(self, project: str, ids: Sequence[str]) -> list[Passage]:
        """The passages with these ids, in the order given (unknown ids left out)."""
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


@dataclass(frozen=True, slots=True)
class PendingVector:
    """An item waiting for its vector: what to embed and where to index it."""

    kind: Literal["entity", "passage", "report"]
    id: str
    text: str
    role: Role | None


@dataclass(frozen=True, slots=True)
class Credential:
    id: str
    project: str
    label: str | None
    created_at: str
    revoked_at: str | None = None


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


VectorKind = Literal["entity", "passage", "report"]


@dataclass(frozen=True, slots=True)
class VectorItem:
    id: str
    vector: Sequence[float]
    # The role a passage or report speaks for; None for entity names.
    role: Role | None = None
    # The text the vector was made from, for the lexical side of hybrid search.
    text: str | None = None


@dataclass(frozen=True, slots=True)
class Hit:
    id: str
    score: float


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

    def delete(self, project: str, kind: VectorKind, ids: Collection[str]) -> None: ...


# -- the work queue (AWS: SQS FIFO; locally the worker thread polls the store instead) --

WorkKind = Literal["messages", "facts", "sweep"]


class WorkQueue(Protocol):
    """Tells the worker that a project has work. Never carries text: only the project
    and the ids stored. The work itself is the marks the store wrote with the records,
    so a message lost or sent twice loses nothing and does nothing twice."""

    def send(self, project: str, kind: WorkKind, ids: Sequence[str]) -> None: ...
