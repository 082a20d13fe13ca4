"""Reports (docs/dynamodb.md, "Reports"): a report by id, a copy in each member's
partition (level 0), a pointer per entity and role to its component, and a listing per
component; a report's entity keys inline or, past 64 KB, in chunk items.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence

from ...domain.model import Report, Role
from ...domain.scope import partitions
from .client import TableClient, parallel
from .codec import ITEM_BYTES, item_size, text_of
from .keys import (
    REPORT_CHUNK_PREFIX,
    REPORT_MEMBER_PREFIX,
    REPORT_SK,
    Item,
    chunk_sk,
    entity_pk,
    item_key,
    report_list_pk,
    report_listing_sk,
    report_member_sk,
    report_pk,
    report_pointer_sk,
)

# A report's entity keys are held in its items as JSON up to this size, and beyond it
# in chunk items of this size ("K#<n>" beside the report, "<listing SK>#K#<n>" beside
# its listing item): a component reaches tens of thousands of entities, and DynamoDB
# refuses items over 400 KB.
KEYS_INLINE_BYTES = 64 * 1024


KEYS_CHUNK_BYTES = 100 * 1024


def _chunk_count(item: Item) -> int:
    return int(item["kc"]["N"]) if "kc" in item else 0


def _split_keys(keys: Sequence[str]) -> list[list[str]]:
    """Keys in runs whose JSON stays within KEYS_CHUNK_BYTES."""
    runs: list[list[str]] = [[]]
    size = 2
    for k in keys:
        cost = len(json.dumps(k, ensure_ascii=False).encode("utf-8")) + 1
        if runs[-1] and size + cost > KEYS_CHUNK_BYTES:
            runs.append([])
            size = 2
        runs[-1].append(k)
        size += cost
    return runs


def _with_keys(item: Item, keys: Sequence[str], owner_sk: str) -> list[Item]:
    """The item with its keys inline, or with `kc` and the chunk items that hold them."""
    encoded = json.dumps(list(keys), ensure_ascii=False)
    if len(encoded.encode("utf-8")) <= KEYS_INLINE_BYTES:
        return [{**item, "entity_keys": {"S": encoded}}]
    runs = _split_keys(keys)
    chunks = [
        {
            "PK": item["PK"],
            "SK": {"S": chunk_sk(owner_sk, n)},
            "keys": {"S": json.dumps(run, ensure_ascii=False)},
        }
        for n, run in enumerate(runs)
    ]
    return [{**item, "kc": {"N": str(len(runs))}}, *chunks]


def _key_chunks(items: Sequence[Item]) -> dict[str, list[Item]]:
    """Chunk items of a listing partition, by the sort key of the item they belong to."""
    found: dict[str, list[Item]] = {}
    for i in items:
        owner, marker, _ = i["SK"]["S"].rpartition(f"#{REPORT_CHUNK_PREFIX}")
        if marker and "keys" in i:
            found.setdefault(owner, []).append(i)
    return found


def _keys_of(item: Item, chunks: Sequence[Item]) -> tuple[str, ...]:
    """A report's or listing's entity keys: inline, or from all its chunks in order."""
    inline = text_of(item, "entity_keys")
    if inline is not None:
        return tuple(json.loads(inline))
    ordered = sorted(chunks, key=lambda c: c["SK"]["S"])
    if len(ordered) != _chunk_count(item):
        raise RuntimeError(f"report keys incomplete for {item['SK']['S']}")
    return tuple(k for c in ordered for k in json.loads(c["keys"]["S"]))


def _report_attributes(r: Report) -> Item:
    item: Item = {
        "id": {"S": r.id},
        "role": {"S": r.role},
        "level": {"N": str(r.level)},
        "title": {"S": r.title},
        "summary": {"S": r.summary},
        "path": {"S": json.dumps(list(r.path), ensure_ascii=False)},
        "source_messages": {"S": json.dumps(list(r.source_messages), ensure_ascii=False)},
        "component": {"S": r.component},
    }
    if r.parent_id is not None:
        item["parent_id"] = {"S": r.parent_id}
    return item


def _report(item: Item, keys_read: tuple[str, ...] | None = None) -> Report:
    keys = text_of(item, "entity_keys")
    return Report(
        id=item["id"]["S"],
        role=item["role"]["S"],  # type: ignore[arg-type]
        level=int(item["level"]["N"]),
        parent_id=text_of(item, "parent_id"),
        title=item["title"]["S"],
        summary=item["summary"]["S"],
        path=tuple(json.loads(item["path"]["S"])),
        source_messages=tuple(json.loads(item["source_messages"]["S"])),
        # Member copies leave the keys out (a recall never reads them; a community can
        # be large): such a report comes back with none.
        entity_keys=keys_read
        if keys_read is not None
        else (tuple(json.loads(keys)) if keys is not None else ()),
        component=item["component"]["S"],
    )


def _report_items(project: str, role: str, reports: Sequence[Report]) -> list[tuple[str, Item]]:
    """(stage, item) for each item that stores these reports: a pointer per entity and
    role to its component ("pointer"); a listing per report in its component's
    partition, the report by id (each with its keys inline or in chunks), and a copy in
    the partition of each member of a level-0 report ("report"). Raises before anything
    is written if an item would pass DynamoDB's item limit."""
    staged: list[tuple[str, Item]] = []
    pointers: dict[str, str] = {}
    for r in reports:
        for k in r.entity_keys:
            pointers.setdefault(k, r.component)
    for r in reports:
        listing_sk = report_listing_sk(r.id)
        listing = {
            **item_key(report_list_pk(project, role, r.component), listing_sk),
            "id": {"S": r.id},
            "level": {"N": str(r.level)},
        }
        staged += [("report", i) for i in _with_keys(listing, r.entity_keys, listing_sk)]
        report = {**item_key(report_pk(project, r.id), REPORT_SK), **_report_attributes(r)}
        staged += [("report", i) for i in _with_keys(report, r.entity_keys, "")]
        if r.level == 0:
            copy = _report_attributes(r)
            for k in r.entity_keys:
                staged.append(
                    (
                        "report",
                        {**item_key(entity_pk(project, k), report_member_sk(role, r.id)), **copy},
                    )
                )
    for k, component in pointers.items():
        pointer = {
            **item_key(entity_pk(project, k), report_pointer_sk(role)),
            "component": {"S": component},
        }
        staged.append(("pointer", pointer))
    for _, item in staged:
        if item_size(item) > ITEM_BYTES:
            raise ValueError(f"report item {item['SK']['S']!r} over DynamoDB's item limit")
    return staged


def listed_reports(
    table: TableClient, project: str, role: str, component: str
) -> list[tuple[Item, tuple[str, ...]]]:
    """(listing item, entity keys) of a component's reports: one Query of its
    listing partition, which holds the listing items and their key chunks."""
    items = list(
        table._query(
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": report_list_pk(project, role, component)}},
            ConsistentRead=True,
        )
    )
    chunks = _key_chunks(items)
    return [
        (i, _keys_of(i, chunks.get(i["SK"]["S"], [])))
        for i in items
        if "id" in i  # not a key chunk
    ]


class DynamoDbReportStore:
    """Reports as the worker replaces them and recall reads them."""

    def __init__(self, table: TableClient) -> None:
        self.table = table

    def report_components(self, project: str, role: Role, keys: Collection[str]) -> set[str]:
        """The components whose reports hold any of these keys: one pointer item per
        entity and role (BatchGetItem, 100 keys a call)."""
        pointers = self.table._batch_get(
            [item_key(entity_pk(project, k), report_pointer_sk(role)) for k in keys]
        )
        return {i["component"]["S"] for i in pointers}

    def replace_reports(
        self, project: str, role: Role, components: Collection[str], reports: Sequence[Report]
    ) -> list[str]:
        """Drop the reports of `components` and store `reports`; returns the ids dropped.

        Not one transaction (a component's reports can be thousands of items). Every
        item is built and checked against DynamoDB's item limit before the first write
        (a component's entity keys are split over items of at most ~100 KB). New items
        are written before old ones are deleted, so a failure part-way leaves the old
        reports readable, and the pass that follows (its dirty marks are cleared only
        after this returns) finds the same components and finishes: (1) new listings,
        reports and member copies; (2) old items not rewritten: reports and member
        copies, then listings; (3) pointers, new ones put and old ones not rewritten
        deleted, last (the next pass finds components through the pointers)."""
        old = [
            entry
            for listed in parallel(
                lambda c: listed_reports(self.table, project, role, c),
                list(dict.fromkeys(components)),
            )
            for entry in listed
        ]
        new_items = _report_items(project, role, reports)
        rewritten = {(i["PK"]["S"], i["SK"]["S"]) for _, i in new_items}

        def delete(keys: Sequence[tuple[str, str]]) -> None:
            gone = [k for k in dict.fromkeys(keys) if k not in rewritten]
            self.table._batch_write(
                [{"DeleteRequest": {"Key": item_key(pk, sk)}} for pk, sk in gone], ordered=False
            )

        self.table._batch_write(
            [{"PutRequest": {"Item": i}} for s, i in new_items if s == "report"], ordered=False
        )
        old_keys: set[str] = set()
        reports_gone: list[tuple[str, str]] = []
        listings_gone: list[tuple[str, str]] = []
        for listing, keys in old:
            old_keys.update(keys)
            report = listing["id"]["S"]
            members = keys if listing["level"]["N"] == "0" else ()
            reports_gone.append((report_pk(project, report), REPORT_SK))
            reports_gone += [
                (report_pk(project, report), chunk_sk("", n)) for n in range(_chunk_count(listing))
            ]
            reports_gone += [
                (entity_pk(project, k), report_member_sk(role, report)) for k in members
            ]
            pk, sk = listing["PK"]["S"], listing["SK"]["S"]
            listings_gone.append((pk, sk))
            listings_gone += [(pk, chunk_sk(sk, n)) for n in range(_chunk_count(listing))]
        delete(reports_gone)
        delete(listings_gone)
        self.table._batch_write(
            [{"PutRequest": {"Item": i}} for s, i in new_items if s == "pointer"], ordered=False
        )
        delete([(entity_pk(project, k), report_pointer_sk(role)) for k in sorted(old_keys)])
        kept = {r.id for r in reports}
        return [i["id"]["S"] for i, _ in old if i["id"]["S"] not in kept]

    def reports_by_ids(self, project: str, ids: Sequence[str]) -> list[Report]:
        """BatchGetItem of the report items; a report whose keys did not fit its item
        reads them from its chunks (a Query of its partition, in parallel)."""
        wanted = dict.fromkeys(ids)
        keys = [item_key(report_pk(p, i), REPORT_SK) for p in partitions(project) for i in wanted]
        # The shared partition's first (report ids are content hashes of one partition's
        # facts, so a user's own report of an id, read last, is the one kept).
        order = {k["PK"]["S"]: n for n, k in enumerate(keys)}
        items = sorted(self.table._batch_get(keys), key=lambda i: order[i["PK"]["S"]])
        split = [i for i in items if _chunk_count(i)]

        def chunks(item: Item) -> list[Item]:
            return list(
                self.table._query(
                    KeyConditionExpression="PK = :pk AND begins_with(SK, :k)",
                    ExpressionAttributeValues={
                        ":pk": item["PK"],
                        ":k": {"S": REPORT_CHUNK_PREFIX},
                    },
                )
            )

        keys_of = {
            i["PK"]["S"]: _keys_of(i, c)
            for i, c in zip(split, parallel(chunks, split), strict=True)
        }
        found = {r.id: r for r in (_report(i, keys_of.get(i["PK"]["S"])) for i in items)}
        return [found[i] for i in ids if i in found]

    def reports_of_entity(self, project: str, key: str, roles: Collection[Role]) -> list[Report]:
        """The level-0 reports that hold this entity, for the roles given: one Query of
        the member copies kept in the entity's partition (in each partition the request
        sees, in parallel)."""

        def members(partition: str) -> list[Item]:
            return list(
                self.table._query(
                    KeyConditionExpression="PK = :pk AND begins_with(SK, :m)",
                    ExpressionAttributeValues={
                        ":pk": {"S": entity_pk(partition, key)},
                        ":m": {"S": REPORT_MEMBER_PREFIX},
                    },
                )
            )

        items = [i for found in parallel(members, partitions(project)) for i in found]
        found = [r for r in map(_report, items) if r.role in roles]
        return sorted(found, key=lambda r: (r.role, r.id))
