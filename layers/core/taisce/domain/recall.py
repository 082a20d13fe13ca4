"""Recall: the steps that fill one budgeted bundle from memory.

Step 1 finds exact entity names in the question and follows links for up to two
hops. Steps 2-4 (similar names, reports, passages) need an embedding model; when
none is configured they do not run and `degraded` names the surfaces lost.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ports import Store
from .budget import Bundle, fact_characters
from .controls import RecallControls
from .model import Fact
from .names import candidate_spans, pick_matches

SEMANTIC_SURFACES = ("reports", "passages")


@dataclass(frozen=True, slots=True)
class _Link:
    """How a hop-2 entity was reached: the names walked from the matched one."""

    path: tuple[str, ...]


def _neighbours(hop1: list[Fact], matched: set[str]) -> dict[str, _Link]:
    """Entities one link away from the matched names, in the order first reached."""
    links: dict[str, _Link] = {}
    for fact in hop1:
        if fact.subject_key in matched and fact.object_key and fact.object_key not in matched:
            links.setdefault(fact.object_key, _Link((fact.subject, fact.object)))
        elif fact.object_key in matched and fact.subject_key not in matched:
            links.setdefault(fact.subject_key, _Link((fact.object, fact.subject)))
    return links


def _reached_through(fact: Fact, order: dict[str, int]) -> str:
    ends = [k for k in (fact.subject_key, fact.object_key) if k in order]
    return min(ends, key=order.__getitem__)


def _fill_facts(
    store: Store, project: str, matched: list[str], controls: RecallControls, bundle: Bundle
) -> None:
    roles = controls.source_roles
    hop1: list[Fact] = []
    for fact in store.facts_about(project, matched, roles, limit=controls.max_rows + 1):
        if not bundle.add("facts", fact.wire(), fact_characters(fact)):
            return  # closed: nothing more is read
        hop1.append(fact)
    if controls.hops < 2:
        return
    links = _neighbours(hop1, set(matched))
    if not links:
        return
    order = {key: i for i, key in enumerate(links)}
    hop2 = store.facts_about(
        project,
        list(links),
        roles,
        limit=controls.max_rows + 1 - bundle.rows,
        exclude={f.id for f in hop1},
    )
    for fact in hop2:
        path = links[_reached_through(fact, order)].path
        item = fact.wire()
        item["path"] = list(path)
        if not bundle.add("facts", item, fact_characters(fact, path)):
            return


def recall(
    store: Store, project: str, question: str, controls: RecallControls, *, embeddings: bool
) -> dict[str, object]:
    bundle = Bundle(controls.max_characters, controls.max_rows)
    spans = candidate_spans(question)
    matched = pick_matches(spans, store.known_names(project, {s.key for s in spans}))
    if matched and "facts" in controls.surfaces:
        _fill_facts(store, project, matched, controls, bundle)
    degraded = [] if embeddings else [s for s in controls.surfaces if s in SEMANTIC_SURFACES]
    return {
        "controls": controls.echo(),
        "characters": bundle.characters,
        "truncated": bundle.truncated,
        "degraded": degraded,
        **bundle.items,
    }
