"""Messages and their passages (one partition per message: the message, then its
passages by start), and the project's storing positions (one counter, raised once
per storing request).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from typing import Any

from ...domain.filters import MessageFilter
from ...domain.message_batch import batch_to_store, passages_by_message
from ...domain.model import Message, Passage
from ...domain.validity import unsortable
from ..composed_store import MarkSwitches
from .client import BATCH_GET_KEYS, TRANSACTION_BUDGET, TRANSACTION_ITEMS, error_code, parallel
from .codec import (
    ITEM_BYTES,
    extraction_item,
    item_size,
    message_attributes,
    message_listing_item,
    message_of,
    passage_item,
    passage_of,
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
from .units import Unit, UnitWrites, mark_passages

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
            # Passages first: mark_passages reads unit.items as the message's passages.
            mark_passages(project, unit, self.switches.vectors)
            listed = message_listing_item(project, m)
            unit.items.append(listed)
            unit.size += item_size(listed)
            if self.switches.extractions:
                mark = extraction_item(EXTRACTIONS_PENDING_PK, project, m.id)
                unit.items.append(mark)
                unit.size += item_size(mark)
            fits = (
                self.table._op_count([unit]) <= TRANSACTION_ITEMS
                and unit.size <= TRANSACTION_BUDGET
            )
            unit.big = not fits
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
        items = [passage_item(pk, p, pos) for p in passages]
        sizes = [item_size(i) for i in (claim, *items)]
        if max(sizes) > ITEM_BYTES:
            raise ValueError(f"{owner}: too large for one DynamoDB item")
        return Unit(claim, items, size=sum(sizes))

    def message(self, project: str, message_id: str) -> Message | None:
        item = self.table._get(message_key(project, message_id))
        if item is None:
            return None
        return message_of(item)

    def passages_of(self, project: str, message_id: str, *, direct: bool = False) -> list[Passage]:
        """The message's passages, by start (`direct`: one of the recall's reads)."""
        items = self.table._query(
            direct=direct,
            KeyConditionExpression="PK = :pk AND begins_with(SK, :s)",
            ExpressionAttributeValues={
                ":pk": {"S": message_pk(project, message_id)},
                ":s": {"S": PASSAGES_PREFIX},
            },
        )
        return [passage_of(i) for i in items]

    def passages_by_ids(
        self,
        project: str,
        ids: Sequence[str],
        messages: MessageFilter | None = None,
        times: bool = False,
    ) -> list[Passage]:
        """The passages with these ids, in the order given (unknown ids left out).

        A passage id is "<message id>#<n>": one Query per message they come from, and
        with a message filter, or when asked for `times` (a question naming a month), the
        messages' times by BatchGetItem (100 messages a call); all of them in parallel
        (one wave, however many messages the passages come from). These are the recall's
        reads: sent directly (see _read)."""
        wanted = set(ids)
        message_ids = list(dict.fromkeys(i.rpartition("#")[0] for i in ids if "#" in i))
        reads: list[tuple[str, Sequence[str]]] = [("passages", [m]) for m in message_ids]
        if messages is not None or times:
            reads += [
                ("times", message_ids[n : n + BATCH_GET_KEYS])
                for n in range(0, len(message_ids), BATCH_GET_KEYS)
            ]

        def read(what: tuple[str, Sequence[str]]) -> Any:
            kind, of = what
            if kind == "times":
                keys = [message_key(project, m) for m in of]
                return self.table._batch_get_chunk(
                    keys, "PK, occurred_at, recorded_at", direct=True
                )
            return self.passages_of(project, of[0], direct=True)

        passages: dict[str, list[Passage]] = {}
        times_of: dict[str, Item] = {}
        for (kind, of), result in zip(reads, parallel(read, reads), strict=True):
            if kind == "passages":
                passages[of[0]] = result
            else:
                times_of.update((i["PK"]["S"], i) for i in result)
        found: dict[str, Passage] = {}
        for message_id in message_ids:
            times_item = times_of.get(message_pk(project, message_id))
            occurred = times_item["occurred_at"]["S"] if times_item is not None else None
            if messages is not None and (
                times_item is None
                or not messages.admits(
                    times_item["occurred_at"]["S"], times_item["recorded_at"]["S"]
                )
            ):
                continue
            for p in passages[message_id]:
                if p.id in wanted:
                    when = unsortable(occurred) if occurred is not None else None
                    found[p.id] = p._replace(occurred_at=when)
        return [found[i] for i in ids if i in found]
