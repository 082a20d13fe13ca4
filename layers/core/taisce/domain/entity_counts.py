"""How facts count for the entities they name, the rule both stores keep.

Each end of a live fact counts one fact of the fact's role for that entity (a fact
about itself counts twice), so that deleting, erasing or moving the fact takes back
exactly what storing it added. An entity with a live fact of a role is a name that
recall can match for that role. Its name is embedded once per role: marked for a
vector when the entity gains its first live fact of the role.
"""

from __future__ import annotations

from collections.abc import Iterable

from .model import Fact, Role


def end_counts(subject_key: str, object_key: str | None) -> dict[str, int]:
    """How many live facts of its role a fact counts for each entity it names."""
    counts = {subject_key: 1}
    if object_key is not None:
        counts[object_key] = counts.get(object_key, 0) + 1
    return counts


def end_names(fact: Fact) -> dict[str, str]:
    """The entities a fact names, each with its name as the fact writes it (subject
    first; a fact about itself names it by its subject)."""
    names = {fact.subject_key: fact.subject}
    if fact.object_key is not None:
        names.setdefault(fact.object_key, fact.object)
    return names


def moved_counts(facts: Iterable[tuple[Role, str, str | None]], alias: str) -> dict[Role, int]:
    """What a merge moves from the alias to its entity, per role, for facts given as
    (role, subject key, object key): the alias's end counts of each."""
    moved: dict[Role, int] = {}
    for role, subject_key, object_key in facts:
        n = end_counts(subject_key, object_key).get(alias, 0)
        if n:
            moved[role] = moved.get(role, 0) + n
    return moved


def new_to_role(held: int, added: int) -> bool:
    """Whether an entity that held `held` live facts of a role and gains `added` is
    new to the role (its name is then marked for that role's vector)."""
    return held <= 0 < added
