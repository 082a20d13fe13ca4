"""Entity names and aliases (domain/aliases.py): which names are entities of a
project, what an alias resolves to, the project's entities and aliases.

An entity's name item (P#<p>#E#<key> / N) holds the name as first written and its live
facts per role; an alias's holds `a` (its entity's key) and no live counts; the
listing P#<p>#ALIAS / A#<alias key> holds `k` (alias key), `n` (alias name), `t`
(entity key).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence

from ...domain.aliases import rekeyed, resolve
from ...domain.model import Alias, EntityName, Fact, Role
from ...domain.names import normalize_name
from .codec import ALIAS_OF, count_attribute, has_live_facts
from .keys import (
    ALIAS_PREFIX,
    LIST_ENTITIES,
    NAME_SK,
    Item,
    aliases_pk,
    entity_pk,
    item_key,
    key_of,
    listing_key,
    name_key,
)
from .listings import Listings


class Names(Listings):
    """Names, aliases and their resolution."""

    def _names_of(
        self, project: str, keys: Collection[str], *, direct: bool = False
    ) -> dict[str, Item]:
        """The name items of these keys that exist (aliases' too), by key: one
        BatchGetItem per 100 keys, in one wave (`direct`: one of the recall's reads)."""
        by_pk = {entity_pk(project, k): k for k in keys}
        items = self._batch_get([item_key(pk, NAME_SK) for pk in by_pk], direct=direct)
        return {by_pk[i["PK"]["S"]]: i for i in items}

    def known_names(
        self, project: str, keys: Collection[str], roles: Collection[Role] | None = None
    ) -> set[str]:
        """Which of these names are entities of the project: named by a live fact of one
        of `roles`, or by any fact ever stored if roles is None. One BatchGetItem per
        100 names."""
        if roles is not None and not roles:
            return set()
        items = self._names_of(project, keys, direct=True)
        if roles is None:
            return {k for k, i in items.items() if ALIAS_OF not in i}
        counted = [count_attribute(r) for r in roles]
        return {k for k, i in items.items() if has_live_facts(i, counted)}

    def _alias_targets(self, project: str, keys: Collection[str]) -> dict[str, str]:
        items = self._names_of(project, keys)
        return {k: i[ALIAS_OF]["S"] for k, i in items.items() if ALIAS_OF in i}

    def _resolve_aliases(self, project: str, facts: Sequence[Fact]) -> Sequence[Fact]:
        """The facts with each alias key replaced by its entity's (the words stay):
        one BatchGetItem per 100 names of the batch."""
        keys = {k for f in facts for k in (getattr(f, "subject_key", None), f.object_key) if k}
        targets = self._alias_targets(project, keys) if keys else {}
        return rekeyed(facts, targets)

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
        for key, i in self._names_of(project, keys, direct=True).items():
            if ALIAS_OF in i:
                aliased[key] = i[ALIAS_OF]["S"]
            elif roles is None or has_live_facts(i, counted):
                live.add(key)
        if aliased:
            live |= self.known_names(project, set(aliased.values()), roles)
        return resolve(keys, aliased, live)

    def aliases(self, project: str) -> list[Alias]:
        listed = self._listed_aliases(project)
        pks = {entity_pk(project, i["t"]["S"]) for i in listed}
        names = {
            i["PK"]["S"]: i["n"]["S"]
            for i in self._batch_get([item_key(pk, NAME_SK) for pk in pks])
            if "n" in i
        }
        found = [
            Alias(
                alias=i["n"]["S"],
                alias_key=i["k"]["S"],
                into=names.get(entity_pk(project, i["t"]["S"]), i["t"]["S"]),
                into_key=i["t"]["S"],
            )
            for i in listed
        ]
        return sorted(found, key=lambda a: a.alias_key)

    def remove_aliases(self, project: str, keys: Collection[str]) -> int:
        wanted = set(keys)
        gone = [i for i in self._listed_aliases(project) if {i["k"]["S"], i["t"]["S"]} & wanted]
        requests: list[Item] = []
        for item in gone:
            requests.append({"DeleteRequest": {"Key": key_of(item)}})
            requests.append({"DeleteRequest": {"Key": name_key(project, item["k"]["S"])}})
            requests.append(
                {"DeleteRequest": {"Key": listing_key(project, LIST_ENTITIES, item["k"]["S"])}}
            )
        self._batch_write(requests)
        return len(gone)

    def _listed_aliases(self, project: str) -> list[Item]:
        return list(
            self._query(
                KeyConditionExpression="PK = :pk AND begins_with(SK, :a)",
                ExpressionAttributeValues={
                    ":pk": {"S": aliases_pk(project)},
                    ":a": {"S": ALIAS_PREFIX},
                },
            )
        )

    def entity_keys(self, project: str, limit: int) -> list[str]:
        """The keys of the project's entity listing (recall step 2's spelling match): one
        Query per shard, in parallel, no name item read. A key listed whose entity is
        gone or an alias is confirmed or dropped by the caller's resolve_names."""
        keys = {i["k"]["S"] for i in self._listing(project, LIST_ENTITIES)}
        return sorted(keys)[:limit]

    def _name_items(self, project: str) -> list[tuple[str, Item]]:
        """(key, name item) of the project's entities (aliases too), from its listing;
        a listed key whose name item is gone (erased, undone) is left out."""
        keys = [i["k"]["S"] for i in self._listing(project, LIST_ENTITIES)]
        return list(self._names_of(project, keys).items())

    def entity_names(self, project: str, limit: int) -> list[EntityName]:
        """The project's live entities (not aliases): its listing, then the name items
        (BatchGetItem, in parallel chunks). Never a Scan of the table."""
        found: list[EntityName] = []
        for _, item in self._name_items(project):
            if ALIAS_OF in item:
                continue
            facts = sum(int(v["N"]) for k, v in item.items() if k.startswith("c_"))
            if facts > 0 and "n" in item:
                found.append(EntityName(normalize_name(item["n"]["S"]), item["n"]["S"], facts))
        return sorted(found, key=lambda e: e.key)[:limit]

    def project_entities(self, project: str) -> Iterator[str]:
        for key, _ in self._name_items(project):
            yield key
