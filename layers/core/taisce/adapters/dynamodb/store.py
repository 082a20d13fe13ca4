"""The AWS store: one DynamoDB table, single-table design (docs/dynamodb.md).

`DynamoDbStore` is the Store and CredentialStore ports over one table, made of one
class per capability, each in its own module, over the table's I/O (client.py):

    facts.py             put_facts (with contradiction closing), facts_about, delete_fact
    names.py             known_names, resolve_names, aliases, the project's entities
    merges.py            merge_entities
    messages.py          put_messages, passages (and the storing positions)
    listings.py          the project listings and the explorer's pages
    extractions.py       extraction marks and failures
    credentials.py       credentials
    work.py              the worker's marks: dirty entities, pending vectors
    reports.py           reports
    erasure.py           erase, tombstones, audit records
    erasure_requests.py  pending erasures and their statuses
    reindex.py           mark_everything
    document_ids.py      OpenSearch's document ids

Shared below them: keys.py (the key layout), codec.py (items), units.py (what is
stored together, in transactions, and the work marks it carries). They are mixins of
one object, not separate stores: a capability calls another's reads (a merge moves
facts, an erasure drops reports), and the store stays one client, one table.

Writes go through TransactWriteItems, each fact (or message with its passages) guarded
by ``attribute_not_exists(PK)`` on its claim item, so a retried or duplicated request
never stores twice and a duplicate id keeps the first copy. The client is built lazily
(no network at import or construction) and may be injected, so a test can count round
trips with a botocore event hook on ``store.client``.
"""

from __future__ import annotations

from typing import Any

from ...domain.model import StoreCapabilities
from .document_ids import DocumentIds
from .erasure import Erasure
from .erasure_requests import ErasureRequests
from .extractions import Extractions
from .facts import Facts
from .merges import Merges
from .reindex import Reindex


class DynamoDbStore(Facts, Merges, Reindex, Erasure, ErasureRequests, Extractions, DocumentIds):
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
        super().__init__(
            table_name,
            client,
            endpoint_url,
            consistent_reads=consistent_reads,
            direct_reads=direct_reads,
        )
        # With an extractor configured, a new message is stored with an extraction mark.
        self.mark_extractions = mark_extractions
        # Without an embedding model nothing would take pending-vector marks, so the
        # wiring turns them off (as for the embedded store).
        self.mark_vectors = mark_vectors
