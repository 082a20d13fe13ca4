"""Reports: short summaries of related facts, built from stored facts with no model.

Reports are built when facts change, never during a recall. The rules:

- Roles never mix. Each role's facts make their own graph (nodes: entity keys; an edge
  for each fact whose object is an entity; a value fact only attaches to its subject), so
  a recall that asks for some roles can be given only those roles' reports, and what it
  did not ask for cannot have shaped their grouping, titles or summaries.
- Each connected component of a role's graph is grouped on its own: with 2 entities or
  more, into level-0 communities by Louvain (weighted by the number of facts between two
  entities, fixed seed), each then split into its connected parts, and each community of
  a single entity merged into the neighbouring community it shares the most facts with.
  Louvain is networkx 3.6's `louvain_communities`, ported step for step but with exact
  integer gains: networkx 3.6.1 can loop forever on small graphs (see `louvain`). A
  component of 2 or 3 entities is always one community (after the merge no other
  grouping exists), so Louvain is not run for it. When a component has several
  communities, a level-1 report for the whole component is their parent.
- Titles name the (up to 3) most connected members, most connected first; an entity's
  connectedness is the number of its role's facts that name it (as subject or entity
  object), ties by key; its display name is its spelling in the first of its role's facts
  that names it.
- Summaries are whole statements, never cut (see `_summary`); a report whose statements
  are all longer than the limit has an empty summary, and still its title.
- The graph of a component is built from its sorted keys and sorted edges and grouped
  alone, so a report depends only on the facts of its own component of its own role:
  adding, removing or reordering facts elsewhere changes nothing in it, and building from
  the facts of some whole components gives exactly their reports. That is what lets a
  caller rebuild only the components a change reached (service/background.py
  `rebuild_reports`).
- Ids come from role, level and member keys only; titles, summaries and their order also
  depend on the storing order of the component's own facts.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from .model import ROLES, Fact, Report, Role

SUMMARY_CHARACTERS = 600
SEED = 7
TITLE_NAMES = 3

# After a statement that ends a sentence the next one follows after a space; otherwise
# statements are joined with "; ". Statements are never changed or cut.
_SENTENCE_ENDS = (".", "!", "?", "\u2026", "\u3002", "\uff01", "\uff1f", "\uff61")
_JOIN = "; "
_JOIN_AFTER_SENTENCE = " "


def report_id(role: Role, level: int, keys: Iterable[str]) -> str:
    """Stable id: the same role, level and members always give the same id."""
    encoded = json.dumps([role, level, sorted(keys)], ensure_ascii=False)
    return "rep_" + hashlib.sha1(encoded.encode("utf-8"), usedforsecurity=False).hexdigest()[:16]


# Given a built report and its facts in summary order, the report to keep (the worker
# passes one that may have a model write the summary: domain/summaries.py).
Rewrite = Callable[["Report", Sequence[Fact]], "Report"]


def build_reports(
    facts: Sequence[Fact],
    *,
    summary_characters: int = SUMMARY_CHARACTERS,
    seed: int = SEED,
    rewrite: Rewrite | None = None,
) -> list[Report]:
    """The reports of these facts (given in storing order).

    Ordered by role (user, assistant, system, tool), then component, then level
    descending (a parent before its communities), then id. `rewrite`, if given, is
    called on each report once it is built (in that order) and may replace it.
    """
    if isinstance(summary_characters, bool) or summary_characters < 1:
        raise ValueError("summary_characters must be a positive integer")
    reports: list[Report] = []
    for role in ROLES:
        own = [f for f in facts if f.source_role == role]
        if own:
            reports.extend(_role_reports(role, own, summary_characters, seed, rewrite))
    return reports


# --- one role -------------------------------------------------------------------------


@dataclass(slots=True)
class _Role:
    role: Role
    display: dict[str, str]
    degree: Counter[str]
    limit: int
    rewrite: Rewrite | None = None


def _role_reports(
    role: Role, facts: list[Fact], limit: int, seed: int, rewrite: Rewrite | None = None
) -> list[Report]:
    # Display names: the spelling of the first fact (of this role) that names the entity.
    display: dict[str, str] = {}
    # Connectedness: the number of this role's facts that name the entity.
    degree: Counter[str] = Counter()
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        root = key
        while parent[root] != root:
            root = parent[root]
        while parent[key] != root:
            parent[key], key = root, parent[key]
        return root

    for fact in facts:
        display.setdefault(fact.subject_key, fact.subject)
        parent.setdefault(fact.subject_key, fact.subject_key)
        degree[fact.subject_key] += 1
        other = _other(fact)
        if other is not None:
            display.setdefault(other, fact.object)
            parent.setdefault(other, other)
            if other != fact.subject_key:
                degree[other] += 1
                a, b = find(fact.subject_key), find(other)
                if a != b:
                    parent[max(a, b)] = min(a, b)

    members: dict[str, list[str]] = defaultdict(list)
    for key in parent:
        members[find(key)].append(key)
    component_facts: dict[str, list[Fact]] = defaultdict(list)
    for fact in facts:
        component_facts[find(fact.subject_key)].append(fact)

    state = _Role(role, display, degree, limit, rewrite)
    reports: list[Report] = []
    # Roots are the smallest keys of their components (unions keep the smaller root).
    for root in sorted(members):
        reports.extend(
            _component_reports(state, root, sorted(members[root]), component_facts[root], seed)
        )
    return reports


def _other(fact: Fact) -> str | None:
    """The key of the fact's entity object, None for a value."""
    return fact.object_key if fact.object_kind == "entity" and fact.object_key is not None else None


def _component_reports(
    state: _Role, component: str, keys: list[str], facts: list[Fact], seed: int
) -> list[Report]:
    communities = _communities(keys, facts, seed)
    top = _report(state, 0 if len(communities) == 1 else 1, keys, facts, component, None, ())
    if len(communities) == 1:
        return [top]

    index = {key: n for n, community in enumerate(communities) for key in community}
    community_facts: list[list[Fact]] = [[] for _ in communities]
    for fact in facts:
        here = index[fact.subject_key]
        community_facts[here].append(fact)
        other = _other(fact)
        if other is not None and index[other] != here:
            community_facts[index[other]].append(fact)

    children = [
        _report(state, 0, community, community_facts[n], component, top.id, top.path)
        for n, community in enumerate(communities)
    ]
    children.sort(key=lambda r: r.id)
    return [top, *children]


def _report(
    state: _Role,
    level: int,
    keys: list[str],
    facts: list[Fact],
    component: str,
    parent_id: str | None,
    parent_path: tuple[str, ...],
) -> Report:
    members = set(keys)
    title = _title(sorted(keys, key=lambda k: (-state.degree[k], k))[:TITLE_NAMES], state)
    ordered = sorted(
        range(len(facts)),
        key=lambda n: (
            facts[n].subject_key not in members,
            -state.degree[facts[n].subject_key],
            facts[n].subject_key,
            n,
        ),
    )
    in_order = [facts[n] for n in ordered]
    summary, messages = _summary(in_order, state.limit)
    report = Report(
        id=report_id(state.role, level, keys),
        role=state.role,
        level=level,
        parent_id=parent_id,
        title=title,
        summary=summary,
        path=(*parent_path, title),
        source_messages=messages,
        entity_keys=tuple(sorted(keys)),
        component=component,
    )
    return report if state.rewrite is None else state.rewrite(report, in_order)


def _title(keys: list[str], state: _Role) -> str:
    names = [state.display[k] for k in keys]
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _summary(facts: list[Fact], limit: int) -> tuple[str, tuple[str, ...]]:
    """Whole statements in this order, each added only if the summary stays within the
    limit; one that does not fit is skipped (never cut) and later, shorter ones may still
    go in. A statement already in the summary costs nothing again, and its fact's message
    counts as a source too."""
    parts: list[str] = []
    length = 0
    included: set[str] = set()
    messages: dict[str, None] = {}
    for fact in facts:
        text = fact.statement
        if text not in included:
            joint = "" if not parts else _joint(parts[-1])
            cost = len(joint) + len(text)
            if length + cost > limit:
                continue
            parts.append(joint)
            parts.append(text)
            length += cost
            included.add(text)
        if fact.message_id is not None:
            messages.setdefault(fact.message_id, None)
    return "".join(parts), tuple(messages)


def _joint(previous: str) -> str:
    return _JOIN_AFTER_SENTENCE if previous.rstrip().endswith(_SENTENCE_ENDS) else _JOIN


# --- communities ----------------------------------------------------------------------


def _communities(keys: list[str], facts: list[Fact], seed: int) -> list[list[str]]:
    """The level-0 communities of one connected component (keys sorted), each sorted,
    ordered by their smallest key."""
    if len(keys) <= 3:
        # Louvain, then merging single entities, can only give one community here.
        return [keys]
    # Links between two entities; a fact about itself links nothing (networkx would take
    # such a self-loop for an already grouped community, making the entity stick alone).
    weights: Counter[tuple[str, str]] = Counter()
    for fact in facts:
        other = _other(fact)
        if other is not None and other != fact.subject_key:
            a, b = sorted((fact.subject_key, other))
            weights[(a, b)] += 1
    index = {key: n for n, key in enumerate(keys)}
    # The graph as networkx would hold it: nodes in key order, edges added in sorted order.
    adjacency: list[dict[int, int]] = [{} for _ in keys]
    for (a, b), weight in sorted(weights.items()):
        adjacency[index[a]][index[b]] = weight
        adjacency[index[b]][index[a]] = weight

    found = louvain(adjacency, seed)
    # Louvain may give a community in pieces: each connected piece is a community.
    groups: list[set[int]] = []
    for community in sorted(found, key=min):
        groups.extend(sorted(_pieces(adjacency, community), key=min))

    # A single entity joins the neighbouring community it shares the most facts with
    # (ties: the community with the smallest key); singles are taken in key order.
    where = {node: n for n, group in enumerate(groups) for node in group}
    for n in sorted(range(len(groups)), key=lambda n: min(groups[n])):
        group = groups[n]
        if len(group) != 1:
            continue
        (node,) = group
        shared: Counter[int] = Counter()
        for neighbour, weight in adjacency[node].items():
            if neighbour != node:
                shared[where[neighbour]] += weight
        target = min(shared, key=lambda g: (-shared[g], min(groups[g])))
        groups[target].add(node)
        where[node] = target
        group.clear()
    # Node numbers follow key order, so sorting numbers sorts keys.
    return sorted(([keys[n] for n in sorted(g)] for g in groups if g), key=lambda g: g[0])


def _pieces(adjacency: list[dict[int, int]], nodes: set[int]) -> list[set[int]]:
    """The connected pieces of the graph restricted to these nodes."""
    pieces: list[set[int]] = []
    left = set(nodes)
    while left:
        start = min(left)
        piece = {start}
        stack = [start]
        while stack:
            for other in adjacency[stack.pop()]:
                if other in left and other not in piece:
                    piece.add(other)
                    stack.append(other)
        left -= piece
        pieces.append(piece)
    return pieces


# Louvain stops when a level raises modularity by no more than this (networkx's default).
_THRESHOLD = Fraction(1, 10_000_000)


def louvain(adjacency: list[dict[int, int]], seed: int) -> list[set[int]]:
    """Louvain communities of an undirected graph with integer edge weights.

    The nodes are 0..n-1; `adjacency[u]` maps each neighbour to the weight of the edge
    (a self-loop is `adjacency[u][u]`, given once). This follows networkx 3.6's
    `louvain_communities(G, weight="weight", resolution=1, seed=seed)` step for step
    (same shuffles of the same random generator, same order of trying neighbours, same
    aggregation, same stopping rule) but compares gains exactly, in integers scaled by
    2m² (as networkx PR #8757 began to do): networkx 3.6.1 compares floating-point
    gains that are mathematically equal, and on some small graphs moves a node back and
    forth forever (networkx issue #8739). Here every move raises modularity by a
    positive integer amount, so it always ends.
    """
    # Not for secrets: a seeded, reproducible clustering.
    rng = random.Random(seed)  # nosec B311
    n = len(adjacency)
    members = [{u} for u in range(n)]
    m = sum(w for u in range(n) for v, w in adjacency[u].items() if v >= u)
    if m == 0:
        return members
    graph = adjacency
    modularity = _modularity(graph, [{u} for u in range(n)], m)
    inner, _ = _one_level(graph, m, rng)
    members = _merged(members, inner)
    improved = True
    while improved:
        new_modularity = _modularity(graph, inner, m)
        if new_modularity - modularity <= _THRESHOLD:
            break
        modularity = new_modularity
        graph = _aggregate(graph, inner)
        inner, improved = _one_level(graph, m, rng)
        members = _merged(members, inner)
    return members


def _merged(members: list[set[int]], communities: list[set[int]]) -> list[set[int]]:
    """The original nodes of each community of this level's nodes."""
    return [set().union(*(members[u] for u in community)) for community in communities]


def _modularity(graph: list[dict[int, int]], communities: list[set[int]], m: int) -> Fraction:
    """Modularity (resolution 1) of a partition of the graph's nodes, exactly."""
    total = 0
    for community in communities:
        inside = 0
        degrees = 0
        for u in community:
            for v, w in graph[u].items():
                degrees += 2 * w if v == u else w
                if v >= u and v in community:
                    inside += w
        total += 4 * m * inside - degrees * degrees
    return Fraction(total, 4 * m * m)


def _one_level(
    graph: list[dict[int, int]], m: int, rng: random.Random
) -> tuple[list[set[int]], bool]:
    """Move nodes to neighbouring communities while that raises modularity.

    Gains are networkx's multiplied by 2m²: with integer weights they are exact integers.
    """
    n = len(graph)
    node2com = list(range(n))
    inner = [{u} for u in range(n)]
    degrees = [sum(graph[u].values()) + graph[u].get(u, 0) for u in range(n)]
    totals = list(degrees)
    neighbours = [{v: w for v, w in graph[u].items() if v != u} for u in range(n)]
    order = list(range(n))
    rng.shuffle(order)
    moves = 1
    improved = False
    while moves > 0:
        moves = 0
        for u in order:
            best_gain = 0
            best = here = node2com[u]
            to_community: dict[int, int] = defaultdict(int)
            for v, w in neighbours[u].items():
                to_community[node2com[v]] += w
            degree = degrees[u]
            totals[here] -= degree
            remove = -2 * m * to_community[here] + totals[here] * degree
            for community, w in to_community.items():
                gain = remove + 2 * m * w - totals[community] * degree
                if gain > best_gain:
                    best_gain = gain
                    best = community
            totals[best] += degree
            if best != here:
                inner[here].remove(u)
                inner[best].add(u)
                node2com[u] = best
                moves += 1
                improved = True
    return [c for c in inner if c], improved


def _aggregate(graph: list[dict[int, int]], communities: list[set[int]]) -> list[dict[int, int]]:
    """The graph of the communities: edge weights summed, inner edges become self-loops."""
    node2com = {u: i for i, community in enumerate(communities) for u in community}
    result: list[dict[int, int]] = [{} for _ in communities]
    for u in range(len(graph)):
        for v, w in graph[u].items():
            if v < u:
                continue  # each edge once, from its first end (as networkx lists edges)
            a, b = node2com[u], node2com[v]
            result[a][b] = result[a].get(b, 0) + w
            result[b][a] = result[a][b]
    return result
