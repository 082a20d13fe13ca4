"""When a fact holds: its validity, and how a new fact closes one it contradicts.

A fact holds from `valid_from` (or, when it has none, from when it was recorded)
until `valid_to` (exclusive; none = still holds). For a single-valued predicate
("lives in", "works at", ...) one subject has one object at a time, as one speaker
says it: a new fact that contradicts an open one closes it (sets its `valid_to`)
instead of deleting it, so recall can still answer "as of" an earlier time.

Every writer of facts goes through `plan_closings` inside the store's transaction
(the store's `put_facts`), so client facts and extracted facts follow one rule. What a
store reads before it plans is decided here too (`keyed_ids`, `closing_reads`): the
store supplies only the queries.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from .model import Fact, FactPointer, Role
from .names import normalize_name

# Predicates whose subject has one object at a time, matched after normalising case
# and white space as names are. Kept short on purpose: a predicate missing here only
# means old and new facts both stay current, while a wrong entry would hide a fact.
SINGLE_VALUED_PREDICATES = frozenset(
    {
        "lives in",
        "resides in",
        "is based in",
        "is located in",
        "is headquartered in",
        "works at",
        "works for",
        "is employed by",
        "reports to",
        "is managed by",
        "is married to",
    }
)


# Cached: a batch asks for it four times a fact (the contradiction prelude and plan),
# and a memory's predicates are few; the bound keeps a stream of new ones from growing it.
@functools.lru_cache(maxsize=4096)
def predicate_key(predicate: str) -> str:
    return normalize_name(predicate)


ContradictionKey = tuple[str, Role, str]


def contradiction_key(fact: Fact) -> ContradictionKey | None:
    """(subject, role, predicate) under which facts contradict, or None when the
    predicate may hold several objects at once. The role is part of it: a tool's
    claim must not close what the user said."""
    key = predicate_key(fact.predicate)
    if key not in SINGLE_VALUED_PREDICATES:
        return None
    return (fact.subject_key, fact.source_role, key)


def sortable(moment: str) -> str:
    """A stored timestamp in a form whose string order is time order.

    Stored timestamps are `timestamps.timestamp` output: "YYYY-MM-DDTHH:MM:SSZ" or with
    six fraction digits; "…:00Z" sorts after "…:00.5Z" as text, so the short form
    gains ".000000". Anything else is returned as it is."""
    if len(moment) == 20 and moment.endswith("Z"):
        return moment[:19] + ".000000Z"
    return moment


def unsortable(moment: str) -> str:
    """The inverse of `sortable` for what `sortable` produced."""
    if len(moment) == 27 and moment.endswith(".000000Z"):
        return moment[:19] + "Z"
    return moment


def start_of(fact: Fact) -> str:
    """When the fact starts to hold: valid_from; without one, when it was recorded
    (or its valid_to, if that is earlier: a fact that had ended before it was
    recorded started no later than it ended)."""
    if fact.valid_from is not None:
        return fact.valid_from
    if fact.valid_to is not None and sortable(fact.valid_to) < sortable(fact.recorded_at):
        return fact.valid_to
    return fact.recorded_at


def open_at(fact: Fact | FactPointer, moment: str) -> bool:
    """Whether the fact has not ended by `moment` (valid_to is exclusive)."""
    return fact.valid_to is None or sortable(fact.valid_to) > sortable(moment)


def valid_at(fact: Fact | FactPointer, moment: str) -> bool:
    """Whether the fact holds at `moment`: started (or no start given) and not ended."""
    started = fact.valid_from is None or sortable(fact.valid_from) <= sortable(moment)
    return started and open_at(fact, moment)


@dataclass(frozen=True, slots=True)
class Closing:
    """A stored fact to close: `fact` as read, ended at `valid_to` by the new fact
    `by` (a store writes the change with that fact)."""

    fact: Fact
    valid_to: str
    by: str


def plan_closings(
    existing: Iterable[Fact], incoming: Sequence[Fact]
) -> tuple[list[Fact], list[Closing]]:
    """What storing `incoming` (new facts, in batch order) changes.

    `existing` holds the stored facts that may contradict them (same subject, role
    and single-valued predicate; more does no harm). For each incoming fact in
    turn, against what is stored and the batch's earlier facts, and for each fact
    of its key with a different object:

    - one that started no later than it and is still open at its start is closed
      at its start (on equal starts the earlier stored gives way);
    - one that starts later (the new fact arrived out of time order) ends the new
      fact at that start, if the new fact is still open then.

    Returns the incoming facts (some with a `valid_to` set) and the stored facts to
    close, each once, with the final `valid_to`.
    """
    pools: dict[ContradictionKey, list[Fact]] = {}
    for fact in existing:
        key = contradiction_key(fact)
        if key is not None:
            pools.setdefault(key, []).append(fact)
    stored_ids = {f.id for pool in pools.values() for f in pool}
    out = list(incoming)
    # Where each incoming fact sits in `out`, so a later one can close it.
    position = {f.id: i for i, f in enumerate(out)}
    closed: dict[str, Closing] = {}
    for i, new in enumerate(out):
        key = contradiction_key(new)
        if key is None:
            continue
        pool = pools.setdefault(key, [])
        start = start_of(new)
        obj = normalize_name(new.object)
        for n, old in enumerate(pool):
            if normalize_name(old.object) == obj:
                continue  # the same object said again: no contradiction
            other = start_of(old)
            if sortable(other) <= sortable(start):
                if open_at(old, start):
                    ended = dataclasses.replace(old, valid_to=start)
                    pool[n] = ended
                    if old.id in stored_ids:
                        original = closed[old.id].fact if old.id in closed else old
                        closed[old.id] = Closing(original, start, new.id)
                    else:
                        out[position[old.id]] = ended
            elif open_at(new, other):
                new = dataclasses.replace(new, valid_to=other)
        out[i] = new
        pool.append(new)
    return out, list(closed.values())


def keyed_ids(facts: Iterable[Fact]) -> list[str]:
    """The ids of the facts that can contradict (each once, in order): whether these
    are stored already is all `closing_reads` needs to know."""
    return list(dict.fromkeys(f.id for f in facts if contradiction_key(f) is not None))


@dataclass(frozen=True, slots=True)
class ClosingReads:
    """What a store reads before `plan_closings`, and what it plans for.

    `incoming`: the batch's new facts, the first copy of each id (a repeated id stores
    the first), in batch order. `open_from`: per subject key and role of the ones that
    can contradict, their earliest start (sortable): the stored facts to read are that
    subject's of that role still open then. One that ended earlier can neither be
    closed nor end a new fact."""

    incoming: list[Fact]
    open_from: dict[tuple[str, Role], str]


def closing_reads(facts: Sequence[Fact], stored: Collection[str]) -> ClosingReads:
    """The reads for a batch, given which of its ids are stored (at least those of
    `keyed_ids`: a stored fact that cannot contradict changes no plan)."""
    incoming: dict[str, Fact] = {}
    for f in facts:
        if f.id not in stored:
            incoming.setdefault(f.id, f)
    open_from: dict[tuple[str, Role], str] = {}
    for f in incoming.values():
        if contradiction_key(f) is not None:
            at = sortable(start_of(f))
            group = (f.subject_key, f.source_role)
            open_from[group] = min(open_from.get(group, at), at)
    return ClosingReads(list(incoming.values()), open_from)
