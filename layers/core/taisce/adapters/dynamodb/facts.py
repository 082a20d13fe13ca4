"""Facts: stored as a claim (P#<p>#FACT#<id>) and a full copy under each entity
they name and in the project's listing, read entity by entity in storing order.
A batch with a single-valued predicate closes the stored facts it contradicts
(domain/validity.py, plan_closings), guarded by conditions on what it read.
"""

from __future__ import annotations

import heapq
import secrets
from collections.abc import Collection, Iterator, Sequence
from functools import partial
from itertools import islice
from operator import itemgetter
from typing import Any

from ...domain.entity_counts import end_counts, end_names
from ...domain.fact_identity import fact_identity, first_of_each
from ...domain.facts_once import FactStream, facts_once
from ...domain.filters import FactFilter
from ...domain.model import ROLES, Fact, FactPointer, Role
from ...domain.scope import ScopeErased, ScopeGuard, partitions
from ...domain.validity import (
    Closing,
    closing_reads,
    contradiction_key,
    plan_closings,
    sortable,
)
from ..composed_store import MarkSwitches
from .aliases import resolve_aliases
from .client import ATTEMPTS, MAX_PAGE, MIN_PAGE, PARALLEL, RESEND, backoff, cancellation, parallel
from .codec import fact_attributes, fact_of, item_size
from .fact_identities import (
    Holders,
    guard,
    identity_marker,
    leave_out,
    read_holders,
    resolve_chains,
    settle,
)
from .keys import (
    FACT_SK,
    FACTS_PREFIX,
    LIST_ENTITIES,
    LIST_FACTS,
    TOMBSTONE_AT,
    Item,
    entity_pk,
    fact_claim_key,
    fact_pk,
    fact_sk,
    item_key,
    listing_key,
    tombstone_key,
)
from .units import (
    CLOCK,
    Stale,
    Unit,
    UnitWrites,
    claim_ends,
    dirty_marks,
    mark_dirty,
    mark_fact,
    name_update,
    work_ops,
)


def _filter_conditions(filters: FactFilter, names: dict[str, str], values: Item) -> list[str]:
    """The recall filters (domain/filters.py) as FilterExpression conditions on fact
    copies, whose times are stored in sortable form."""
    conditions: list[str] = []
    if filters.valid_at is not None:
        names.update({"#vf": "vf", "#vt": "vt"})
        values[":at"] = {"S": sortable(filters.valid_at)}
        conditions.append("(attribute_not_exists(#vf) OR #vf <= :at)")
        conditions.append("(attribute_not_exists(#vt) OR #vt > :at)")
    if filters.recorded_after is not None:
        names["#ra"] = "ra"
        values[":ra"] = {"S": sortable(filters.recorded_after)}
        conditions.append("#ra >= :ra")
    if filters.recorded_before is not None:
        names["#ra"] = "ra"
        values[":rb"] = {"S": sortable(filters.recorded_before)}
        conditions.append("#ra < :rb")
    if filters.subjects is not None:
        names.update({"#sn": "sn", "#on": "on"})
        marks = [f":s{n}" for n in range(len(filters.subjects))]
        values.update({m: {"S": k} for m, k in zip(marks, sorted(filters.subjects), strict=True)})
        listed = ", ".join(marks)
        conditions.append(f"(#sn IN ({listed}) OR #on IN ({listed}))")
    return conditions


def _release(unit: Unit, claim_key: Item, identity: Item) -> None:
    """A closed fact's claim no longer stands for its content (fact_identities.py):
    on condition it still did when read; undone with the closing."""
    names = {"#ck": "ck"}
    unit.updates.append(
        {
            "Key": claim_key,
            "UpdateExpression": "REMOVE #ck",
            "ConditionExpression": "#ck = :ck",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": {":ck": identity},
        }
    )
    unit.restores.append(
        {
            "Key": claim_key,
            "UpdateExpression": "SET #ck = :ck",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": {":ck": identity},
        }
    )
    unit.size += 512


def _guard_check(guard: ScopeGuard) -> tuple[tuple[str, str], Item]:
    """The ConditionCheck a guarded write stands on: the user's tombstone absent, or
    older than what the write was made from."""
    key = tombstone_key(guard.project, guard.tombstone)
    check = {
        "Key": key,
        "ConditionExpression": "attribute_not_exists(PK) OR #at < :at",
        "ExpressionAttributeNames": {"#at": TOMBSTONE_AT},
        "ExpressionAttributeValues": {":at": {"S": sortable(guard.recorded_at)}},
    }
    return (key["PK"]["S"], key["SK"]["S"]), check


def _pointer(fact: Fact) -> FactPointer:
    return FactPointer._make(getattr(fact, name) for name in FactPointer._fields)


class DynamoDbFactStore:
    """put_facts, facts_about and the other fact reads and writes."""

    def __init__(self, table: UnitWrites, switches: MarkSwitches) -> None:
        self.table = table
        self.switches = switches

    def _fact_unit(
        self, project: str, f: Fact, seq: str, token: str, identity: str, holders: Holders
    ) -> Unit:
        copy = fact_attributes(f)
        sk = fact_sk(seq)
        spelled = end_names(f)
        # A copy under each entity it names: "S" under its subject, "O" its object's.
        items = [
            {"PK": {"S": entity_pk(project, k)}, "SK": {"S": sk}, "d": {"S": side}, **copy}
            for k, side in zip(spelled, "SO", strict=False)
        ]
        names: dict[str, tuple[Item, dict[str, int]]] = {
            entity_pk(project, k): ({"S": spelled[k]}, {f.source_role: n})
            for k, n in end_counts(f.subject_key, f.object_key).items()
        }
        claim: Item = {
            **fact_claim_key(project, f.id),
            "sq": {"S": seq},
            "sn": {"S": f.subject_key},
            "r": {"S": f.source_role},
            "w": {"S": token},
            # The content it stands for (fact_identities.py), until a later fact closes it.
            "ck": {"S": identity},
        }
        if f.object_key is not None:
            claim["on"] = {"S": f.object_key}
        items.append({**listing_key(project, LIST_FACTS, f.id), **copy})
        unit = Unit(claim, items, names)
        unit.guard = guard(project, identity, f.id, holders.stale.get(identity))
        unit.size = sum(item_size(i) for i in (claim, *items)) + 256 * len(names) + 256
        for key in spelled:
            listed = {**listing_key(project, LIST_ENTITIES, key), "k": {"S": key}}
            unit.listed[(listed["PK"]["S"], listed["SK"]["S"])] = listed
            unit.size += item_size(listed) + 128
        return unit

    def put_facts(
        self, project: str, facts: Sequence[Fact], guard: ScopeGuard | None = None
    ) -> dict[str, str]:
        try:
            return self._put_facts(project, facts, guard)
        except Exception as error:
            # A guard's check failed (or the batch could not be planned around it).
            if guard is not None and self._erased_since(guard):
                raise ScopeErased(project) from error
            raise

    def _guard_failed(self, checks: dict[tuple[str, str], Item]) -> bool:
        """Whether a guard's check would fail now: its tombstone there, and not older
        than the time the check holds."""
        for item in self.table._batch_get([c["Key"] for c in checks.values()]):
            check = checks[(item["PK"]["S"], item["SK"]["S"])]
            at = item.get(TOMBSTONE_AT)
            if at is None or at["S"] >= check["ExpressionAttributeValues"][":at"]["S"]:
                return True
        return False

    def _erased_since(self, guard: ScopeGuard) -> bool:
        item = self.table._get(tombstone_key(guard.project, guard.tombstone))
        if item is None:
            return False
        at = item.get(TOMBSTONE_AT)
        return at is None or at["S"] >= sortable(guard.recorded_at)

    def _put_facts(
        self, project: str, facts: Sequence[Fact], guard: ScopeGuard | None
    ) -> dict[str, str]:
        # Each content and each id once (the first copy), keeping the batch's places.
        place = {id(f): n for n, f in enumerate(facts)}
        kept, same = first_of_each(facts)
        places = [place[id(f)] for f in kept]
        identities = {f.id: fact_identity(f) for f in kept}
        # Aliases first: a contradiction is found under the entity's own key.
        kept = list(resolve_aliases(self.table, project, kept))
        checks = dict([_guard_check(guard)]) if guard is not None else {}
        if any(contradiction_key(f) is not None for f in kept):
            self._put_facts_closing(project, kept, places, identities, same, checks)
            return resolve_chains(same)
        # Every record is checked and turned into items before anything is written:
        # a bad record fails the batch with nothing stored.
        token = secrets.token_hex(4)
        clock = CLOCK.next()
        holders = read_holders(self.table, project, set(identities.values()))
        new = leave_out(kept, identities, holders, same)
        units: list[Unit] = []
        index = dict(zip((f.id for f in kept), places, strict=True))
        for f in new:
            seq = f"{clock:020d}.{token}.{index[f.id]:06d}"
            unit = self._fact_unit(project, f, seq, token, identities[f.id], holders)
            mark_fact(project, unit, f, token, self.switches.vectors)
            unit.checks.update(checks)
            units.append(unit)
        stored = {id(u) for u in self.table._store_units(units)}
        left = [f for f, u in zip(new, units, strict=True) if id(u) not in stored]
        settle(self.table, project, left, identities, same)
        return resolve_chains(same)

    def _put_facts_closing(
        self,
        project: str,
        facts: Sequence[Fact],
        places: Sequence[int],
        identities: dict[str, str],
        same: dict[str, str],
        checks: dict[tuple[str, str], Item],
    ) -> None:
        """put_facts for a batch with a single-valued predicate: read what it may
        contradict, plan (domain.validity.plan_closings), then write the batch with
        the closings, each guarded by a condition on the value read. If anything
        changed meanwhile (a claim taken, a fact closed or deleted), what this call
        stored is undone and the batch planned again."""
        # Storing order is fixed when the batch starts, also for a batch planned again.
        token = secrets.token_hex(4)
        clock = CLOCK.next()
        attempt = 0
        while True:
            try:
                batch = (places, identities, same)
                self._plan_and_store(project, facts, token, clock, batch, checks)
                return
            except Stale:
                # A guarded write whose scope was erased meanwhile is not planned again
                # (put_facts answers ScopeErased).
                if attempt >= ATTEMPTS or (checks and self._guard_failed(checks)):
                    raise
                backoff(attempt)
                attempt += 1

    def _plan_and_store(
        self,
        project: str,
        facts: Sequence[Fact],
        token: str,
        clock: int,
        batch: tuple[Sequence[int], dict[str, str], dict[str, str]],
        checks: dict[tuple[str, str], Item],
    ) -> None:
        places, identities, same = batch
        place = dict(zip((f.id for f in facts), places, strict=True))
        # Contents a live fact holds are left out (read again at each planning: a
        # writer that took one meanwhile made the last attempt stale).
        holders = read_holders(self.table, project, set(identities.values()))
        facts = leave_out(facts, identities, holders, same)
        # Every id already stored is left out, not only those closing_reads needs (the
        # keyed ones): a claim found taken while writing would make the batch plan again.
        by_pk = {fact_pk(project, i): i for i in place}
        claims = self.table._batch_get([item_key(pk, FACT_SK) for pk in by_pk], "PK")
        reads = closing_reads(facts, {by_pk[i["PK"]["S"]] for i in claims})
        existing: list[Fact] = []
        sort_keys: dict[str, str] = {}
        for (subject_key, role), at in reads.open_from.items():
            for item in self.table._query(
                KeyConditionExpression="PK = :pk AND begins_with(SK, :f)",
                FilterExpression="#d = :s AND #r = :r AND (attribute_not_exists(#vt) OR #vt > :at)",
                ExpressionAttributeNames={"#d": "d", "#r": "r", "#vt": "vt"},
                ExpressionAttributeValues={
                    ":pk": {"S": entity_pk(project, subject_key)},
                    ":f": {"S": FACTS_PREFIX},
                    ":s": {"S": "S"},
                    ":r": {"S": role},
                    ":at": {"S": at},
                },
            ):
                existing.append(fact_of(item))
                sort_keys[item["id"]["S"]] = item["SK"]["S"]
        planned, closings = plan_closings(existing, reads.incoming)
        units: list[Unit] = []
        by_id: dict[str, Unit] = {}
        for f in planned:
            seq = f"{clock:020d}.{token}.{place[f.id]:06d}"
            unit = self._fact_unit(project, f, seq, token, identities[f.id], holders)
            mark_fact(project, unit, f, token, self.switches.vectors)
            unit.checks.update(checks)
            units.append(unit)
            by_id[f.id] = unit
        held = self._identities_held(project, [c.fact.id for c in closings])
        for closing in closings:
            unit = by_id[closing.by]
            self._add_closing(project, unit, closing, sort_keys[closing.fact.id])
            if closing.fact.id in held:
                _release(unit, fact_claim_key(project, closing.fact.id), held[closing.fact.id])
        self.table._store_units(units, strict=True)

    def _identities_held(self, project: str, ids: Sequence[str]) -> dict[str, Item]:
        """The content each of these facts' claims still stands for, by fact id."""
        if not ids:
            return {}
        claims = self.table._batch_get([fact_claim_key(project, i) for i in ids])
        by_pk = {fact_pk(project, i): i for i in ids}
        return {by_pk[c["PK"]["S"]]: c["ck"] for c in claims if "ck" in c}

    def _add_closing(self, project: str, unit: Unit, closing: Closing, sk: str) -> None:
        """Update ops that close a stored fact (both its copies), on what was read."""
        old = closing.fact
        ends = {entity_pk(project, k) for k in end_counts(old.subject_key, old.object_key)}
        keys = [item_key(pk, sk) for pk in sorted(ends)]
        keys.append(listing_key(project, LIST_FACTS, old.id))  # the project's listing copy
        for key in keys:
            values: Item = {":new": {"S": sortable(closing.valid_to)}}
            if old.valid_to is None:
                condition = "attribute_exists(PK) AND attribute_not_exists(#vt)"
                restore: Item = {"UpdateExpression": "REMOVE #vt"}
            else:
                condition = "attribute_exists(PK) AND #vt = :old"
                values[":old"] = {"S": sortable(old.valid_to)}
                restore = {
                    "UpdateExpression": "SET #vt = :old",
                    "ExpressionAttributeValues": {":old": values[":old"]},
                }
            unit.updates.append(
                {
                    "Key": key,
                    "UpdateExpression": "SET #vt = :new",
                    "ConditionExpression": condition,
                    "ExpressionAttributeNames": {"#vt": "vt"},
                    "ExpressionAttributeValues": values,
                }
            )
            unit.restores.append({"Key": key, "ExpressionAttributeNames": {"#vt": "vt"}, **restore})
            unit.size += 512
        # A closed fact leaves the reports of its entities at their next rebuild.
        closed_ends = list(end_counts(old.subject_key, old.object_key))
        mark_dirty(project, unit, old.source_role, closed_ends, secrets.token_hex(4))

    def _facts_query(
        self,
        project: str,
        key: str,
        roles: Collection[Role],
        filters: FactFilter | None = None,
    ) -> dict[str, Any]:
        """The Query of one entity partition's facts, with the roles and filters."""
        params: dict[str, Any] = {
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :f)",
            "ExpressionAttributeValues": {
                ":pk": {"S": entity_pk(project, key)},
                ":f": {"S": FACTS_PREFIX},
            },
        }
        conditions: list[str] = []
        names: dict[str, str] = {}
        values = params["ExpressionAttributeValues"]
        wanted = [r for r in ROLES if r in roles]
        if len(wanted) < len(ROLES):
            marks = [f":r{n}" for n in range(len(wanted))]
            conditions.append(f"#r IN ({', '.join(marks)})")
            names["#r"] = "r"
            values.update({m: {"S": r} for m, r in zip(marks, wanted, strict=True)})
        if filters is not None:
            conditions += _filter_conditions(filters, names, values)
        if conditions:
            params["FilterExpression"] = " AND ".join(conditions)
            params["ExpressionAttributeNames"] = names
        return params

    def _facts_page(
        self, params: dict[str, Any], page: int, start: Item | None
    ) -> tuple[list[tuple[str, Fact]], Item | None]:
        """One page (one Query) of an entity's facts in one partition, each with its
        sort key (its place in storing order), and where the next page starts."""
        extra: dict[str, Any] = {"Limit": page}
        if start is not None:
            extra["ExclusiveStartKey"] = start
        reply = self.table._read(
            "Query",
            {
                "TableName": self.table.table_name,
                "ConsistentRead": self.table.consistent_reads,
                "ReturnConsumedCapacity": "TOTAL",
                **params,
                **extra,
            },
        )
        items = reply.get("Items", [])
        return [(i["SK"]["S"], fact_of(i)) for i in items], reply.get("LastEvaluatedKey")

    def facts_about(
        self,
        project: str,
        keys: Sequence[str],
        roles: Collection[Role],
        limit: int,
        exclude: Collection[str] = (),
        filters: FactFilter | None = None,
    ) -> Iterator[Fact]:
        """The facts of these entities, entity after entity, each in storing order.

        The first pages of up to PARALLEL entities go out at once (one wave), read
        when the caller asks for the first fact, each as large as what the caller may
        still take (so a hub needs no second page); an entity is read on page by page
        (pages growing fourfold, up to 1000) only when filters left its page short,
        and the next PARALLEL entities only if the limit is not reached. A request
        with a user reads each entity in the shared partition and the user's (both
        in the wave), merged by storing order."""
        return facts_once(
            self._entity_streams(project, keys, roles, filters), roles, limit, exclude
        )

    def _entity_streams(
        self,
        project: str,
        keys: Sequence[str],
        roles: Collection[Role],
        filters: FactFilter | None,
    ) -> Iterator[FactStream]:
        """One stream per entity (keys once each); opening the first of a wave of
        entities reads the first pages of the whole wave at once (PARALLEL queries)."""
        order = list(dict.fromkeys(keys))
        parts = partitions(project)
        per_wave = max(1, PARALLEL // len(parts))
        for at in range(0, len(order), per_wave):
            queries = [
                self._facts_query(p, k, roles, filters)
                for k in order[at : at + per_wave]
                for p in parts
            ]
            wave: list[tuple[int, list[tuple[list[tuple[str, Fact]], Item | None]]]] = []

            def open_stream(
                remaining: int,
                n: int,
                queries: list[dict[str, Any]] = queries,
                wave: list[tuple[int, list[tuple[list[tuple[str, Fact]], Item | None]]]] = wave,
            ) -> Iterator[Fact]:
                if not wave:
                    first = max(MIN_PAGE, min(MAX_PAGE, remaining))
                    pages = parallel(lambda q: self._facts_page(q, first, None), queries)
                    wave.append((first, pages))
                first, pages = wave[0]
                own = range(n * len(parts), (n + 1) * len(parts))
                reads = [self._read_on(queries[q], first, *pages[q]) for q in own]
                merged = reads[0] if len(reads) == 1 else heapq.merge(*reads, key=itemgetter(0))
                return (fact for _, fact in merged)

            for n in range(len(queries) // len(parts)):
                yield partial(open_stream, n=n)

    def _read_on(
        self,
        params: dict[str, Any],
        page: int,
        facts: list[tuple[str, Fact]],
        last: Item | None,
    ) -> Iterator[tuple[str, Fact]]:
        """An entity's facts from its first page on, reading the next page (fourfold,
        up to MAX_PAGE) only when the caller has taken every fact of this one."""
        while True:
            yield from facts
            if not last:
                return
            page = min(page * 4, MAX_PAGE)
            facts, last = self._facts_page(params, page, last)

    def _subject_items(self, partition: str, key: str, start: str, limit: int | None) -> Any:
        """The fact copies under `key` in one partition whose subject it is, from the
        sort key `start` on (taken too: BETWEEN takes its ends)."""
        return self.table._query(
            KeyConditionExpression="PK = :pk AND SK BETWEEN :a AND :z",
            FilterExpression="#d = :s",
            ExpressionAttributeNames={"#d": "d"},
            ExpressionAttributeValues={
                ":pk": {"S": entity_pk(partition, key)},
                ":a": {"S": start},
                ":z": {"S": FACTS_PREFIX + "\uffff"},
                ":s": {"S": "S"},
            },
            **({} if limit is None else {"Limit": limit}),
        )

    def facts_with_subject(self, project: str, key: str) -> list[Fact]:
        found = parallel(
            lambda p: list(self._subject_items(p, key, FACTS_PREFIX, None)), partitions(project)
        )
        return [fact_of(i) for i in heapq.merge(*found, key=lambda i: i["SK"]["S"])]

    def subject_page(
        self, project: str, key: str, after: str | None, limit: int
    ) -> list[tuple[str, Fact]]:
        """A page of each partition the request sees from `after` (a place in storing
        order, which every partition shares) on, merged: the first `limit` of the
        merge are the first `limit` of what the request sees."""
        start = fact_sk(after) if after else FACTS_PREFIX

        def page(partition: str) -> list[Item]:
            # The partition holds the entity's facts both ways; a read of twice the
            # page (and more) mostly ends the page in one round trip.
            read = self._subject_items(partition, key, start, 2 * limit + MIN_PAGE)
            # The fact at `after` is the previous page's last.
            return list(islice((i for i in read if i["SK"]["S"] != start), limit))

        merged = heapq.merge(*parallel(page, partitions(project)), key=lambda i: i["SK"]["S"])
        return [(i["SK"]["S"][len(FACTS_PREFIX) :], fact_of(i)) for i in islice(merged, limit)]

    def delete_fact(self, project: str, fact_id: str) -> bool:
        claim_key = fact_claim_key(project, fact_id)
        claim = self.table._get(claim_key)
        if claim is None:
            return False
        sk = fact_sk(claim["sq"]["S"])
        role = claim["r"]["S"]
        token = secrets.token_hex(4)
        counts = {entity_pk(project, k): -n for k, n in claim_ends(claim).items()}
        ops = [
            {
                "Delete": {
                    "TableName": self.table.table_name,
                    "Key": claim_key,
                    # The claim read above: not a fact stored again meanwhile.
                    "ConditionExpression": "#w = :w",
                    "ExpressionAttributeNames": {"#w": "w"},
                    "ExpressionAttributeValues": {":w": claim["w"]},
                }
            },
            *(
                {"Delete": {"TableName": self.table.table_name, "Key": item_key(pk, sk)}}
                for pk in counts
            ),
            {
                "Delete": {
                    "TableName": self.table.table_name,
                    "Key": listing_key(project, LIST_FACTS, fact_id),
                }
            },
            *(
                {"Update": {"TableName": self.table.table_name, **name_update(pk, None, {role: n})}}
                for pk, n in counts.items()
            ),
            # The reports of both ends are rebuilt without it.
            *work_ops(self.table.table_name, [dirty_marks(project, role, claim, token)]),
            # Its content's marker, while its claim stands for it (fact_identities.py).
            *(
                {"Delete": {"TableName": self.table.table_name, "Key": k}}
                for k in identity_marker(project, claim)
            ),
        ]
        try:
            self.table._transact(ops, RESEND)
        except Exception as error:
            reasons = cancellation(error)
            if reasons is not None and 0 in reasons.failed_checks:
                return False  # deleted meanwhile by another request
            raise
        return True

    def held_facts(self, project: str, ids: Collection[str]) -> set[str]:
        """The facts' claim items, one BatchGetItem per 100 ids (keys only)."""
        by_pk = {fact_pk(project, i): i for i in ids}
        items = self.table._batch_get([item_key(pk, FACT_SK) for pk in by_pk], projection="PK")
        return {by_pk[i["PK"]["S"]] for i in items}

    def fact_pointers(self, project: str, ids: Sequence[str]) -> list[FactPointer]:
        """From the facts' listing copies (each holds the whole fact) in the partitions
        the request sees, the user's own over a shared one: one BatchGetItem per 100
        listing keys, the calls in one wave."""
        wanted = list(dict.fromkeys(ids))
        keys = [listing_key(p, LIST_FACTS, i) for p in partitions(project) for i in wanted]
        own = {listing_key(project, LIST_FACTS, i)["PK"]["S"] for i in wanted}
        items = self.table._batch_get(keys)
        # The user's own copy last, so it is the one kept.
        items.sort(key=lambda i: i["PK"]["S"] in own)
        found = {f.id: _pointer(f) for f in map(fact_of, items)}
        return [found[i] for i in wanted if i in found]

    def facts_by_ids(self, project: str, ids: Sequence[str]) -> list[Fact]:
        """As fact_pointers, the facts whole."""
        wanted = list(dict.fromkeys(ids))
        keys = [listing_key(p, LIST_FACTS, i) for p in partitions(project) for i in wanted]
        own = {listing_key(project, LIST_FACTS, i)["PK"]["S"] for i in wanted}
        items = self.table._batch_get(keys)
        items.sort(key=lambda i: i["PK"]["S"] in own)
        found = {f.id: f for f in map(fact_of, items)}
        return [found[i] for i in wanted if i in found]
