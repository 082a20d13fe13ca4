"""An erasure planned a page at a time (domain/erasure.py has the rules): the project's
entities, then its facts, then its messages are read in pages of a bounded size, and
what each page holds about the entity becomes one step. Memory stays that of one page
whatever the project's size, and where the plan stands (`PlanCursor`) is kept in the
pending erasure with each step's counts, so a retry goes on from the page after the
last one applied instead of reading the project again from the start.

A pass reads every page once; if it erased anything another pass follows (a writer
that raced the first may have left something), at most MAX_PASSES per name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from .erasure import MAX_PASSES, Spared, fact_names_it, names_it, redact, subject_hash
from .model import ErasurePlan, Redaction

if TYPE_CHECKING:
    from .ports.projects import ProjectReads

Phase = Literal["entities", "facts", "messages"]

# Page sizes: a page of facts is at most 500 facts (~10 MB at their longest), of
# messages 100 (~40 MB at their longest, with the passages of those naming it), of
# entity keys 1,000 (names only).
ENTITY_PAGE = 1000
FACT_PAGE = 500
MESSAGE_PAGE = 100


@dataclass(frozen=True, slots=True)
class PlanCursor:
    """Where a paged erasure stands: the name (index into the erasure's names), its
    pass, the phase and the store's position in it (None: from the start). `entities`
    are the keys the pass found naming it (every later step carries them, so that
    deleting a fact leaves their name counts alone); `found` whether the pass erased
    anything (then another pass follows)."""

    name: int = 0
    run: int = 0
    phase: Phase = "entities"
    after: str | None = None
    entities: tuple[str, ...] = ()
    found: bool = False

    def dumps(self) -> str:
        return json.dumps(
            [self.name, self.run, self.phase, self.after, list(self.entities), self.found]
        )

    @staticmethod
    def loads(text: str | None) -> PlanCursor:
        if not text:
            return PlanCursor()
        name, run, phase, after, entities, found = json.loads(text)
        return PlanCursor(name, run, phase, after, tuple(entities), found)


@dataclass(frozen=True, slots=True)
class PlannedPage:
    """One page's step (None: the page holds nothing about the entity), whether its
    counts include the entities, and the cursor after it (None: every name done)."""

    step: ErasurePlan | None
    counts_entities: bool
    after: PlanCursor | None


def _next_phase(cursor: PlanCursor, names: int) -> PlanCursor | None:
    """The cursor once the current phase has read its last page."""
    if cursor.phase == "entities":
        return replace(cursor, phase="facts", after=None)
    if cursor.phase == "facts":
        return replace(cursor, phase="messages", after=None)
    if cursor.found and cursor.run + 1 < MAX_PASSES:
        return PlanCursor(cursor.name, cursor.run + 1)
    if cursor.name + 1 < names:
        return PlanCursor(cursor.name + 1)
    return None


def _entities_page(
    store: ProjectReads, project: str, key: str, cursor: PlanCursor, spared: Spared
) -> tuple[ErasurePlan | None, PlanCursor]:
    keys, after = store.entity_key_page(project, cursor.after, ENTITY_PAGE)
    entities = cursor.entities + tuple(k for k in keys if names_it(k, key, spared))
    moved = replace(cursor, entities=entities, after=after)
    if after is None and entities:
        # Erased in a step of their own, counted there once.
        return ErasurePlan(subject_hash(project, key), entity_keys=entities), moved
    return None, moved


def _facts_page(
    store: ProjectReads, project: str, key: str, cursor: PlanCursor, spared: Spared
) -> tuple[ErasurePlan | None, PlanCursor]:
    facts, after = store.fact_page(project, cursor.after, FACT_PAGE)
    ids = tuple(f.id for f in facts if fact_names_it(f, key, spared))
    moved = replace(cursor, after=after)
    if not ids:
        return None, moved
    return ErasurePlan(subject_hash(project, key), fact_ids=ids, entity_keys=cursor.entities), moved


def _messages_page(
    store: ProjectReads, project: str, key: str, cursor: PlanCursor, spared: Spared
) -> tuple[ErasurePlan | None, PlanCursor]:
    messages, after = store.message_page_of_project(project, cursor.after, MESSAGE_PAGE)
    named = [
        m for m in messages if names_it(m.content, key, spared) or names_it(m.source, key, spared)
    ]
    passages = store.passages_of_messages(project, [m.id for m in named]) if named else {}
    found = [redact(m, passages[m.id], key, spared) for m in named]
    redactions = tuple(r for r in found if isinstance(r, Redaction))
    moved = replace(cursor, after=after)
    if not redactions:
        return None, moved
    tombstone = subject_hash(project, key)
    return ErasurePlan(tombstone, entity_keys=cursor.entities, redactions=redactions), moved


_PHASES = {"entities": _entities_page, "facts": _facts_page, "messages": _messages_page}


def plan_page(
    store: ProjectReads,
    project: str,
    names: tuple[str, ...],
    cursor: PlanCursor,
    spared: Spared = (),
) -> PlannedPage:
    """Read the page at `cursor` and plan what it holds about the name it is at (but
    for what only `spared` names hold)."""
    step, moved = _PHASES[cursor.phase](store, project, names[cursor.name], cursor, spared)
    if step is not None:
        moved = replace(moved, found=True)
    following = moved if moved.after is not None else _next_phase(moved, len(names))
    return PlannedPage(step, cursor.phase == "entities", following)
