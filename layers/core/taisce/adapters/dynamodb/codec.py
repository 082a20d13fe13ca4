"""Records as DynamoDB items and back: facts, passages, messages, credentials, the
erasure records, and item sizes as DynamoDB counts them.

Every record is checked as it is encoded (a missing or mistyped field raises), so a
batch with a bad record fails before anything is written.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...domain.model import (
    COUNTS,
    ROLES,
    Credential,
    ErasureRecord,
    ExtractionFailure,
    Fact,
    Message,
    Passage,
    PendingErasure,
    PendingVector,
)
from ...domain.validity import sortable, unsortable
from .keys import (
    LIST_MESSAGES,
    Item,
    audit_key,
    extraction_key,
    item_key,
    listing_pk,
    message_listing_sk,
    passage_sk,
)

# DynamoDB refuses items over 400 KB.
ITEM_BYTES = 400 * 1024

# Facts are the hot items (every recall reads them), and DynamoDB bills reads by item
# size including attribute names: facts use short names.
_FACT_ATTRIBUTES: tuple[tuple[str, str, bool], ...] = (
    # (Fact field, attribute, required)
    ("id", "id", True),
    ("subject", "s", True),
    ("subject_key", "sn", True),
    ("predicate", "p", True),
    ("object", "o", True),
    ("object_kind", "ok", True),
    ("object_key", "on", False),
    ("statement", "st", True),
    ("source_role", "r", True),
    ("quote", "q", False),
    ("context", "c", False),
    ("message_id", "m", False),
    ("valid_from", "vf", False),
    ("valid_to", "vt", False),
    ("recorded_at", "ra", True),
)
# Fact fields held as numbers (optional), after the text ones in Fact's field order.
_FACT_NUMBERS: tuple[tuple[str, str], ...] = (("quote_start", "qs"), ("quote_end", "qe"))
# Timestamps are kept in a fixed-width form, so that a FilterExpression compares
# them as times (see domain.validity.sortable); they are read back as stored.
_TIME_ATTRIBUTES = frozenset({"vf", "vt", "ra"})

# An entity name item: `n` the name as first written, `c_<role>` its live facts of that
# role, and on an alias's name item `a`, the key of its entity.
ALIAS_OF = "a"


def count_attribute(role: str) -> str:
    return f"c_{role}"


def live_count(item: Item, role: str) -> int:
    """How many live facts of this role name the entity (0 if the item holds none)."""
    return int(item.get(count_attribute(role), {}).get("N", "0"))


def has_live_facts(item: Item, counted: Sequence[str]) -> bool:
    """Whether a live fact of any of these roles names the entity (`counted`: their
    count_attribute, worked out once for a batch of items)."""
    return any(int(item.get(c, {}).get("N", "0")) > 0 for c in counted)


# -- values ----------------------------------------------------------------------


def text_of(item: Item, name: str) -> str | None:
    """A text attribute, or None if the item has none."""
    value = item.get(name)
    return None if value is None else value["S"]


def text_value(owner: str, name: str, value: object, *, required: bool) -> Item | None:
    if value is None:
        if required:
            raise ValueError(f"{owner}: {name} is missing")
        return None
    if not isinstance(value, str):
        raise TypeError(f"{owner}: {name} must be a string, not {type(value).__name__}")
    return {"S": value}


def number_value(owner: str, name: str, value: object) -> Item:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{owner}: {name} must be an integer")
    return {"N": str(value)}


def item_size(item: Item) -> int:
    """The item's size as DynamoDB counts it: attribute names and values, in bytes."""
    return sum(len(name.encode("utf-8")) + _value_size(value) for name, value in item.items())


def _value_size(value: Item) -> int:
    ((kind, v),) = value.items()
    if kind == "S":
        return len(v.encode("utf-8"))
    if kind == "N":
        return (len(v.lstrip("-").replace(".", "").lstrip("0")) + 1) // 2 + 1
    # A list or map: 3 bytes, and 1 more per element, besides what it holds.
    if kind == "L":
        return 3 + sum(1 + _value_size(e) for e in v)
    if kind == "M":
        return 3 + sum(1 + item_size({k: e}) for k, e in v.items())
    return 1  # BOOL, NULL


# -- facts -------------------------------------------------------------------------


def fact_attributes(f: Fact) -> Item:
    """A fact's attributes (short names, sortable times): its copies hold them all."""
    owner = f"fact {getattr(f, 'id', None)!r}"
    item: Item = {}
    for field_name, attribute, required in _FACT_ATTRIBUTES:
        value = text_value(owner, field_name, getattr(f, field_name), required=required)
        if value is not None:
            if attribute in _TIME_ATTRIBUTES:
                value = {"S": sortable(value["S"])}
            item[attribute] = value
    for field_name, attribute in _FACT_NUMBERS:
        number = getattr(f, field_name)
        if number is not None:
            item[attribute] = number_value(owner, field_name, number)
    if f.source_role not in ROLES:
        raise ValueError(f"{owner}: unknown source_role {f.source_role!r}")
    return item


def fact_of(item: Item) -> Fact:
    values = [text_of(item, attribute) for _, attribute, _ in _FACT_ATTRIBUTES]
    for n, (_, attribute, _) in enumerate(_FACT_ATTRIBUTES):
        if attribute in _TIME_ATTRIBUTES and values[n] is not None:
            values[n] = unsortable(values[n])  # type: ignore[arg-type]
    numbers = (int(item[a]["N"]) if a in item else None for _, a in _FACT_NUMBERS)
    return Fact(*values, *numbers)  # type: ignore[arg-type]


# -- messages and passages ---------------------------------------------------------

_MESSAGE_ATTRIBUTES = (
    ("id", True),
    ("role", True),
    ("content", True),
    ("source", False),
    ("occurred_at", True),
    ("recorded_at", True),
)


def message_attributes(m: Message) -> Item:
    """A message's attributes, as its claim item holds them."""
    owner = f"message {getattr(m, 'id', None)!r}"
    item: Item = {}
    for name, required in _MESSAGE_ATTRIBUTES:
        value = text_value(owner, name, getattr(m, name), required=required)
        if value is not None:
            item[name] = value
    if m.role not in ROLES:
        raise ValueError(f"{owner}: unknown role {m.role!r}")
    return item


def message_of(item: Item) -> Message:
    return Message(
        id=item["id"]["S"],
        role=item["role"]["S"],
        content=item["content"]["S"],
        source=text_of(item, "source"),
        occurred_at=item["occurred_at"]["S"],
        recorded_at=item["recorded_at"]["S"],
    )


def message_listing_item(project: str, m: Message) -> Item:
    """A message's listing item (keys.message_listing_sk): role and source for filters."""
    item: Item = {
        "PK": {"S": listing_pk(project, LIST_MESSAGES, m.id)},
        "SK": {"S": message_listing_sk(m.recorded_at, m.id)},
        "id": {"S": m.id},
        "role": {"S": m.role},
    }
    if m.source is not None:
        item["source"] = {"S": m.source}
    return item


def passage_item(pk: str, p: Passage, pos: Item | None) -> Item:
    """A passage's item in its message's partition. `pos` is its message's storing
    position (the very value the message's claim holds: put_messages sets it on both
    once reserved), or None for none."""
    where = f"passage {getattr(p, 'id', None)!r}"
    start = number_value(where, "start", p.start)
    item: Item = {
        **item_key(pk, passage_sk(p.start)),
        "id": text_value(where, "id", p.id, required=True),
        "message_id": text_value(where, "message_id", p.message_id, required=True),
        "role": text_value(where, "role", p.role, required=True),
        "start": start,
        "end": number_value(where, "end", p.end),
        "quote": text_value(where, "quote", p.quote, required=True),
    }
    return _placed(item, where, pos, p.source)


def _placed(item: Item, where: str, pos: Item | None, source: str | None) -> Item:
    """A passage or page item with its message's storing position and source, if any."""
    if pos is not None:
        item["pos"] = pos
    value = text_value(where, "source", source, required=False)
    if value is not None:
        item["source"] = value
    return item


def passage_of(item: Item) -> Passage:
    return Passage(
        id=item["id"]["S"],
        message_id=item["message_id"]["S"],
        role=item["role"]["S"],
        source=text_of(item, "source"),
        start=int(item["start"]["N"]),
        end=int(item["end"]["N"]),
        quote=item["quote"]["S"],
        position=int(item["pos"]["N"]) if "pos" in item else None,
    )


# A long message (more passages than one transaction holds with their vector marks) is
# stored in pages: up to PAGE_PASSAGES passages an item, under PAGE_BYTES, each page
# with one vector mark. Its claim says so (PAGED), for the erasure's rewrite.
PAGE_PASSAGES = 64
PAGE_BYTES = 96 * 1024
PAGED = "pg"


def pages(passages: Sequence[Passage]) -> list[list[Passage]]:
    """A message's passages (by start) cut into pages."""
    found: list[list[Passage]] = []
    size = 0
    for p in passages:
        weight = len(p.quote.encode("utf-8")) + len(p.id.encode("utf-8")) + 48
        if not found or len(found[-1]) >= PAGE_PASSAGES or size + weight > PAGE_BYTES:
            found.append([])
            size = 0
        found[-1].append(p)
        size += weight
    return found


def page_item(pk: str, page: Sequence[Passage], pos: Item | None) -> Item:
    """A page of a message's passages (all of one message: its id, role, source and
    storing position once), in its partition under its first passage's sort key."""
    first = page[0]
    where = f"passage {getattr(first, 'id', None)!r}"
    entries = []
    for p in page:
        owner = f"passage {getattr(p, 'id', None)!r}"
        entry = {
            "i": text_value(owner, "id", p.id, required=True),
            "s": number_value(owner, "start", p.start),
            "e": number_value(owner, "end", p.end),
            "q": text_value(owner, "quote", p.quote, required=True),
        }
        entries.append({"M": entry})
    item: Item = {
        **item_key(pk, passage_sk(first.start)),  # its start checked above
        "message_id": text_value(where, "message_id", first.message_id, required=True),
        "role": text_value(where, "role", first.role, required=True),
        "ps": {"L": entries},
    }
    return _placed(item, where, pos, first.source)


def is_page(item: Item) -> bool:
    return "ps" in item


def page_mark_id(message_id: str, page_sk: str) -> str:
    """The id of a page's vector mark: its message's id and the page's sort key."""
    return f"{message_id}#{page_sk}"


def page_mark_passages(entries: Sequence[Item]) -> Item:
    """A page mark's `ps`: of each of the page's entries, its id and its text."""
    return {"L": [{"M": {"i": e["M"]["i"], "q": e["M"]["q"]}} for e in entries]}


def passages_in_item(item: Item) -> list[Passage]:
    """The passages a passage item holds: one, or a page's."""
    if not is_page(item):
        return [passage_of(item)]
    source = text_of(item, "source")
    position = int(item["pos"]["N"]) if "pos" in item else None
    return [
        Passage(
            id=e["M"]["i"]["S"],
            message_id=item["message_id"]["S"],
            role=item["role"]["S"],
            source=source,
            start=int(e["M"]["s"]["N"]),
            end=int(e["M"]["e"]["N"]),
            quote=e["M"]["q"]["S"],
            position=position,
        )
        for e in item["ps"]["L"]
    ]


# -- credentials -------------------------------------------------------------------


def credential_attributes(credential: Credential) -> Item:
    owner = f"credential {credential.id!r}"
    attributes: Item = {}
    for name in ("id", "project", "label", "created_at", "revoked_at", "kind", "user"):
        value = text_value(
            owner,
            name,
            getattr(credential, name),
            required=name in ("id", "project", "created_at", "kind"),
        )
        if value is not None:
            attributes[name] = value
    return attributes


def credential_of(item: Item) -> Credential:
    return Credential(
        id=item["id"]["S"],
        project=item["project"]["S"],
        label=text_of(item, "label"),
        created_at=item["created_at"]["S"],
        revoked_at=text_of(item, "revoked_at"),
        # A credential stored before kinds existed is a project credential.
        kind=text_of(item, "kind") or "project",  # type: ignore[arg-type]
        user=text_of(item, "user"),
        last_used_at=text_of(item, "last_used_at"),
    )


# -- work ------------------------------------------------------------------------------


def pending_vectors_of(item: Item) -> list[PendingVector]:
    """The vectors a mark asks for: its item's, or each passage of a page's."""
    if item["kind"]["S"] != "page":
        return [pending_vector_of(item)]
    role = text_of(item, "role")
    position = int(item["pos"]["N"]) if "pos" in item else None
    at = item["at"]["S"] if "at" in item else None
    return [
        PendingVector("passage", e["M"]["i"]["S"], e["M"]["q"]["S"], role, position, at)  # type: ignore[arg-type]
        for e in item["ps"]["L"]
    ]


def pending_vector_of(item: Item) -> PendingVector:
    return PendingVector(
        item["kind"]["S"],  # type: ignore[arg-type]
        item["id"]["S"],
        item["text"]["S"],
        text_of(item, "role"),  # type: ignore[arg-type]
        int(item["pos"]["N"]) if "pos" in item else None,
        item["at"]["S"] if "at" in item else None,
    )


def extraction_item(pk: str, project: str, message_id: str) -> Item:
    """An extraction mark (pk: keys.EXTRACTIONS_PENDING_PK) or the start of a failure
    record (keys.EXTRACTIONS_FAILED_PK)."""
    return {
        **extraction_key(pk, project, message_id),
        "project": {"S": project},
        "message_id": {"S": message_id},
    }


def extraction_failure_of(item: Item) -> ExtractionFailure:
    return ExtractionFailure(
        project=item["project"]["S"],
        message_id=item["message_id"]["S"],
        error=item["error"]["S"],
        attempts=int(item["attempts"]["N"]),
        failed_at=item["failed_at"]["S"],
    )


# -- erasure ------------------------------------------------------------------------------


def audit_item(record: ErasureRecord) -> Item:
    """The audit record of one erasure: no name."""
    item: Item = {
        **audit_key(record.erased_at, record.id),
        "id": {"S": record.id},
        "project": {"S": record.project},
        "subject_hash": {"S": record.subject_hash},
        "erased_at": {"S": record.erased_at},
    }
    for name, count in record.counts().items():
        item[name] = {"N": str(count)}
    return item


def erasure_record_of(item: Item) -> ErasureRecord:
    return ErasureRecord(
        id=item["id"]["S"],
        project=item["project"]["S"],
        subject_hash=item["subject_hash"]["S"],
        erased_at=item["erased_at"]["S"],
        **{
            name: int(item[name]["N"])
            for name in ("facts", "entities", "messages", "passages", "reports")
        },
    )


def pending_erasure_attributes(pending: PendingErasure) -> Item:
    item: Item = {
        "subject_hash": {"S": pending.subject_hash},
        "names": {"L": [{"S": n} for n in pending.names]},
        "requested_at": {"S": pending.requested_at},
        **{k: {"N": str(pending.counts.get(k, 0))} for k in COUNTS},
    }
    if pending.spared:
        item["spared"] = {"L": [{"S": n} for n in pending.spared]}
    if pending.holder is not None and pending.held_until is not None:
        item["holder"] = {"S": pending.holder}
        item["held_until"] = {"N": repr(pending.held_until)}
    return item


def pending_erasure_of(project: str, item: Item) -> PendingErasure:
    return PendingErasure(
        id=item["SK"]["S"],
        project=project,
        subject_hash=item["subject_hash"]["S"],
        names=tuple(n["S"] for n in item["names"]["L"]),
        spared=tuple(n["S"] for n in item.get("spared", {}).get("L", [])),
        requested_at=item["requested_at"]["S"],
        counts={k: int(item[k]["N"]) for k in COUNTS},
        holder=item["holder"]["S"] if "holder" in item else None,
        held_until=float(item["held_until"]["N"]) if "held_until" in item else None,
        cursor=item["cursor"]["S"] if "cursor" in item else None,
    )
