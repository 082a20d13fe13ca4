"""Erasing everything in one user's scope of a project (domain/scope.py) from the table:
every item whose key starts with the user's partition, found through the partition's
own listings and fixed partitions (never a Scan), and the user's entries in the
partitions every project shares (extraction marks, the worker's index).

Done a page at a time (`erase_scope_page`), each page's step a cursor further: the
facts listed (claims, content markers, pending vector marks), the entities listed (each
entity's partition whole: fact copies, name, report copies and pointers, and through
the pointers the reports of its components), the messages listed (each message's
partition: the message and its passages), then the partition's fixed partitions. Each
record's items go before its listing item, so a page read again after a failure finds
what is left and nothing is counted twice. The vectors of what goes are recorded
under the partition first (the erasure deletes them from the index through its port,
then `erase_scope_finish` drops the record and the index's document ids).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from ...domain.fact_identity import fact_identity
from ...domain.model import ROLES, zero_counts
from .aliases import proposal_offset_item
from .client import TableClient, parallel
from .codec import ALIAS_OF, fact_of, passages_in_item
from .fact_identities import identity_marker
from .keys import (
    DIRTY,
    ERASING,
    EXTRACTIONS_FAILED_PK,
    EXTRACTIONS_PENDING_PK,
    LIST_ENTITIES,
    LIST_FACTS,
    LIST_MESSAGES,
    MESSAGE_SK,
    NAME_SK,
    PASSAGES_PREFIX,
    REPORT_MEMBER_PREFIX,
    REPORT_SK,
    VECTORS,
    WORK_PK,
    Item,
    aliases_pk,
    document_pk,
    entity_pk,
    erased_pk,
    erased_vector_key,
    erased_vectors_pk,
    erasing_pk,
    erasure_pk,
    extraction_prefix,
    fact_claim_key,
    identity_key,
    key_of,
    mark_pk,
    message_pk,
    positions_key,
    report_list_pk,
    report_pk,
    vector_mark_pks,
    vector_sk,
    work_index_prefix,
)
from .project_listings import listing_page

# Records read per page of a listing (a page's step deletes what they hold).
PAGE = 100
_PHASES = (LIST_FACTS, LIST_ENTITIES, LIST_MESSAGES, "X")
_VECTOR_KINDS = ("fact", "entity", "passage", "report")


class DynamoDbScopeErasure:
    """erase_scope_page and erase_scope_finish (see the module)."""

    def __init__(self, table: TableClient) -> None:
        self.table = table

    # -- the table's reads and writes ---------------------------------------------------

    def _items(self, pk: str, prefix: str | None = None) -> list[Item]:
        values: Item = {":pk": {"S": pk}}
        condition = "PK = :pk"
        if prefix is not None:
            condition += " AND begins_with(SK, :s)"
            values[":s"] = {"S": prefix}
        return list(
            self.table._query(KeyConditionExpression=condition, ExpressionAttributeValues=values)
        )

    def _partitions(self, pks: Sequence[str]) -> list[Item]:
        """Every item of these partitions, the Queries in parallel."""
        return [i for items in parallel(self._items, list(dict.fromkeys(pks))) for i in items]

    def _delete(self, keys: Iterable[Item]) -> None:
        unique = {(k["PK"]["S"], k["SK"]["S"]): k for k in keys}
        self.table._batch_write(
            [{"DeleteRequest": {"Key": key_of(k)}} for k in unique.values()], ordered=False
        )

    def _record_vectors(self, partition: str, vectors: Iterable[tuple[str, str]]) -> None:
        """The vectors of what a step deletes, recorded before it deletes anything."""
        self.table._batch_write(
            [
                {"PutRequest": {"Item": erased_vector_key(partition, kind, i)}}
                for kind, i in dict.fromkeys(vectors)
            ],
            ordered=False,
        )

    # -- the steps ----------------------------------------------------------------------

    def erase_scope_page(
        self, partition: str, cursor: str | None
    ) -> tuple[dict[str, int], str | None]:
        """One page's step from `cursor` (None: the start): the counts it erased and the
        cursor after it (None once every item of the partition but the vectors' record
        and document ids is gone)."""
        phase, _, after = (cursor or f"{LIST_FACTS}:").partition(":")
        counts = zero_counts()
        if phase == "X":
            self._erase_fixed(partition)
            return counts, None
        listed, following = listing_page(self.table, partition, phase, after or None, PAGE)
        if listed:
            step = {
                LIST_FACTS: self._erase_facts,
                LIST_ENTITIES: self._erase_entities,
                LIST_MESSAGES: self._erase_messages,
            }[phase]
            step(partition, listed, counts)
            # The listing items last: a page read again finds what a failure left.
            self._delete(listed)
        if following is None:
            return counts, f"{_PHASES[_PHASES.index(phase) + 1]}:"
        return counts, f"{phase}:{following}"

    def _erase_facts(self, partition: str, listed: list[Item], counts: dict[str, int]) -> None:
        """The facts' claims, content markers and pending vector marks (their copies
        go with their entities' partitions)."""
        ids = [i["id"]["S"] for i in listed]
        self._record_vectors(partition, [("fact", i) for i in ids])
        claims = self.table._batch_get([fact_claim_key(partition, i) for i in ids])
        marks = [vector_sk("fact", i) for i in ids]
        gone = [key_of(c) for c in claims]
        gone += [k for c in claims for k in identity_marker(partition, c)]
        # A closed fact's claim no longer names its content's marker, which may be left
        # (stale): the marker of its content as stored (before it was closed) goes too.
        facts = [fact_of(i) for i in listed]
        stored = {fact_identity(replace(f, valid_to=None)) for f in facts}
        gone += [identity_key(partition, i) for i in stored | {fact_identity(f) for f in facts}]
        gone += [{"PK": {"S": mark_pk(partition, sk)}, "SK": {"S": sk}} for sk in marks]
        self._delete(gone)
        counts["facts"] += len(claims)

    def _erase_entities(self, partition: str, listed: list[Item], counts: dict[str, int]) -> None:
        """Each entity's partition whole, and the reports of its components."""
        keys = [i["k"]["S"] for i in listed]
        items = self._partitions([entity_pk(partition, k) for k in keys])
        named = [i for i in items if i["SK"]["S"] == NAME_SK]
        counts["entities"] += sum(ALIAS_OF not in i for i in named)
        vectors = [("entity", f"{role}:{k}") for k in keys for role in ROLES]
        reports, listings = self._reports_held(partition, items)
        found = {i["id"]["S"] for i in reports if i["SK"]["S"] == REPORT_SK and "id" in i}
        self._record_vectors(partition, vectors + [("report", r) for r in sorted(found)])
        # Reports first, then the entities' partitions (which point at them).
        self._delete(key_of(i) for i in (*reports, *listings))
        self._delete(key_of(i) for i in items)
        counts["reports"] += len(found)

    def _reports_held(self, partition: str, items: list[Item]) -> tuple[list[Item], list[Item]]:
        """The items of the reports entities' partitions name (their level-0 copies,
        and through their component pointers every report of those components), and
        the items of those components' report listings."""
        report_ids = {
            i["id"]["S"]
            for i in items
            if i["SK"]["S"].startswith(REPORT_MEMBER_PREFIX) and "id" in i
        }
        components = {
            (i["SK"]["S"].removeprefix("RC#"), i["component"]["S"])
            for i in items
            if i["SK"]["S"].startswith("RC#") and "component" in i
        }
        listings = self._partitions([report_list_pk(partition, r, c) for r, c in components])
        report_ids |= {i["id"]["S"] for i in listings if "id" in i}
        reports = self._partitions([report_pk(partition, r) for r in sorted(report_ids)])
        return reports, listings

    def _erase_messages(self, partition: str, listed: list[Item], counts: dict[str, int]) -> None:
        """Each message's partition: the message and its passages."""
        items = self._partitions([message_pk(partition, i["id"]["S"]) for i in listed])
        passages = [
            p
            for i in items
            if i["SK"]["S"].startswith(PASSAGES_PREFIX)
            for p in passages_in_item(i)
        ]
        self._record_vectors(partition, [("passage", p.id) for p in passages])
        self._delete(key_of(i) for i in items)
        counts["messages"] += sum(i["SK"]["S"] == MESSAGE_SK for i in items)
        counts["passages"] += len(passages)

    def _erase_fixed(self, partition: str) -> None:
        """The partition's fixed partitions (aliases, positions, marks, its own name
        erasures and tombstones) and its entries in the shared ones."""
        pks = [aliases_pk(partition), positions_key(partition)["PK"]["S"]]
        pks += [*vector_mark_pks(partition), erased_pk(partition)]
        pks += [erasing_pk(partition), erasure_pk(partition)]
        gone = self._partitions(pks)
        # An alias's own name item (and partition) is no listed entity when the alias
        # named nothing before its merge: each goes before the alias's listing item.
        aliased = [i["k"]["S"] for i in gone if i["PK"]["S"] == pks[0] and "k" in i]
        if aliased:
            self._record_vectors(
                partition, [("entity", f"{r}:{k}") for k in aliased for r in ROLES]
            )
            self._delete(
                key_of(i) for i in self._partitions([entity_pk(partition, k) for k in aliased])
            )
        shared = [
            (EXTRACTIONS_PENDING_PK, extraction_prefix(partition)),
            (EXTRACTIONS_FAILED_PK, extraction_prefix(partition)),
            *((WORK_PK, work_index_prefix(kind, partition)) for kind in (DIRTY, VECTORS, ERASING)),
        ]
        gone += [i for items in parallel(lambda s: self._items(*s), shared) for i in items]
        self._delete(key_of(i) for i in gone)

    def erase_scope_finish(self, partition: str) -> None:
        """After the vectors are deleted from the index: their record and the index's
        document ids of the partition."""
        pks = [erased_vectors_pk(partition)]
        pks += [document_pk(partition, kind) for kind in _VECTOR_KINDS]
        # With where its merge proposals stood (under the project, a hash of the partition).
        self._delete([*(key_of(i) for i in self._partitions(pks)), proposal_offset_item(partition)])
