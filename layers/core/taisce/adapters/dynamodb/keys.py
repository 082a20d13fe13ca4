"""Every key of the table: the one place the layout is written (docs/dynamodb.md
explains it). One table, single-table design, key (PK, SK), no secondary index; every
project-scoped key starts with ``P#<project>#``, nothing is shared between projects.

    P#<p>#E#<key>             F#<seq>          a fact whose subject or entity object is <key>:
                                               a full copy ("d" says which side), so one
                                               Query per entity reads both directions,
                                               already in storing order
    P#<p>#E#<key>             N                the entity name (an alias's holds `a`)
    P#<p>#E#<key>             RM#<role>#<id>   a level-0 report holding the entity (member copy)
    P#<p>#E#<key>             RC#<role>        the entity's component pointer
    P#<p>#FACT#<id>           FACT             the fact's id claim: where its copies live
    P#<p>#M#<id>              M                a message
    P#<p>#M#<id>              S#<start>        its passages, in order of start
    P#<p>#POSITIONS           POSITIONS        the project's storing-position counter
    P#<p>#PROPOSALS           proposals:<hash> where a partition's next proposals request starts
    P#<p>#L#<F|E|M>#<shard>   <id> / <key> / <recorded_at>#<id>   the project's listings
    P#<p>#WORK                D#<role>#<key> / V#<kind>#<id>      the worker's marks
    P#<p>#ALIAS               A#<alias key>    the project's aliases
    P#<p>#R#<id>              R / K#<n>        a report and its key chunks
    P#<p>#RC#<role>#<comp>    R#<id> / R#<id>#K#<n>   a component's report listing
    P#<p>#ERASED              T#<subject hash> an erased subject's tombstone
    P#<p>#ERASED_VECTORS      <kind>#<id>      vectors still to delete after an erasure
    P#<p>#ERASING             <erasure id>     a pending erasure
    P#<p>#ERASURE             <erasure id>     a finished erasure's status
    P#<p>#VDOC#<kind>         <item id>        OpenSearch's document ids of an item
    WORK                      D#<p>#<n> / V#<p>#<n> / ER#<p>#<id>  projects with work
    CRED#<hash>               CRED             a credential by hash (the authorizer's GetItem)
    CREDS                     C#<id>           every credential by id (revoke by id, list all)
    CREDS#<p>                 C#<id> / B       the project's credential listing (a copy), and
                                               B: the copies of older credentials were made
    XQ / XF                   <p>#<message id> extraction marks / failures, every project
    ERASURES                  <erased_at>#<id> the audit records of every project
    IDEMPOTENCY#worker        <hash>           the worker's Powertools records (functions/worker)

<seq> is "<time ns, 20 digits>.<batch token>.<index in batch>": written at storing
time, so sort keys sort in storing order and a batch's facts sit together.

Keys are one-to-one: "#", "%" and "~" in a project are escaped (a project cannot reach
into another's keys), and a component longer than 512 UTF-8 bytes is replaced by "~" and
its SHA-256 (the value itself stays in the item): DynamoDB limits a partition key to
2048 bytes and a sort key to 1024.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

Item = dict[str, Any]

_KEY_PART_BYTES = 512


def digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def key_part(value: str) -> str:
    """A key component that holds no "#" and is never too long, one-to-one."""
    escaped = value.replace("%", "%25").replace("#", "%23").replace("~", "%7E")
    if len(escaped.encode("utf-8")) > _KEY_PART_BYTES:
        return "~" + digest(value)
    return escaped


def key_tail(value: str) -> str:
    """The last component of a key: may hold "#", never too long, one-to-one."""
    if len(value.encode("utf-8")) > _KEY_PART_BYTES:
        return "~" + digest(value)
    return "~" + value if value.startswith("~") else value


def project_prefix(project: str) -> str:
    return f"P#{key_part(project)}#"


def item_key(pk: str, sk: str) -> Item:
    """The key of one item, as DynamoDB takes it."""
    return {"PK": {"S": pk}, "SK": {"S": sk}}


def key_of(item: Item) -> Item:
    """An item's own key."""
    return item_key(item["PK"]["S"], item["SK"]["S"])


# -- facts, entities, messages ---------------------------------------------------------

FACT_SK = "FACT"
NAME_SK = "N"
MESSAGE_SK = "M"
FACTS_PREFIX = "F#"
PASSAGES_PREFIX = "S#"


def entity_pk(project: str, key: str) -> str:
    return f"{project_prefix(project)}E#{key_tail(key)}"


def fact_pk(project: str, fact_id: str) -> str:
    return f"{project_prefix(project)}FACT#{key_tail(fact_id)}"


def message_pk(project: str, message_id: str) -> str:
    return f"{project_prefix(project)}M#{key_tail(message_id)}"


def fact_sk(seq: str) -> str:
    """A fact copy's sort key: its place in storing order."""
    return FACTS_PREFIX + seq


def passage_sk(start: int) -> str:
    return f"{PASSAGES_PREFIX}{start:010d}"


def name_key(project: str, key: str) -> Item:
    """The entity's name item (an alias's too)."""
    return item_key(entity_pk(project, key), NAME_SK)


def fact_claim_key(project: str, fact_id: str) -> Item:
    """The fact's id claim."""
    return item_key(fact_pk(project, fact_id), FACT_SK)


def identity_key(project: str, identity: str) -> Item:
    """The marker of a fact's content (domain/fact_identity.py): which live fact holds it."""
    return item_key(f"{project_prefix(project)}FI#{identity}", FACT_SK)


def message_key(project: str, message_id: str) -> Item:
    return item_key(message_pk(project, message_id), MESSAGE_SK)


# A project's storing order of messages: one counter item, raised by a storing request
# by its batch's size (UpdateItem ADD, atomic), so concurrent requests get disjoint ranges.
POSITIONS_SK = "POSITIONS"


def positions_key(project: str) -> Item:
    return item_key(f"{project_prefix(project)}POSITIONS", POSITIONS_SK)


# -- work marks ----------------------------------------------------------------------
# What the worker must do lives in one partition per project, P#<p>#WORK: dirty marks
# (D#<role>#<entity key>) and pending vectors (V#<kind>#<id>), written in the same
# transaction as the record that needs them. The WORK partition is the index of
# projects with work: D#<project>#<shard> and V#<project>#<shard>, one shard touched
# (new token) by every transaction that writes such a mark, removed by the worker once
# the project's marks of that kind are gone; ER#<project>#<erasure id> for each pending
# erasure. See docs/dynamodb.md, "Work marks".

WORK_PK = "WORK"
DIRTY = "D"
VECTORS = "V"
ERASING = "ER"
# A project's index entry is spread over this many items, one picked at random per
# transaction: concurrent writes to one project then rarely touch the same entry
# (DynamoDB cancels transactions that touch one item at once).
WORK_SHARDS = 8


def work_pk(project: str) -> str:
    return f"{project_prefix(project)}WORK"


def dirty_sk(role: str, key: str) -> str:
    return f"{DIRTY}#{role}#{key_tail(key)}"


def vector_sk(kind: str, item_id: str) -> str:
    return f"{VECTORS}#{kind}#{key_tail(item_id)}"


# A project's pending vector marks are spread over this many partitions (by their sort
# key): a maximum-size batch of messages writes ~6,600 marks, which one partition takes
# at 1,000 write units a second. The first is the project's WORK partition itself, which
# held them all before, so the marks written then are still read (and cleared) there.
VECTOR_MARK_SHARDS = 8


def vector_mark_pks(project: str) -> list[str]:
    """The partitions of a project's pending vector marks."""
    pk = work_pk(project)
    return [pk] + [f"{pk}#{n}" for n in range(1, VECTOR_MARK_SHARDS)]


def mark_pk(project: str, sk: str) -> str:
    """The partition of a work mark: dirty marks in the project's WORK partition, a
    pending vector mark in the one of vector_mark_pks its sort key picks."""
    if not sk.startswith(f"{VECTORS}#"):
        return work_pk(project)
    return vector_mark_pks(project)[int(digest(sk)[:8], 16) % VECTOR_MARK_SHARDS]


def work_index_prefix(kind: str, project: str) -> str:
    """The sort keys of a project's index entries for one kind start with this."""
    return f"{kind}#{key_part(project)}#"


def work_entry_key(prefix: str) -> Item:
    """One of the WORK_SHARDS index entries under this prefix, picked at random."""
    # Not for secrets: spreads concurrent writers over the shards.
    return item_key(WORK_PK, f"{prefix}{random.randrange(WORK_SHARDS)}")  # nosec B311


def erasure_work_key(project: str, erasure_id: str) -> Item:
    """The WORK entry that lists a project with a pending erasure (the worker's sweep)."""
    return item_key(WORK_PK, f"{work_index_prefix(ERASING, project)}{erasure_id}")


# -- project listings: what a project holds, read without a Scan ---------------------
# P#<p>#L#F#<shard> / <fact id>                   a full copy of the fact (no "d")
# P#<p>#L#E#<shard> / <entity key>                `k`: an entity name item exists
# P#<p>#L#M#<shard> / <recorded_at>#<message id>  `id`, `role`, `source`
# Written in the same transactions as the records they list. Shards spread a busy
# project's writes over partitions: the first 32 bits of the id's SHA-256, modulo.

LISTING_SHARDS = 4
LIST_FACTS = "F"
LIST_ENTITIES = "E"
LIST_MESSAGES = "M"


def listing_pks(project: str, kind: str) -> list[str]:
    """The partitions of one listing, one per shard."""
    return [f"{project_prefix(project)}L#{kind}#{n}" for n in range(LISTING_SHARDS)]


def listing_pk(project: str, kind: str, item_id: str) -> str:
    return listing_pks(project, kind)[int(digest(item_id)[:8], 16) % LISTING_SHARDS]


def listing_key(project: str, kind: str, item_id: str) -> Item:
    return item_key(listing_pk(project, kind, item_id), key_tail(item_id))


def message_listing_sk(recorded_at: str, message_id: str) -> str:
    """A message's listing sort key: by (recorded_at, id) within its shard, so the
    explorer pages newest first by merging the shards."""
    return f"{recorded_at}#{key_tail(message_id)}"


# -- aliases ----------------------------------------------------------------------------

ALIAS_PREFIX = "A#"


def aliases_pk(project: str) -> str:
    return f"{project_prefix(project)}ALIAS"


def alias_sk(alias_key: str) -> str:
    return ALIAS_PREFIX + key_tail(alias_key)


# -- credentials --------------------------------------------------------------------------

CREDENTIAL_SK = "CRED"
CREDENTIALS_PK = "CREDS"


def credential_key(secret_hash: str) -> Item:
    """A credential by the hash of its secret (the authorizer's one GetItem: its IAM
    policy allows CRED# keys only, template.yaml)."""
    return item_key(f"CRED#{secret_hash}", CREDENTIAL_SK)


def credential_listing_key(credential_id: str) -> Item:
    return item_key(CREDENTIALS_PK, f"C#{credential_id}")


def project_credentials_pk(project: str) -> str:
    """Not under P#<project>#: the credentials function's rights are the CRED and CREDS
    keys alone (template.yaml), and no memory partition starts with CREDS#."""
    return f"CREDS#{key_part(project)}"


def project_credential_key(project: str, credential_id: str) -> Item:
    """A project's copy of its credential's listing item: a project's listing reads its
    own partition, whatever the number of credentials of other projects."""
    return item_key(project_credentials_pk(project), f"C#{credential_id}")


# The marker, in a project's credentials partition, that the copies of its credentials
# stored before the copies existed were made ("B" sorts before every "C#<id>").
CREDENTIALS_BACKFILLED_SK = "B"


# -- extraction marks and failures ------------------------------------------------------
# Every project's in two partitions, so a worker finds pending work with one Query.

EXTRACTIONS_PENDING_PK = "XQ"
EXTRACTIONS_FAILED_PK = "XF"


def extraction_prefix(project: str) -> str:
    """The sort keys of a project's extraction marks (or failures) start with this."""
    return f"{key_part(project)}#"


def extraction_key(pk: str, project: str, message_id: str) -> Item:
    return item_key(pk, extraction_prefix(project) + key_tail(message_id))


# -- erasure -------------------------------------------------------------------------------

ERASURES_PK = "ERASURES"
TOMBSTONE_PREFIX = "T#"
# A user's tombstone holds when the scope was erased (sortable), for guarded writes.
TOMBSTONE_AT = "at"


def erased_pk(project: str) -> str:
    return project_prefix(project) + "ERASED"


def tombstone_key(project: str, subject_hash: str) -> Item:
    return item_key(erased_pk(project), TOMBSTONE_PREFIX + subject_hash)


def erased_vectors_pk(project: str) -> str:
    return project_prefix(project) + "ERASED_VECTORS"


def erased_vector_key(project: str, kind: str, item_id: str) -> Item:
    return item_key(erased_vectors_pk(project), f"{kind}#{item_id}")


def erasing_pk(project: str) -> str:
    """A project's pending erasures."""
    return project_prefix(project) + "ERASING"


def erasure_pk(project: str) -> str:
    """A project's finished erasures' statuses."""
    return project_prefix(project) + "ERASURE"


def audit_key(erased_at: str, erasure_id: str) -> Item:
    return item_key(ERASURES_PK, f"{erased_at}#{erasure_id}")


# -- OpenSearch document ids (adapters/opensearch/documents.py, DocumentIdLedger) ----------


def document_pk(project: str, kind: str) -> str:
    return f"{project_prefix(project)}VDOC#{kind}"


def document_key(project: str, kind: str, item_id: str) -> Item:
    return item_key(document_pk(project, kind), key_tail(item_id))


# -- reports (docs/dynamodb.md, "Reports") ------------------------------------------------

REPORT_SK = "R"
REPORT_MEMBER_PREFIX = "RM#"
REPORT_LISTING_PREFIX = "R#"
REPORT_CHUNK_PREFIX = "K#"


def report_pk(project: str, report_id: str) -> str:
    return f"{project_prefix(project)}R#{key_tail(report_id)}"


def report_list_pk(project: str, role: str, component: str) -> str:
    return f"{project_prefix(project)}RC#{role}#{key_tail(component)}"


def report_listing_sk(report_id: str) -> str:
    return REPORT_LISTING_PREFIX + key_tail(report_id)


def report_member_sk(role: str, report_id: str) -> str:
    return f"{REPORT_MEMBER_PREFIX}{role}#{key_tail(report_id)}"


def report_pointer_sk(role: str) -> str:
    return f"RC#{role}"


def chunk_sk(owner_sk: str, n: int) -> str:
    """The sort key of key chunk n of a report ("") or of a listing item (its SK)."""
    chunk = f"{REPORT_CHUNK_PREFIX}{n:04d}"
    return f"{owner_sk}#{chunk}" if owner_sk else chunk
