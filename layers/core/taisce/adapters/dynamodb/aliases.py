"""Aliases (domain/aliases.py): what the alias keys of a batch resolve to, the
project's aliases and entities, and merging an entity into another (plan_merge): the
alias is marked, its aliases re-pointed and its facts moved, in steps that a merge
sent again after a failure part-way completes.

The listing P#<p>#ALIAS / A#<alias key> holds `k` (alias key), `n` (alias name), `t`
(entity key); the alias's name item holds `a`, its entity's key (names.py).
"""

from __future__ import annotations

import heapq
import secrets
from collections.abc import Collection, Iterable, Sequence
from itertools import islice
from typing import Any

from ...domain.aliases import MergePlan, NameState, plan_merge, proposal_offset_key, rekeyed
from ...domain.entity_counts import moved_counts, new_to_role
from ...domain.errors import InvalidRequest
from ...domain.model import ROLES, Alias, EntityName, Fact, MergeResult, Role
from ...domain.names import normalize_name
from ...domain.scope import as_scope, partitions, project_of_partition
from ..composed_store import MarkSwitches
from .client import (
    ATTEMPTS,
    DROP_FAILED_AT_ONCE,
    Members,
    TableClient,
    backoff,
    cancellation,
    parallel,
)
from .codec import ALIAS_OF, fact_of, live_count, text_of
from .keys import (
    ALIAS_PREFIX,
    FACTS_PREFIX,
    LIST_ENTITIES,
    LIST_FACTS,
    Item,
    alias_sk,
    aliases_pk,
    entity_pk,
    fact_claim_key,
    item_key,
    key_of,
    listing_key,
    name_key,
    project_prefix,
)
from .names import alias_of_seen, listed_keys, names_seen
from .units import Unit, mark_dirty, mark_vector, name_update, work_ops

# Facts moved per transaction by a merge: each is at most 5 items (the alias's copy
# deleted, up to two copies and the listing copy put, the claim updated), plus the two
# name items and the work marks.
_MERGE_FACTS = 16
# Aliases re-pointed per transaction: two updates each (listing, name item).
_REPOINT_ALIASES = 45


def _moved(facts: Iterable[Fact], alias: str) -> dict[Role, int]:
    return moved_counts(((f.source_role, f.subject_key, f.object_key) for f in facts), alias)


def alias_targets(table: TableClient, project: str, keys: Collection[str]) -> dict[str, str]:
    """The entity each of these keys is an alias of (keys that are none left out), among
    the aliases the request sees: a user's own alias over a shared one."""
    seen = names_seen(table, project, keys)
    return {k: t for k, items in seen.items() if (t := alias_of_seen(items)) is not None}


def resolve_aliases(table: TableClient, project: str, facts: Sequence[Fact]) -> Sequence[Fact]:
    """The facts with each alias key replaced by its entity's (the words stay):
    one BatchGetItem per 100 names of the batch."""
    keys = {k for f in facts for k in (getattr(f, "subject_key", None), f.object_key) if k}
    targets = alias_targets(table, project, keys) if keys else {}
    return rekeyed(facts, targets)


def listed_aliases(table: TableClient, project: str) -> list[Item]:
    """The partition's alias listing (erasure forgets aliases through it too)."""
    return list(
        table._query(
            KeyConditionExpression="PK = :pk AND begins_with(SK, :a)",
            ExpressionAttributeValues={
                ":pk": {"S": aliases_pk(project)},
                ":a": {"S": ALIAS_PREFIX},
            },
        )
    )


def _seen_aliases(listed: Sequence[list[Item]], limit: int | None = None) -> list[Item]:
    """The alias listings of the partitions a request sees (the shared one's first), one
    item a key, by key: the user's own alias over the shared one."""
    merged = heapq.merge(*listed, key=lambda i: i["SK"]["S"])
    by_key: dict[str, Item] = {}
    for item in merged:
        by_key[item["k"]["S"]] = item
    found = list(by_key.values())
    return found if limit is None else found[:limit]


def proposal_offset_item(partition: str) -> Item:
    """Where the partition's next proposals request starts: under its project, keyed by
    a hash of the partition (docs/dynamodb.md)."""
    pk = f"{project_prefix(project_of_partition(as_scope(partition)))}PROPOSALS"
    return item_key(pk, proposal_offset_key(partition))


class DynamoDbAliasStore:
    """Merging names into entities, and listing what was merged."""

    def __init__(self, table: TableClient, switches: MarkSwitches) -> None:
        self.table = table
        self.switches = switches

    def merge_entities(
        self, project: str, alias_key: str, alias_text: str, into_key: str, into_text: str
    ) -> MergeResult:
        """Three steps, each re-runnable: (1) one transaction marks the alias (the commit
        point: writes resolve it from then on) and lists it; (2) its own aliases are
        re-pointed; (3) its facts move, _MERGE_FACTS a transaction, each with its name counts. A
        crash part-way leaves a state that the same merge, sent again, completes."""
        for attempt in range(ATTEMPTS):
            plan, alias_name, into_name, held, home = self._plan_merge(
                project, alias_key, alias_text, into_key, into_text
            )
            if self._mark_alias(project, plan.alias_key, alias_name, plan.target_key, home):
                break
            backoff(attempt)  # a concurrent merge changed one of the names: check again
        else:
            raise InvalidRequest("the names changed during the merge; send it again")
        repointed = self._repoint_aliases(project, plan.alias_key, plan.target_key)
        moved = self._move_facts(project, plan.alias_key, plan.target_key, into_name, held)
        return MergeResult(alias_name, into_name, moved, repointed)

    def _plan_merge(
        self, project: str, alias_key: str, alias_text: str, into_key: str, into_text: str
    ) -> tuple[MergePlan, str, str, dict[Role, int], str]:
        """The merge checked against both names as the request sees them (a user may
        merge into a shared entity; one BatchGetItem), the names to answer with (the
        alias and the entity as first written), the entity's live facts of each role in
        the request's own partition (the one the merge writes), and the partition whose
        name item of the entity the merge checks (the own one if it has one)."""
        items = names_seen(self.table, project, {alias_key, into_key})

        def state(key: str) -> NameState:
            seen = items.get(key, [])
            alias_of = alias_of_seen(seen)
            return NameState(key, alias_of, alias_of is None and bool(seen))

        plan = plan_merge(state(alias_key), state(into_key), alias_text, into_text)
        if plan.target_key not in items:
            items.update(names_seen(self.table, project, {plan.target_key}))
        target = items.get(plan.target_key, [])
        own = [i for i in target if i["PK"]["S"] == entity_pk(project, plan.target_key)]
        alias_own = [
            i for i in items.get(alias_key, []) if i["PK"]["S"] == entity_pk(project, alias_key)
        ]
        alias_name = (text_of(alias_own[0], "n") if alias_own else None) or alias_text
        into_name = next((text_of(i, "n") for i in target if "n" in i), None) or into_text
        held = {role: live_count(own[0], role) for role in ROLES} if own else {}
        home = project if own or not target else project_of_partition(project)
        return plan, alias_name, into_name, held, home

    def _mark_alias(self, project: str, alias: str, name: str, target: str, home: str) -> bool:
        """The commit point; False if a condition failed (a concurrent merge). `home`:
        the partition whose name item of the target is checked; a shared entity a user
        merges into is listed in the user's partition (its facts will move there)."""
        table = self.table.table_name
        ops = [
            {
                "ConditionCheck": {
                    "TableName": table,
                    "Key": name_key(home, target),
                    "ConditionExpression": "attribute_exists(PK) AND attribute_not_exists(#a)",
                    "ExpressionAttributeNames": {"#a": ALIAS_OF},
                }
            },
            {
                "Update": {
                    "TableName": table,
                    "Key": name_key(project, alias),
                    "UpdateExpression": "SET #n = if_not_exists(#n, :n), #a = :t",
                    "ConditionExpression": "attribute_not_exists(#a) OR #a = :t",
                    "ExpressionAttributeNames": {"#n": "n", "#a": ALIAS_OF},
                    "ExpressionAttributeValues": {":n": {"S": name}, ":t": {"S": target}},
                }
            },
            {
                "Put": {
                    "TableName": table,
                    "Item": {
                        **item_key(aliases_pk(project), alias_sk(alias)),
                        "k": {"S": alias},
                        "n": {"S": name},
                        "t": {"S": target},
                    },
                }
            },
        ]
        if home != project:
            listed = {**listing_key(project, LIST_ENTITIES, target), "k": {"S": target}}
            ops.append({"Put": {"TableName": table, "Item": listed}})
        try:
            self.table._transact(ops)
        except Exception as error:
            if cancellation(error) is None:
                raise
            return False
        return True

    def _repoint_aliases(self, project: str, alias: str, target: str) -> int:
        """The aliases of the alias become the target's (aliases stay flat)."""
        mine = [i for i in listed_aliases(self.table, project) if i["t"]["S"] == alias]
        table = self.table.table_name
        for start in range(0, len(mine), _REPOINT_ALIASES):
            ops: list[Item] = []
            for item in mine[start : start + _REPOINT_ALIASES]:
                ops.append(
                    {
                        "Update": {
                            "TableName": table,
                            "Key": key_of(item),
                            "UpdateExpression": "SET t = :t",
                            "ExpressionAttributeValues": {":t": {"S": target}},
                        }
                    }
                )
                ops.append(
                    {
                        "Update": {
                            "TableName": table,
                            "Key": name_key(project, item["k"]["S"]),
                            "UpdateExpression": "SET #a = :t",
                            "ExpressionAttributeNames": {"#a": ALIAS_OF},
                            "ExpressionAttributeValues": {":t": {"S": target}},
                        }
                    }
                )
            self.table._transact(ops)
        return len(mine)

    def _move_facts(
        self, project: str, alias: str, target: str, target_name: str, held: dict[Role, int]
    ) -> int:
        """Move the alias partition's fact copies to the target's, a page at a time, until
        none is left. Each fact keeps its seq (its place in storing order) and words.
        `held`: the target's live facts of each role, kept up to date page by page (its
        name is marked for the vector of a role new to it)."""
        alias_pk = entity_pk(project, alias)
        moved = 0
        params: dict[str, Any] = {
            "TableName": self.table.table_name,
            "ConsistentRead": True,
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :f)",
            "ExpressionAttributeValues": {":pk": {"S": alias_pk}, ":f": {"S": FACTS_PREFIX}},
            "Limit": _MERGE_FACTS,
        }
        while True:
            copies = self.table.client.query(**params).get("Items", [])
            if not copies:
                return moved
            done = self._move_copies(project, alias, target, target_name, copies, held)
            moved += len(done)
            for role, n in _moved(map(fact_of, done), alias).items():
                held[role] = held.get(role, 0) + n
            # On past this page: what it held has moved, or has no claim (not a stored
            # fact) and must not be read again forever. Writes racing the merge sort later.
            params["ExclusiveStartKey"] = item_key(alias_pk, copies[-1]["SK"]["S"])

    def _move_copies(
        self,
        project: str,
        alias: str,
        target: str,
        target_name: str,
        copies: list[Item],
        held: dict[Role, int],
    ) -> list[Item]:
        """One transaction moving these copies; a fact deleted meanwhile is left out.
        Returns the copies moved."""
        moves = Members(
            copies,
            lambda given: self._move_ops(project, alias, target, target_name, given, held),
        )
        return self.table._transact(moves, DROP_FAILED_AT_ONCE)

    def _move_ops(
        self,
        project: str,
        alias: str,
        target: str,
        target_name: str,
        copies: Sequence[Item],
        held: dict[Role, int],
    ) -> tuple[list[Item], dict[int, int]]:
        """The ops that move these copies, and which op is whose claim update."""
        table = self.table.table_name
        alias_pk, target_pk = entity_pk(project, alias), entity_pk(project, target)
        ops: list[Item] = []
        claims: dict[int, int] = {}
        facts = [fact_of(copy) for copy in copies]
        counts = _moved(facts, alias)
        for place, (copy, fact) in enumerate(zip(copies, facts, strict=True)):
            sk = copy["SK"]["S"]
            sn = target if fact.subject_key == alias else fact.subject_key
            on = target if fact.object_key == alias else fact.object_key
            attributes = {k: v for k, v in copy.items() if k not in ("PK", "SK", "d", "sn", "on")}
            attributes["sn"] = {"S": sn}
            if on is not None:
                attributes["on"] = {"S": on}
            ops.append({"Delete": {"TableName": table, "Key": item_key(alias_pk, sk)}})
            ends_pks = dict.fromkeys(
                [entity_pk(project, sn)] + ([entity_pk(project, on)] if on else [])
            )
            for n, pk in enumerate(ends_pks):
                side = {"S": "S" if n == 0 else "O"}
                item = {"PK": {"S": pk}, "SK": {"S": sk}, "d": side, **attributes}
                ops.append({"Put": {"TableName": table, "Item": item}})
            listed = {**listing_key(project, LIST_FACTS, fact.id), **attributes}
            ops.append({"Put": {"TableName": table, "Item": listed}})
            claim_update = "SET sn = :sn, w = :w" + (", #on = :on" if on else "")
            values: Item = {
                ":sn": {"S": sn},
                ":w": {"S": secrets.token_hex(4)},
                ":sq": {"S": sk.removeprefix(FACTS_PREFIX)},
            }
            names = {"#sq": "sq"}
            if on:
                values[":on"] = {"S": on}
                names["#on"] = "on"
            claims[len(ops)] = place
            # The claim names where the copies live; a new `w` makes a delete that
            # read the old claim retry rather than leave the moved copies behind.
            ops.append(
                {
                    "Update": {
                        "TableName": table,
                        "Key": fact_claim_key(project, fact.id),
                        "UpdateExpression": claim_update,
                        "ConditionExpression": "attribute_exists(PK) AND #sq = :sq",
                        "ExpressionAttributeNames": names,
                        "ExpressionAttributeValues": values,
                    }
                }
            )
        if counts:
            negative = {role: -n for role, n in counts.items()}
            ops.append({"Update": {"TableName": table, **name_update(alias_pk, None, negative)}})
            # Named as first written: the target may be a shared entity, new to this
            # partition (a name item of its own, as a fact naming it would make).
            named = name_update(target_pk, {"S": target_name}, counts)
            ops.append({"Update": {"TableName": table, **named}})
            # Both ends' reports are rebuilt around the moved facts (the alias's are
            # dropped), and the entity's name is embedded for the roles new to it.
            marks = Unit(claim={}, items=[])
            token = secrets.token_hex(4)
            for role, n in counts.items():
                mark_dirty(project, marks, role, [alias, target], token)
                if self.switches.vectors and new_to_role(held.get(role, 0), n):
                    entity = f"{role}:{target}"
                    mark_vector(project, marks, "entity", entity, target_name, role)
            ops += work_ops(table, [marks])
        return ops, claims

    def aliases(self, project: str) -> list[Alias]:
        listed = parallel(lambda p: listed_aliases(self.table, p), partitions(project))
        return self._named(project, _seen_aliases(listed))

    def alias_page(self, project: str, after: str | None, limit: int) -> list[Alias]:
        """A page of each partition the request sees from `after` on, merged: the first
        `limit` keys of the merge are the first `limit` of what the request sees, since
        neither partition holds a key before them that was not read."""
        start = alias_sk(after) if after is not None else ALIAS_PREFIX

        def page(partition: str) -> list[Item]:
            read = self.table._query(
                KeyConditionExpression="PK = :pk AND SK BETWEEN :a AND :z",
                ExpressionAttributeValues={
                    ":pk": {"S": aliases_pk(partition)},
                    ":a": {"S": start},
                    ":z": {"S": ALIAS_PREFIX + "\uffff"},
                },
                Limit=limit + 1,
            )
            # BETWEEN takes its ends: the alias at `after` is the previous page's last.
            return list(islice((i for i in read if i["SK"]["S"] != start), limit))

        return self._named(project, _seen_aliases(parallel(page, partitions(project)), limit))

    def _named(self, project: str, listed: list[Item]) -> list[Alias]:
        """Aliases of listing items, each with its entity's name as first written (the
        shared partition's where both name it)."""
        seen = names_seen(self.table, project, {i["t"]["S"] for i in listed})
        names = {k: next((i["n"]["S"] for i in items if "n" in i), k) for k, items in seen.items()}
        return [
            Alias(
                alias=i["n"]["S"],
                alias_key=i["k"]["S"],
                into=names.get(i["t"]["S"], i["t"]["S"]),
                into_key=i["t"]["S"],
            )
            for i in listed
        ]

    def entity_names(self, project: str, limit: int, offset: int = 0) -> list[EntityName]:
        """The live entities (not aliases) the request sees: the listings, then the name
        items (BatchGetItem, in parallel chunks), a key's facts summed over the
        partitions, with the shared partition's name. Never a Scan of the table."""
        found: list[EntityName] = []
        for items in names_seen(self.table, project, listed_keys(self.table, project)).values():
            named = [i for i in items if ALIAS_OF not in i and "n" in i]
            facts = sum(int(v["N"]) for i in named for k, v in i.items() if k.startswith("c_"))
            if facts > 0:
                name = named[0]["n"]["S"]
                found.append(EntityName(normalize_name(name), name, facts))
        return sorted(found, key=lambda e: e.key)[offset : offset + limit]

    def proposal_offset(self, project: str) -> int:
        item = self.table._get(proposal_offset_item(project))
        return int(item["o"]["N"]) if item else 0

    def set_proposal_offset(self, project: str, offset: int) -> None:
        self.table.client.put_item(
            TableName=self.table.table_name,
            Item={**proposal_offset_item(project), "o": {"N": str(offset)}},
        )
