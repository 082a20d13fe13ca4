"""The AWS store: one DynamoDB table, single-table design (docs/dynamodb.md).

`DynamoDbStore` is the Store and CredentialStore ports over one table: one part per
port, each in the module named as the port's (facts.py holds DynamoDbFactStore, the
FactStore; names.py DynamoDbNameLookup; aliases.py DynamoDbAliasStore, merges
included; ...; docs/architecture.md has the table), delegated to by
composed_store.ComposedStore. Beside them: reindex.py (mark_everything) and
document_ids.py (OpenSearch's document ids).

Every part shares one table object (units.UnitWrites over client.TableClient: one
client, one table). Below them: keys.py (the key layout), codec.py (items), units.py
(what is stored together, in transactions, and the work marks it carries),
project_listings.py (a project's sharded listings). A part that needs another's reads
or writes is given that part when it is built (an erasure drops reports and rewrites
messages), and the reads several parts make are functions over the table
(names.names_of, aliases.listed_aliases, reports.listed_reports, ...).

Writes go through TransactWriteItems, each fact (or message with its passages) guarded
by ``attribute_not_exists(PK)`` on its claim item, so a retried or duplicated request
never stores twice and a duplicate id keeps the first copy. The client is built lazily
(no network at import or construction) and may be injected, so a test can count round
trips with a botocore event hook on ``store.client``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ...domain.model import StoreCapabilities
from ..composed_store import ComposedStore, MarkSwitches
from .aliases import DynamoDbAliasStore
from .credentials import DynamoDbCredentialStore
from .document_ids import DynamoDbDocumentIds
from .erasure import DynamoDbErasureStore
from .facts import DynamoDbFactStore
from .listing import DynamoDbListingStore
from .messages import DynamoDbMessageStore
from .names import DynamoDbNameLookup
from .projects import DynamoDbProjectReads
from .reindex import DynamoDbReindex
from .reports import DynamoDbReportStore
from .scope_erasure import DynamoDbScopeErasure
from .units import UnitWrites
from .work import DynamoDbWorkMarks


class DynamoDbStore(ComposedStore):
    """Store and CredentialStore over one DynamoDB table (see docs/dynamodb.md)."""

    # Each call is a round trip, safe from several threads; planning an erasure reads
    # the whole project over the network, so the worker completes it.
    capabilities = StoreCapabilities(parallel_reads=True, defers_erasure=True)

    def __init__(
        self,
        table_name: str,
        client: Any | None = None,
        endpoint_url: str | None = None,
        *,
        consistent_reads: bool = True,
        mark_extractions: bool = False,
        mark_vectors: bool = True,
        direct_reads: bool = True,
    ) -> None:
        self.table_name = table_name
        self.table = table = UnitWrites(
            table_name,
            client,
            endpoint_url,
            consistent_reads=consistent_reads,
            direct_reads=direct_reads,
        )
        # With an extractor configured, a new message is stored with an extraction mark.
        # Without an embedding model nothing would take pending-vector marks, so the
        # wiring turns them off (as for the embedded store).
        self.switches = switches = MarkSwitches(vectors=mark_vectors, extractions=mark_extractions)
        self.fact_store = DynamoDbFactStore(table, switches)
        self.name_lookup = DynamoDbNameLookup(table)
        self.alias_store = DynamoDbAliasStore(table, switches)
        self.message_store = messages = DynamoDbMessageStore(table, switches)
        self.listing_store = DynamoDbListingStore(table)
        self.work_marks = DynamoDbWorkMarks(table)
        self.report_store = reports = DynamoDbReportStore(table)
        self.project_reads = projects = DynamoDbProjectReads(table, messages)
        self.erasure_store = DynamoDbErasureStore(table, reports, messages)
        self.scope_erasure = DynamoDbScopeErasure(table)
        self.credential_store = credentials = DynamoDbCredentialStore(table)
        self.reindex = DynamoDbReindex(table, credentials, projects)
        self.document_ledger = DynamoDbDocumentIds(table)

    @property
    def client(self) -> Any:
        """The botocore DynamoDB client every part shares, built on first use."""
        return self.table.client

    def close(self) -> None:
        self.table.close()

    def mark_everything(self, project: str | None = None) -> int:
        """Mark every passage, fact and live name for indexing, and every entity for a
        report rebuild (reindex.py). Returns how many vector marks were written."""
        return self.reindex.mark_everything(project)

    # -- a user's whole scope erased, a page at a time (scope_erasure.py) --------------

    def erase_scope_page(
        self, partition: str, cursor: str | None
    ) -> tuple[dict[str, int], str | None]:
        return self.scope_erasure.erase_scope_page(partition, cursor)

    def erase_scope_finish(self, partition: str) -> None:
        self.scope_erasure.erase_scope_finish(partition)

    # -- OpenSearch's document ids (adapters/opensearch/documents.py, DocumentIdLedger) --

    def document_ids(
        self, project: str, kind: str, item_ids: Collection[str]
    ) -> dict[str, list[str]]:
        return self.document_ledger.document_ids(project, kind, item_ids)

    def set_document_ids(self, project: str, kind: str, ids: Mapping[str, list[str]]) -> None:
        self.document_ledger.set_document_ids(project, kind, ids)

    def drop_document_ids(self, project: str, kind: str, item_ids: Collection[str]) -> None:
        self.document_ledger.drop_document_ids(project, kind, item_ids)
