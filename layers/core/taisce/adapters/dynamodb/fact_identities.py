"""Facts stored once (domain/fact_identity.py) on DynamoDB.

A marker item per content (`identity_key`: P#<p>#FI#<identity>) names the fact that
holds it (`fid`), and that fact's claim holds the identity (`ck`) while it stands for
it. A batch reads the markers of its contents first: a marker whose fact's claim still
holds the identity is a live copy (the new fact is answered with its id); any other is
stale (its fact was deleted, erased or closed) and may be taken over. Each new fact's
unit puts its marker on condition that it is absent or still the stale one read, so
of concurrent writers of one content exactly one stores it; the others find it when
they read the markers again.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from ...domain.model import Fact
from .client import TableClient
from .keys import Item, fact_claim_key, identity_key


@dataclass
class Holders:
    """What a batch read of its contents' markers: the live fact holding each content
    (by identity), and the fact id of each stale marker (to take over)."""

    live: dict[str, str] = field(default_factory=dict)
    stale: dict[str, str] = field(default_factory=dict)


def read_holders(table: TableClient, project: str, identities: Collection[str]) -> Holders:
    """Two waves of reads: the markers, then the claims of the facts they name."""
    holders = Holders()
    if not identities:
        return holders
    markers = table._batch_get([identity_key(project, i) for i in identities])
    named = {m["ck"]["S"]: m["fid"]["S"] for m in markers}
    claims = table._batch_get([fact_claim_key(project, i) for i in set(named.values())])
    holding = {(c["ck"]["S"], c["PK"]["S"]) for c in claims if "ck" in c}
    for identity, fact_id in named.items():
        if (identity, fact_claim_key(project, fact_id)["PK"]["S"]) in holding:
            holders.live[identity] = fact_id
        else:
            holders.stale[identity] = fact_id
    return holders


def guard(project: str, identity: str, fact_id: str, stale: str | None) -> Item:
    """The Put of a new fact's marker, on condition it is absent or the stale one read."""
    put: Item = {
        "Item": {**identity_key(project, identity), "ck": {"S": identity}, "fid": {"S": fact_id}},
        "ConditionExpression": "attribute_not_exists(PK)",
    }
    if stale is not None:
        put["ConditionExpression"] = "attribute_not_exists(PK) OR #f = :stale"
        put["ExpressionAttributeNames"] = {"#f": "fid"}
        put["ExpressionAttributeValues"] = {":stale": {"S": stale}}
    return put


def leave_out(
    facts: Sequence[Fact], identities: dict[str, str], holders: Holders, same: dict[str, str]
) -> list[Fact]:
    """The facts whose content no live fact holds; `same` gains the others' answers."""
    kept: list[Fact] = []
    for f in facts:
        holder = holders.live.get(identities[f.id])
        if holder is None:
            kept.append(f)
        elif holder != f.id:
            same[f.id] = holder
    return kept


def settle(
    table: TableClient,
    project: str,
    left: Sequence[Fact],
    identities: dict[str, str],
    same: dict[str, str],
) -> None:
    """For facts a batch did not store (another writer took the id or the content
    meanwhile): the id of the fact now holding each content goes in `same`."""
    holders = read_holders(table, project, {identities[f.id] for f in left})
    leave_out(left, identities, holders, same)


def identity_marker(project: str, claim: Item) -> list[Item]:
    """The key of the marker a fact's claim stands for (none once closed), for the
    fact's deletion or erasure to remove with it."""
    return [identity_key(project, claim["ck"]["S"])] if "ck" in claim else []


def resolve_chains(same: dict[str, str]) -> dict[str, str]:
    """A copy in the batch answered with its first copy's answer."""
    return {k: same.get(v, v) for k, v in same.items()}
