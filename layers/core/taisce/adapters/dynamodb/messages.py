"""Messages and their passages (one partition per message: the message, then its
passages by start), and the project's storing positions (one counter, raised once
per storing request).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from itertools import product
from typing import Any

from ...domain.filters import MessageFilter
from ...domain.message_batch import batch_to_store, passages_by_message
from ...domain.model import Message, Passage
from ...domain.scope import partitions
from ...domain.validity import unsortable
from ..composed_store import MarkSwitches
from .client import BATCH_GET_KEYS, TRANSACTION_BUDGET, TRANSACTION_ITEMS, error_code, parallel
from .codec import (
    ITEM_BYTES,
    PAGED,
    extraction_item,
    item_size,
    message_attributes,
    message_listing_item,
    message_of,
    page_item,
    pages,
    passage_item,
    passages_in_item,
)
from .keys import (
    EXTRACTIONS_PENDING_PK,
    MESSAGE_SK,
    PASSAGES_PREFIX,
    Item,
    item_key,
    message_key,
    message_pk,
    positions_key,
)
from .units import Unit, UnitWrites, mark_pages, mark_passages

logger = logging.getLogger(__name__)


class DynamoDbMessageStore:
    """put_messages and the message and passage reads."""

    def __init__(self, table: UnitWrites, switches: MarkSwitches) -> None:
        self.table = table
        self.switches = switches

    def put_messages(
        self, project: str, messages: Sequence[Message], passages: Sequence[Passage]
    ) -> set[str]:
        """Store messages with their passages; returns the ids of messages new to the store."""
        token = secrets.token_hex(4)
        batch = batch_to_store(messages, passages)
        kept = passages_by_message(batch)
        # Every message checked before positions are taken: bad input changes nothing.
        built = [self._message_unit(project, m, kept[m.id], token) for m in batch.messages]
        first = self._reserve_positions(project, len(built))
        units: list[Unit] = []
        for n, (m, unit) in enumerate(zip(batch.messages, built, strict=True)):
            # The claim and its passages share one position value (_message_unit).
            unit.claim["pos"]["N"] = str(first + n)
            if PAGED not in unit.claim:
                # Passages first: mark_passages reads unit.items as the message's passages.
                mark_passages(project, unit, self.switches.vectors)
                self._add_records(project, m, unit)
                if len(kept[m.id]) > 1 and not self._fits(unit):
                    unit = self._paged_unit(project, kept[m.id], unit.claim)
            if PAGED in unit.claim:
                # Too long for one transaction: stored in pages, a mark a page
                # (codec.pages), and as a long message (units._store_big: items by
                # BatchWriteItem, then the claim), which costs half the write units
                # of a transaction (DynamoDB bills a transactional write twice).
                mark_pages(project, unit, self.switches.vectors, token)
                self._add_records(project, m, unit)
                unit.big = True
            else:
                unit.big = not self._fits(unit)
            units.append(unit)
        try:
            stored = self.table._store_units(units)
        except BaseException:
            self._release_positions(project, first, len(units), 0)
            raise
        new = {u.claim["id"]["S"] for u in stored}
        # A retry or a duplicate stores nothing new: its range goes back if no request
        # took positions since (then the next batch follows on without a gap).
        taken = max((n + 1 for n, m in enumerate(batch.messages) if m.id in new), default=0)
        if taken < len(units):
            self._release_positions(project, first, len(units), taken)
        return new

    def _reserve_positions(self, project: str, count: int) -> int:
        """The first of `count` storing positions taken for this request: one write,
        whatever the batch's size. A message found already stored keeps its own
        position and leaves its reserved one unused (a gap: no neighbour there)."""
        if count <= 0:
            return 0
        answer = self.table.client.update_item(
            TableName=self.table.table_name,
            Key=positions_key(project),
            UpdateExpression="ADD #n :c",
            ExpressionAttributeNames={"#n": "n"},
            ExpressionAttributeValues={":c": {"N": str(count)}},
            ReturnValues="UPDATED_NEW",
        )
        return int(answer["Attributes"]["n"]["N"]) - count + 1

    def _release_positions(self, project: str, first: int, count: int, taken: int) -> None:
        """Give back the end of a reserved range that no message took (all of it after a
        failure), only if the counter still ends where this request left it: another
        request's later range is never handed out twice. Best effort: a gap left is
        only a lost neighbour."""
        if count <= 0:
            return
        try:
            self.table.client.update_item(
                TableName=self.table.table_name,
                Key=positions_key(project),
                UpdateExpression="SET #n = :keep",
                ConditionExpression="#n = :end",
                ExpressionAttributeNames={"#n": "n"},
                ExpressionAttributeValues={
                    ":keep": {"N": str(first + taken - 1)},
                    ":end": {"N": str(first + count - 1)},
                },
            )
        except Exception as error:
            if error_code(error) != "ConditionalCheckFailedException":
                logger.warning("giving back unused message positions failed", exc_info=True)

    def _message_unit(self, project: str, m: Message, passages: list[Passage], token: str) -> Unit:
        owner = f"message {getattr(m, 'id', None)!r}"
        pk = message_pk(project, m.id)
        # The storing position, set by put_messages once reserved: one value shared by
        # the claim and every passage item, sized here as the widest it can be.
        pos = {"N": "9" * 15}
        claim: Item = {**item_key(pk, MESSAGE_SK), "w": {"S": token}, "pos": pos}
        claim.update(message_attributes(m))
        if len(passages) * (2 if self.switches.vectors else 1) >= TRANSACTION_ITEMS:
            return self._paged_unit(project, passages, claim)  # too many items, surely
        items = [passage_item(pk, p, pos) for p in passages]
        sizes = [item_size(i) for i in (claim, *items)]
        if max(sizes) > ITEM_BYTES:
            raise ValueError(f"{owner}: too large for one DynamoDB item")
        return Unit(claim, items, size=sum(sizes))

    def _paged_unit(self, project: str, passages: list[Passage], claim: Item) -> Unit:
        """A message's unit with its passages in pages (the claim as built, saying so)."""
        pk = message_pk(project, claim["id"]["S"])
        claim[PAGED] = {"BOOL": True}
        items = [page_item(pk, page, claim["pos"]) for page in pages(passages)]
        sizes = [item_size(i) for i in (claim, *items)]
        if max(sizes) > ITEM_BYTES:
            raise ValueError(f"message {claim['id']['S']!r}: too large for one DynamoDB item")
        return Unit(claim, items, size=sum(sizes))

    def _add_records(self, project: str, m: Message, unit: Unit) -> None:
        """The message's listing item and (with extraction) its extraction mark."""
        listed = message_listing_item(project, m)
        unit.items.append(listed)
        unit.size += item_size(listed)
        if self.switches.extractions:
            mark = extraction_item(EXTRACTIONS_PENDING_PK, project, m.id)
            unit.items.append(mark)
            unit.size += item_size(mark)

    def _fits(self, unit: Unit) -> bool:
        """Whether the unit goes in one transaction."""
        return self.table._op_count([unit]) <= TRANSACTION_ITEMS and unit.size <= TRANSACTION_BUDGET

    def message(self, project: str, message_id: str) -> Message | None:
        """The message by id as the request sees it: the user's own where the shared
        memory holds the id too (one BatchGetItem of both)."""
        keys = [message_key(p, message_id) for p in partitions(project)]
        if len(keys) == 1:
            item = self.table._get(keys[0])
            return None if item is None else message_of(item)
        items = {i["PK"]["S"]: i for i in self.table._batch_get(keys)}
        for key in reversed(keys):
            if key["PK"]["S"] in items:
                return message_of(items[key["PK"]["S"]])
        return None

    def messages_by_ids(self, project: str, ids: Sequence[str]) -> list[Message]:
        """BatchGetItem of each id in each partition the request sees (100 keys a
        call), the user's own copy kept over a shared one."""
        wanted = list(dict.fromkeys(ids))
        parts = partitions(project)
        keys = [message_key(p, i) for p in parts for i in wanted]
        own = {message_key(parts[-1], i)["PK"]["S"] for i in wanted}
        items = self.table._batch_get(keys)
        items.sort(key=lambda i: i["PK"]["S"] in own)
        found = {m.id: m for m in map(message_of, items)}
        return [found[i] for i in wanted if i in found]

    def passages_of(self, project: str, message_id: str, *, direct: bool = False) -> list[Passage]:
        """The message's passages, by start (`direct`: one of the recall's reads); with
        a user, those of the user's own message where the shared memory holds its id
        too (each partition's message read whole, in parallel)."""
        parts = partitions(project)
        if len(parts) == 1:
            return self._passages_in(project, message_id, direct)
        found = parallel(lambda p: self._message_items(p, message_id, direct), parts)
        for items in reversed(found):
            if any(i["SK"]["S"] == MESSAGE_SK for i in items):
                return [p for i in items if i["SK"]["S"] != MESSAGE_SK for p in passages_in_item(i)]
        return []

    def _passages_in(self, partition: str, message_id: str, direct: bool) -> list[Passage]:
        items = self.table._query(
            direct=direct,
            KeyConditionExpression="PK = :pk AND begins_with(SK, :s)",
            ExpressionAttributeValues={
                ":pk": {"S": message_pk(partition, message_id)},
                ":s": {"S": PASSAGES_PREFIX},
            },
        )
        return [p for i in items for p in passages_in_item(i)]

    def _message_items(self, partition: str, message_id: str, direct: bool) -> list[Item]:
        """A message's partition: the message, then its passages."""
        return list(
            self.table._query(
                direct=direct,
                KeyConditionExpression="PK = :pk",
                ExpressionAttributeValues={":pk": {"S": message_pk(partition, message_id)}},
            )
        )

    def passages_by_ids(
        self,
        project: str,
        ids: Sequence[str],
        messages: MessageFilter | None = None,
        times: bool = False,
    ) -> list[Passage]:
        """The passages with these ids, in the order given (unknown ids left out).

        A passage id is "<message id>#<n>": one Query per message they come from (in
        each partition the request sees), and with a message filter, or when asked for
        `times` (a question naming a month), the messages' times by BatchGetItem (100
        messages a call); all of them in parallel (one wave, however many messages the
        passages come from). These are the recall's reads: sent directly (see _read).
        A user's own passage wins over a shared one of the same id."""
        wanted = set(ids)
        message_ids = list(dict.fromkeys(i.rpartition("#")[0] for i in ids if "#" in i))
        parts = partitions(project)
        reads: list[tuple[str, str, Sequence[str]]] = [
            ("passages", p, [m]) for p in parts for m in message_ids
        ]
        if messages is not None or times:
            reads += [
                ("times", p, message_ids[n : n + BATCH_GET_KEYS])
                for p in parts
                for n in range(0, len(message_ids), BATCH_GET_KEYS)
            ]

        def read(what: tuple[str, str, Sequence[str]]) -> Any:
            kind, partition, of = what
            if kind == "times":
                keys = [message_key(partition, m) for m in of]
                return self.table._batch_get_chunk(
                    keys, "PK, occurred_at, recorded_at", direct=True
                )
            return self._passages_in(partition, of[0], True)

        passages: dict[tuple[str, str], list[Passage]] = {}
        times_of: dict[str, Item] = {}
        for (kind, partition, of), result in zip(reads, parallel(read, reads), strict=True):
            if kind == "passages":
                passages[(partition, of[0])] = result
            else:
                times_of.update((i["PK"]["S"], i) for i in result)
        found: dict[str, Passage] = {}
        for partition, message_id in product(parts, message_ids):
            times_item = times_of.get(message_pk(partition, message_id))
            if messages is None or _admits(messages, times_item):
                for p in passages[(partition, message_id)]:
                    if p.id in wanted:
                        found[p.id] = _timed(p, times_item)
        return [found[i] for i in ids if i in found]


def _admits(messages: MessageFilter, times: Item | None) -> bool:
    """Whether a message, by its times' item (None: not read), passes the filter."""
    return times is not None and messages.admits(
        times["occurred_at"]["S"], times["recorded_at"]["S"]
    )


def _timed(p: Passage, times: Item | None) -> Passage:
    """The passage with its message's occurred_at, where its times were read."""
    occurred = times["occurred_at"]["S"] if times is not None else None
    return p._replace(occurred_at=unsortable(occurred) if occurred is not None else None)
