"""What both stores are made the same way of: one part per port, each held as an
attribute named after its port (`fact_store` for FactStore, ...), and the port's
methods delegated to it by hand, so that the domain calls `store.facts_about(...)` on
the whole store. A part that needs another is given it when it is built; no part
inherits from another (tests/unit/test_adapter_layout.py checks both).

Each delegation is one plain method, no __getattr__: a call costs one more Python call
than calling the part (about 65 ns), and a recall makes a handful of store calls.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass

from ..domain.filters import FactFilter, MessageFilter
from ..domain.model import (
    Alias,
    Credential,
    EntityCounts,
    EntityName,
    ErasurePlan,
    ErasureRecord,
    ErasureStatus,
    ExtractionFailure,
    Fact,
    FactPointer,
    MergeResult,
    Message,
    Passage,
    PendingErasure,
    PendingVector,
    Report,
    Role,
    VectorKind,
)
from ..domain.ports.aliases import AliasStore
from ..domain.ports.credentials import CredentialStore
from ..domain.ports.erasure import ErasureStore
from ..domain.ports.facts import FactStore
from ..domain.ports.listing import ListingStore
from ..domain.ports.messages import MessageStore
from ..domain.ports.names import NameLookup
from ..domain.ports.projects import ProjectReads
from ..domain.ports.reports import ReportStore
from ..domain.ports.work import WorkMarks
from ..domain.scope import ScopeGuard


@dataclass
class MarkSwitches:
    """Which work marks the parts write with the records, shared by every part of one
    store (the wiring, and a few tests, turn them on or off after opening it)."""

    # Without an embedding model nothing would ever take the pending vector marks, so
    # the wiring turns them off rather than let them pile up.
    vectors: bool = True
    # Likewise extraction marks: only with an extractor configured.
    extractions: bool = False


class ComposedStore:
    """Store and CredentialStore, delegated to one part per port (see the module)."""

    fact_store: FactStore
    name_lookup: NameLookup
    alias_store: AliasStore
    message_store: MessageStore
    listing_store: ListingStore
    work_marks: WorkMarks
    report_store: ReportStore
    project_reads: ProjectReads
    erasure_store: ErasureStore
    credential_store: CredentialStore
    switches: MarkSwitches

    @property
    def mark_vectors(self) -> bool:
        return self.switches.vectors

    @mark_vectors.setter
    def mark_vectors(self, on: bool) -> None:
        self.switches.vectors = on

    @property
    def mark_extractions(self) -> bool:
        return self.switches.extractions

    @mark_extractions.setter
    def mark_extractions(self, on: bool) -> None:
        self.switches.extractions = on

    # -- FactStore ---------------------------------------------------------------------

    def put_facts(
        self, project: str, facts: Sequence[Fact], guard: ScopeGuard | None = None
    ) -> dict[str, str]:
        return self.fact_store.put_facts(project, facts, guard)

    def facts_about(
        self,
        project: str,
        keys: Sequence[str],
        roles: Collection[Role],
        limit: int,
        exclude: Collection[str] = (),
        filters: FactFilter | None = None,
    ) -> Iterator[Fact]:
        return self.fact_store.facts_about(project, keys, roles, limit, exclude, filters)

    def facts_with_subject(self, project: str, key: str) -> list[Fact]:
        return self.fact_store.facts_with_subject(project, key)

    def subject_page(
        self, project: str, key: str, after: str | None, limit: int
    ) -> list[tuple[str, Fact]]:
        return self.fact_store.subject_page(project, key, after, limit)

    def delete_fact(self, project: str, fact_id: str) -> bool:
        return self.fact_store.delete_fact(project, fact_id)

    def held_facts(self, project: str, ids: Collection[str]) -> set[str]:
        return self.fact_store.held_facts(project, ids)

    def fact_pointers(self, project: str, ids: Sequence[str]) -> list[FactPointer]:
        return self.fact_store.fact_pointers(project, ids)

    def facts_by_ids(self, project: str, ids: Sequence[str]) -> list[Fact]:
        return self.fact_store.facts_by_ids(project, ids)

    # -- NameLookup --------------------------------------------------------------------

    def known_names(
        self, project: str, keys: Collection[str], roles: Collection[Role] | None = None
    ) -> set[str]:
        return self.name_lookup.known_names(project, keys, roles)

    def resolve_names(
        self, project: str, keys: Collection[str], roles: Collection[Role] | None = None
    ) -> dict[str, str]:
        return self.name_lookup.resolve_names(project, keys, roles)

    def entity_keys(self, project: str, limit: int) -> list[str]:
        return self.name_lookup.entity_keys(project, limit)

    # -- AliasStore --------------------------------------------------------------------

    def merge_entities(
        self, project: str, alias_key: str, alias_text: str, into_key: str, into_text: str
    ) -> MergeResult:
        return self.alias_store.merge_entities(project, alias_key, alias_text, into_key, into_text)

    def aliases(self, project: str) -> list[Alias]:
        return self.alias_store.aliases(project)

    def alias_page(self, project: str, after: str | None, limit: int) -> list[Alias]:
        return self.alias_store.alias_page(project, after, limit)

    def entity_names(self, project: str, limit: int, offset: int = 0) -> list[EntityName]:
        return self.alias_store.entity_names(project, limit, offset)

    def proposal_offset(self, project: str) -> int:
        return self.alias_store.proposal_offset(project)

    def set_proposal_offset(self, project: str, offset: int) -> None:
        self.alias_store.set_proposal_offset(project, offset)

    # -- MessageStore ------------------------------------------------------------------

    def put_messages(
        self, project: str, messages: Sequence[Message], passages: Sequence[Passage]
    ) -> set[str]:
        return self.message_store.put_messages(project, messages, passages)

    def passages_of(self, project: str, message_id: str) -> list[Passage]:
        return self.message_store.passages_of(project, message_id)

    def passages_by_ids(
        self,
        project: str,
        ids: Sequence[str],
        messages: MessageFilter | None = None,
        times: bool = False,
    ) -> list[Passage]:
        return self.message_store.passages_by_ids(project, ids, messages, times)

    def message(self, project: str, message_id: str) -> Message | None:
        return self.message_store.message(project, message_id)

    def messages_by_ids(self, project: str, ids: Sequence[str]) -> list[Message]:
        return self.message_store.messages_by_ids(project, ids)

    # -- ListingStore ------------------------------------------------------------------

    def entity_page(
        self, project: str, after: str | None, limit: int, contains: str | None
    ) -> list[EntityCounts]:
        return self.listing_store.entity_page(project, after, limit, contains)

    def message_page(
        self,
        project: str,
        before: tuple[str, str] | None,
        limit: int,
        role: Role | None,
        source: str | None,
    ) -> list[Message]:
        return self.listing_store.message_page(project, before, limit, role, source)

    # -- WorkMarks ---------------------------------------------------------------------

    def vector_projects(self) -> list[str]:
        return self.work_marks.vector_projects()

    def pending_vectors(self, project: str, limit: int) -> list[PendingVector]:
        return self.work_marks.pending_vectors(project, limit)

    def clear_pending_vectors(self, project: str, items: Sequence[PendingVector]) -> None:
        self.work_marks.clear_pending_vectors(project, items)

    def vector_marks(
        self, project: str, items: Sequence[tuple[VectorKind, str]]
    ) -> list[PendingVector]:
        return self.work_marks.vector_marks(project, items)

    def dirty_projects(self) -> list[str]:
        return self.work_marks.dirty_projects()

    def dirty_entities(self, project: str) -> list[tuple[Role, str, str]]:
        return self.work_marks.dirty_entities(project)

    def clear_dirty(self, project: str, marks: Sequence[tuple[Role, str, str]]) -> None:
        self.work_marks.clear_dirty(project, marks)

    def extraction_projects(self) -> list[str]:
        return self.work_marks.extraction_projects()

    def pending_extractions(self, project: str, limit: int) -> list[str]:
        return self.work_marks.pending_extractions(project, limit)

    def extraction_pending(self, project: str, message_id: str) -> bool:
        return self.work_marks.extraction_pending(project, message_id)

    def finish_extraction(
        self, project: str, message_id: str, failure: ExtractionFailure | None = None
    ) -> None:
        self.work_marks.finish_extraction(project, message_id, failure)

    def failed_extractions(self, project: str | None = None) -> list[ExtractionFailure]:
        return self.work_marks.failed_extractions(project)

    def replay_extractions(
        self, project: str | None = None, message_ids: Collection[str] | None = None
    ) -> list[ExtractionFailure]:
        return self.work_marks.replay_extractions(project, message_ids)

    # -- ReportStore -------------------------------------------------------------------

    def report_components(self, project: str, role: Role, keys: Collection[str]) -> set[str]:
        return self.report_store.report_components(project, role, keys)

    def replace_reports(
        self, project: str, role: Role, components: Collection[str], reports: Sequence[Report]
    ) -> list[str]:
        return self.report_store.replace_reports(project, role, components, reports)

    def reports_by_ids(self, project: str, ids: Sequence[str]) -> list[Report]:
        return self.report_store.reports_by_ids(project, ids)

    def reports_of_entity(self, project: str, key: str, roles: Collection[Role]) -> list[Report]:
        return self.report_store.reports_of_entity(project, key, roles)

    # -- ProjectReads ------------------------------------------------------------------

    def project_facts(self, project: str) -> Iterator[Fact]:
        return self.project_reads.project_facts(project)

    def project_entities(self, project: str) -> Iterator[str]:
        return self.project_reads.project_entities(project)

    def project_messages(self, project: str) -> Iterator[Message]:
        return self.project_reads.project_messages(project)

    def entity_key_page(
        self, project: str, after: str | None, limit: int
    ) -> tuple[list[str], str | None]:
        return self.project_reads.entity_key_page(project, after, limit)

    def fact_page(
        self, project: str, after: str | None, limit: int
    ) -> tuple[list[Fact], str | None]:
        return self.project_reads.fact_page(project, after, limit)

    def message_page_of_project(
        self, project: str, after: str | None, limit: int
    ) -> tuple[list[Message], str | None]:
        return self.project_reads.message_page_of_project(project, after, limit)

    def passages_of_messages(
        self, project: str, message_ids: Sequence[str]
    ) -> dict[str, list[Passage]]:
        return self.project_reads.passages_of_messages(project, message_ids)

    # -- ErasureStore ------------------------------------------------------------------

    def erase(self, project: str, plan: ErasurePlan) -> int:
        return self.erasure_store.erase(project, plan)

    def remove_aliases(self, project: str, keys: Collection[str]) -> int:
        return self.erasure_store.remove_aliases(project, keys)

    def add_tombstones(self, project: str, hashes: Collection[str], at: str | None = None) -> None:
        self.erasure_store.add_tombstones(project, hashes, at)

    def erased(self, project: str, hashes: Collection[str]) -> set[str]:
        return self.erasure_store.erased(project, hashes)

    def clear_erased(self, project: str, hashes: Collection[str]) -> None:
        self.erasure_store.clear_erased(project, hashes)

    def erased_vectors(self, project: str) -> list[tuple[VectorKind, str]]:
        return self.erasure_store.erased_vectors(project)

    def clear_erased_vectors(self, project: str, items: Sequence[tuple[VectorKind, str]]) -> None:
        self.erasure_store.clear_erased_vectors(project, items)

    def erasures(self, project: str | None = None) -> list[ErasureRecord]:
        return self.erasure_store.erasures(project)

    def begin_erasure(self, pending: PendingErasure) -> None:
        self.erasure_store.begin_erasure(pending)

    def pending_erasure(self, project: str, erasure_id: str) -> PendingErasure | None:
        return self.erasure_store.pending_erasure(project, erasure_id)

    def pending_erasures(self, project: str) -> list[PendingErasure]:
        return self.erasure_store.pending_erasures(project)

    def erasing_projects(self) -> list[str]:
        return self.erasure_store.erasing_projects()

    def claim_erasure(
        self, project: str, erasure_id: str, holder: str, now: float, until: float
    ) -> bool:
        return self.erasure_store.claim_erasure(project, erasure_id, holder, now, until)

    def add_erasure_counts(
        self, project: str, erasure_id: str, counts: dict[str, int], cursor: str | None = None
    ) -> None:
        self.erasure_store.add_erasure_counts(project, erasure_id, counts, cursor)

    def finish_erasure(self, record: ErasureRecord, requested_at: str) -> bool:
        return self.erasure_store.finish_erasure(record, requested_at)

    def erasure_status(self, project: str, erasure_id: str) -> ErasureStatus | None:
        return self.erasure_store.erasure_status(project, erasure_id)

    # -- CredentialStore ---------------------------------------------------------------

    def add_credential(self, credential: Credential, secret_hash: str) -> None:
        self.credential_store.add_credential(credential, secret_hash)

    def project_for(self, secret_hash: str) -> str | None:
        return self.credential_store.project_for(secret_hash)

    def credential_for(self, secret_hash: str) -> Credential | None:
        return self.credential_store.credential_for(secret_hash)

    def record_use(self, secret_hash: str, used_at: str, unless_after: str) -> None:
        self.credential_store.record_use(secret_hash, used_at, unless_after)

    def list_credentials(self, project: str | None = None) -> list[Credential]:
        return self.credential_store.list_credentials(project)

    def credential_page(self, project: str, limit: int, after: str | None) -> list[Credential]:
        return self.credential_store.credential_page(project, limit, after)

    def revoke_credential(
        self, credential_id: str, revoked_at: str, project: str | None = None
    ) -> bool:
        return self.credential_store.revoke_credential(credential_id, revoked_at, project)
