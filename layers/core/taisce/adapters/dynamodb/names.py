"""Entity names (domain/aliases.py): which names are entities of a project, and what
an alias resolves to, read from the entities' name items.

An entity's name item (P#<p>#E#<key> / N) holds the name as first written and its live
facts per role; an alias's holds `a` (its entity's key) and no live counts.
"""

from __future__ import annotations

from collections.abc import Collection

from ...domain.aliases import resolve
from ...domain.model import Role
from ...domain.scope import partitions
from .client import TableClient
from .codec import ALIAS_OF, count_attribute, has_live_facts
from .keys import LIST_ENTITIES, NAME_SK, Item, entity_pk, item_key
from .project_listings import listing, listing_seen


def names_of(
    table: TableClient, project: str, keys: Collection[str], *, direct: bool = False
) -> dict[str, Item]:
    """The name items of these keys that exist (aliases' too), by key: one
    BatchGetItem per 100 keys, in one wave (`direct`: one of the recall's reads)."""
    by_pk = {entity_pk(project, k): k for k in keys}
    items = table._batch_get([item_key(pk, NAME_SK) for pk in by_pk], direct=direct)
    return {by_pk[i["PK"]["S"]]: i for i in items}


def names_seen(
    table: TableClient, project: str, keys: Collection[str], *, direct: bool = False
) -> dict[str, list[Item]]:
    """The name items of these keys in each partition the request sees (domain/scope.py),
    by key, the shared partition's first: one BatchGetItem per 100 name items, in one
    wave (`direct`: one of the recall's reads)."""
    order = {p: n for n, p in enumerate(partitions(project))}
    by_pk = {entity_pk(p, k): (p, k) for p in order for k in keys}
    items = table._batch_get([item_key(pk, NAME_SK) for pk in by_pk], direct=direct)
    items.sort(key=lambda i: order[by_pk[i["PK"]["S"]][0]])
    found: dict[str, list[Item]] = {}
    for i in items:
        found.setdefault(by_pk[i["PK"]["S"]][1], []).append(i)
    return found


def alias_of_seen(items: list[Item]) -> str | None:
    """What a key is an alias of as a request sees it: the user's own alias over a
    shared one (items as names_seen gives them, the shared partition's first)."""
    targets = [i[ALIAS_OF]["S"] for i in items if ALIAS_OF in i]
    return targets[-1] if targets else None


def listed_keys(table: TableClient, project: str) -> set[str]:
    """The keys of the entity listings of every partition the request sees (one Query
    per shard and partition, in parallel)."""
    found = listing_seen(table, project, LIST_ENTITIES)
    return {i["k"]["S"] for items in found for i in items}


def name_items(table: TableClient, project: str) -> list[tuple[str, Item]]:
    """(key, name item) of the project's entities (aliases too), from its listing;
    a listed key whose name item is gone (erased, undone) is left out."""
    keys = [i["k"]["S"] for i in listing(table, project, LIST_ENTITIES)]
    return list(names_of(table, project, keys).items())


class DynamoDbNameLookup:
    """Names and their resolution."""

    def __init__(self, table: TableClient) -> None:
        self.table = table

    def known_names(
        self, project: str, keys: Collection[str], roles: Collection[Role] | None = None
    ) -> set[str]:
        """Which of these names are entities of what the request sees: named by a live
        fact of one of `roles` in a partition it sees, or by any fact ever stored there
        if roles is None. One BatchGetItem per 100 name items."""
        if roles is not None and not roles:
            return set()
        return self._known(names_seen(self.table, project, keys, direct=True), roles)

    @staticmethod
    def _known(seen: dict[str, list[Item]], roles: Collection[Role] | None) -> set[str]:
        if roles is None:
            return {k for k, items in seen.items() if any(ALIAS_OF not in i for i in items)}
        counted = [count_attribute(r) for r in roles]
        return {k for k, items in seen.items() if any(has_live_facts(i, counted) for i in items)}

    def resolve_names(
        self, project: str, keys: Collection[str], roles: Collection[Role] | None = None
    ) -> dict[str, str]:
        """One BatchGetItem of the name items (as known_names), and a second one for the
        entities of the aliases found, only when the question names an alias. A user's
        own alias of a name wins over a shared one (as on the embedded store)."""
        if roles is not None and not roles:
            return {}
        seen = names_seen(self.table, project, keys, direct=True)
        aliased = {k: t for k, items in seen.items() if (t := alias_of_seen(items)) is not None}
        live = self._known({k: i for k, i in seen.items() if k not in aliased}, roles)
        if aliased:
            live |= self.known_names(project, set(aliased.values()), roles)
        return resolve(keys, aliased, live)

    def entity_keys(self, project: str, limit: int) -> list[str]:
        """The keys of the entity listings the request sees (recall step 2's spelling
        match): one Query per shard and partition, in parallel, no name item read. A
        key listed whose entity is gone or an alias is confirmed or dropped by the
        caller's resolve_names."""
        return sorted(listed_keys(self.table, project))[:limit]
