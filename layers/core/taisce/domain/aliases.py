"""Entity resolution: aliases merged into an entity, and merges proposed by similarity.

A merge makes one name (the alias) another name of an entity (the target): the
alias's facts are re-keyed to the target, in both directions, while each fact keeps
its own words (subject and object as said, statement, quote, source_role). Aliases
stay flat: an alias always points at an entity that is not itself an alias, so one
look-up resolves any name.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from .deadline import Deadline, DeadlineEmbedder, DeadlineExceeded, DeadlineIndex
from .errors import InvalidRequest
from .floors import MINILM_FLOORS
from .ingest import Name
from .model import ROLES, EntityName, Fact, Hit
from .names import NOT_A_NAME, has_letter_or_digit, normalize_name
from .scope import User

if TYPE_CHECKING:
    from .ports.vectors import Embedder, VectorIndex

# Cosine similarity of two entity names' vectors at or above which a merge is
# proposed. With all-MiniLM-L6-v2: "Maya Okafor"/"Maya Okafour" 0.95, "Robert Smith"/
# "Bob Smith" 0.86, but "Dublin"/"Galway" 0.81 and "Robert Smith"/"Rob Smith" 0.85:
# below this line distinct places and people start to look alike. (MiniLM's; another
# model brings its own: domain/floors.py.)
PROPOSAL_FLOOR = MINILM_FLOORS.proposal
# Names compared per proposals request, neighbours looked at per name, pairs returned.
# Each name compared costs one k-NN search (and a model call if it has no indexed
# vector yet): 500 names in PROPOSAL_WORKERS threads stay well inside API Gateway's
# 29 s (docs/aws.md, "Merge proposals"), where 2,000 in a row did not.
PROPOSAL_NAMES = 500
PROPOSAL_NEIGHBOURS = 10
PROPOSALS = 100
# Names read (or embedded) and searched per task, and tasks run at once.
PROPOSAL_CHUNK = 16
PROPOSAL_WORKERS = 8


def proposal_offset_key(partition: str) -> str:
    """The key the store keeps a partition's proposals offset under: a hash, so that
    no user id is written beside it; a user's erasure deletes it."""
    return "proposals:" + hashlib.sha256(str(partition).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class ProposalWindow:
    """The names one proposals request compares (at most PROPOSAL_NAMES, from the
    offset the last request left, wrapping to the start) and where the next starts."""

    names: list[EntityName]
    following: int


def proposal_window(
    names_from: Callable[[int, int], list[EntityName]], offset: int, size: int = PROPOSAL_NAMES
) -> ProposalWindow:
    """The window of `size` names from `offset` over the names sorted by key
    (`names_from(limit, offset)` reads them), wrapping past the last name to the first:
    successive requests compare every name, ceil(N / size) requests for N names."""
    names = names_from(size, offset) if offset > 0 else []
    if len(names) == size:
        return ProposalWindow(names, offset + size)
    # Past the end: the rest from the start, not reaching the names just read.
    wrapped = names_from(min(size - len(names), offset) if offset > 0 else size, 0)
    following = len(wrapped) if len(names) + len(wrapped) == size else 0
    return ProposalWindow(names + wrapped, following)


class MergeRequest(BaseModel):
    """`POST /v1/entities/merges`: make `alias` another name of the entity `into`."""

    model_config = ConfigDict(extra="forbid", strict=True)

    alias: Name
    into: Name
    user: User | None = None

    @field_validator("alias", "into")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        if not has_letter_or_digit(value):
            raise ValueError(NOT_A_NAME)
        return value


@dataclass(frozen=True, slots=True)
class NameState:
    """What the store holds about one normalised name when a merge is checked."""

    key: str
    # The entity it is an alias of, if it is one.
    alias_of: str | None
    # Whether a fact ever named it (so it is an entity, or was one before a merge).
    is_entity: bool


@dataclass(frozen=True, slots=True)
class MergePlan:
    alias_key: str
    target_key: str
    # Already an alias of the same entity: the merge runs again (it moves whatever a
    # crash or a racing write left behind) and changes nothing else.
    again: bool


@dataclass(frozen=True, slots=True)
class Proposal:
    """Two names similar enough to be one entity: `alias` (as first written) into
    `into`, with their vectors' cosine (rounded to 4 places)."""

    alias: str
    into: str
    similarity: float


@dataclass(frozen=True, slots=True)
class MergeProposals:
    """The proposals at `threshold`, most similar first; degraded ("proposals",
    no pairs) when no model is configured or the model or index failed."""

    threshold: float
    proposals: list[Proposal]
    degraded: list[Literal["proposals"]]


def plan_merge(alias: NameState, target: NameState, alias_text: str, into_text: str) -> MergePlan:
    """Check a merge against what the store holds; raises InvalidRequest when refused.

    Merging into an alias merges into the entity it names (aliases stay flat). Refused:
    a name into itself (or into its own alias), a target no fact ever named, and an
    alias already merged into another entity (merges are not undone or re-pointed).
    """
    if alias.key == target.key:
        raise InvalidRequest(f"cannot merge {alias_text!r} into itself")
    target_key = target.alias_of or target.key
    if not target.alias_of and not target.is_entity:
        raise InvalidRequest(f"into: no entity is named {into_text!r}")
    if target_key == alias.key:
        raise InvalidRequest(
            f"{into_text!r} is already an alias of {alias_text!r}: merging would make a cycle"
        )
    if alias.alias_of is not None and alias.alias_of != target_key:
        raise InvalidRequest(
            f"{alias_text!r} is already merged into another entity; it cannot be merged twice"
        )
    return MergePlan(alias.key, target_key, again=alias.alias_of == target_key)


def merge_keys(alias: str, into: str) -> tuple[str, str]:
    return normalize_name(alias), normalize_name(into)


def _name_vectors(
    project: str, chunk: Sequence[EntityName], embedder: Embedder, index: VectorIndex
) -> dict[str, Sequence[float]]:
    """Each name's vector: the one the worker indexed for it (any role's copy, all made
    from the name), read in one request; the model is asked only for names not yet
    indexed, in one call."""
    ids = {f"{role}:{n.key}": n.key for n in chunk for role in ROLES}
    vectors: dict[str, Sequence[float]] = {}
    for item_id, vector in index.vectors(project, "entity", list(ids)).items():
        vectors.setdefault(ids[item_id], vector)
    missing = [n for n in chunk if n.key not in vectors]
    if missing:
        embedded = embedder.embed([n.name for n in missing])
        vectors.update((n.key, v) for n, v in zip(missing, embedded, strict=True))
    return vectors


def _neighbours(
    project: str, chunk: Sequence[EntityName], embedder: Embedder, index: VectorIndex
) -> list[tuple[str, list[Hit]]]:
    """Each name of the chunk with its nearest entity-name vectors: its vector, then a
    k-NN search per name."""
    vectors = _name_vectors(project, chunk, embedder, index)
    return [
        (name.key, index.search(project, "entity", vectors[name.key], PROPOSAL_NEIGHBOURS))
        for name in chunk
    ]


def propose_merges(
    project: str,
    names: Sequence[EntityName],
    embedder: Embedder,
    index: VectorIndex,
    floor: float = PROPOSAL_FLOOR,
    deadline: Deadline | None = None,
) -> tuple[list[Proposal], bool]:
    """Pairs of live entity names whose vectors reach `floor`, most similar first, and
    whether every name was compared (False: the deadline came first; the pairs found
    by then are answered).

    Each name's neighbours come from the entity-name vectors the worker indexes (per
    role, "<role>:<key>"); a name searches with the vector it was indexed with, read
    back from the index (embedded only if not indexed yet). Chunks of names are read
    and searched in parallel threads, each call bounded by `deadline` when given. The
    name with fewer live facts is proposed as the alias of the other (ties: the later
    key). Raises if the model or index fails.
    """
    if deadline is not None:
        embedder, index = DeadlineEmbedder(embedder, deadline), DeadlineIndex(index, deadline)
    chunks = [names[i : i + PROPOSAL_CHUNK] for i in range(0, len(names), PROPOSAL_CHUNK)]
    found: list[tuple[str, list[Hit]]] = []
    complete = True
    with ThreadPoolExecutor(max_workers=PROPOSAL_WORKERS) as pool:
        tasks = [pool.submit(_neighbours, project, c, embedder, index) for c in chunks]
        for task in tasks:
            try:
                found += task.result()
            except DeadlineExceeded:
                complete = False
            except Exception:
                for left in tasks:  # the model or index failed: no more calls
                    left.cancel()
                raise
    return _ranked({n.key: n for n in names}, found, floor), complete


def _ranked(
    by_key: Mapping[str, EntityName], found: Sequence[tuple[str, list[Hit]]], floor: float
) -> list[Proposal]:
    best: dict[tuple[str, str], float] = {}
    for key, hits in found:
        for hit in hits:
            other = hit.id.partition(":")[2]
            if hit.score < floor or other == key or other not in by_key:
                continue
            pair = (min(key, other), max(key, other))
            best[pair] = max(best.get(pair, 0.0), hit.score)
    proposals: list[tuple[float, str, str]] = []
    for (a, b), score in best.items():
        first, second = by_key[a], by_key[b]
        into, alias = (first, second) if first.facts >= second.facts else (second, first)
        # Rounded before sorting, so float noise cannot reorder equal scores.
        proposals.append((round(score, 4), alias.key, into.key))
    proposals.sort(key=lambda p: (-p[0], p[1], p[2]))
    return [Proposal(by_key[a].name, by_key[t].name, s) for s, a, t in proposals[:PROPOSALS]]


def rekeyed(facts: Sequence[Fact], targets: Mapping[str, str]) -> Sequence[Fact]:
    """The facts with each alias key (a key of `targets`) replaced by its entity's; the
    words stay as said. Both stores resolve a batch through this before storing it."""
    if not targets:
        return facts
    return [
        replace(
            f,
            subject_key=targets.get(f.subject_key, f.subject_key),
            object_key=targets.get(f.object_key, f.object_key) if f.object_key else None,
        )
        for f in facts
    ]


def resolve(
    keys: Iterable[str], aliased: Mapping[str, str], live: Collection[str]
) -> dict[str, str]:
    """Each asked key that names a live entity -> that entity's key: a key that is not
    an alias counts if it is live itself, an alias if the entity it points to is."""
    found = {k: k for k in keys if k not in aliased and k in live}
    found.update((k, t) for k, t in aliased.items() if t in live)
    return found
