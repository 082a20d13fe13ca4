"""Entity names (domain/aliases.py): which names are entities of a project, and what
an alias resolves to, read from the entities' name items.

An entity's name item (P#<p>#E#<key> / N) holds the name as first written and its live
facts per role; an alias's holds `a` (its entity's key) and no live counts.
"""

from __future__ import annotations

from collections.abc import Collection

from ...domain.aliases import resolve
from ...domain.model import Role
from .client import TableClient
from .codec import ALIAS_OF, count_attribute, has_live_facts
from .keys import LIST_ENTITIES, NAME_SK, Item, entity_pk, item_key
from .project_listings import listing


def names_of(
    table: TableClient, project: str, keys: Collection[str], *, direct: bool = False
) -> dict[str, Item]:
    """The name items of these keys that exist (aliases' too), by key: one
    BatchGetItem per 100 keys, in one wave (`direct`: one of the recall's reads)."""
    by_pk = {entity_pk(project, k): k for k in keys}
    items = table._batch_get([item_key(pk, NAME_SK) for pk in by_pk], direct=direct)
    return {by_pk[i["PK"]["S"]]: i for i in items}


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
        """Which of these names are entities of the project: named by a live fact of one
        of `roles`, or by any fact ever stored if roles is None. One BatchGetItem per
        100 names."""
        if roles is not None and not roles:
            return set()
        items = names_of(self.table, project, keys, direct=True)
        if roles is None:
            return {k for k, i in items.items() if ALIAS_OF not in i}
        counted = [count_attribute(r) for r in roles]
        return {k for k, i in items.items() if has_live_facts(i, counted)}

    def resolve_names(
        self, project: str, keys: Collection[str], roles: Collection[Role] | None = None
    ) -> dict[str, str]:
        """One BatchGetItem of the name items (as known_names), and a second one for the
        entities of the aliases found, only when the question names an alias."""
        if roles is not None and not roles:
            return {}
        counted = [count_attribute(r) for r in roles] if roles is not None else []
        live: set[str] = set()
        aliased: dict[str, str] = {}
        for key, i in names_of(self.table, project, keys, direct=True).items():
            if ALIAS_OF in i:
                aliased[key] = i[ALIAS_OF]["S"]
            elif roles is None or has_live_facts(i, counted):
                live.add(key)
        if aliased:
            live |= self.known_names(project, set(aliased.values()), roles)
        return resolve(keys, aliased, live)

    def entity_keys(self, project: str, limit: int) -> list[str]:
        """The keys of the project's entity listing (recall step 2's spelling match): one
        Query per shard, in parallel, no name item read. A key listed whose entity is
        gone or an alias is confirmed or dropped by the caller's resolve_names."""
        keys = {i["k"]["S"] for i in listing(self.table, project, LIST_ENTITIES)}
        return sorted(keys)[:limit]
