"""Recall step 1 (and step 2's facts): the matched entities' facts that bear on the
question, then, with hops 2, the facts of the entities they link to, ranked together
(domain/fact_ranking.py) and added to the bundle in order until it closes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .budget import Bundle, fact_characters
from .controls import RecallControls
from .fact_ranking import (
    Candidate,
    asked_words,
    neutral_question,
    rank_facts,
)
from .filters import FactFilter
from .model import Fact
from .ports.facts import FactStore
from .question_vector import Meaning, Question
from .recalled import (
    FactWhy,
    RecalledFact,
)

# Facts read per hop as candidates for the ranking: bounds a recall's work however
# much the memory knows about the matched entities (storing order: the oldest first).
FACT_POOL = 256


@dataclass(frozen=True, slots=True)
class _Link:
    """How a hop-2 entity was reached: the names walked from the matched one, and
    the matched entity's key."""

    path: tuple[str, ...]
    matched: str


def _neighbours(hop1: list[Fact], matched: set[str]) -> dict[str, _Link]:
    """Entities one link away from the matched names, in the order first reached."""
    links: dict[str, _Link] = {}
    for fact in hop1:
        if fact.subject_key in matched and fact.object_key and fact.object_key not in matched:
            links.setdefault(fact.object_key, _Link((fact.subject, fact.object), fact.subject_key))
        elif fact.object_key in matched and fact.subject_key not in matched:
            links.setdefault(
                fact.subject_key, _Link((fact.object, fact.subject), str(fact.object_key))
            )
    return links


def _reached_through(fact: Fact, order: dict[str, int]) -> str:
    """The end of the fact that `order` ranks first (the subject on a tie): the walk
    reached the fact through it. Every candidate has an end in `order`. Written out,
    not as min() over a list: a recall asks this of every candidate it reads."""
    subject = order.get(fact.subject_key)
    object_key = fact.object_key
    if object_key is not None:
        other = order.get(object_key)
        if other is not None and (subject is None or other < subject):
            return object_key
    if subject is None:
        raise ValueError(f"fact {fact.id} has no end in the walk")
    return fact.subject_key


def fill_facts(
    store: FactStore,
    project: str,
    question: str,
    matched: list[str],
    controls: RecallControls,
    bundle: Bundle,
    filters: FactFilter,
    meaning: Meaning | None,
    step: Literal["exact_name", "similar_name"] = "exact_name",
    names: Sequence[str] = (),
    read: dict[str, Fact] | None = None,
) -> None:
    """Fill the bundle with the matched entities' facts that bear on the question
    (domain/fact_ranking.py). If the model or the index fails, words alone rank them,
    and `degraded` does not list facts: step 1 ran (as without a model). Every fact
    read (each passed the roles and filters) is put in `read` if given."""
    # A fact the filters hide is neither a candidate nor walked, nor counted in the
    # word statistics: only hop-1 facts that passed them name the entities of hop 2.
    roles = controls.source_roles
    hop1 = list(store.facts_about(project, matched, roles, limit=FACT_POOL, filters=filters))
    if read is not None:
        read.update((f.id, f) for f in hop1)
    first = {key: i for i, key in enumerate(matched)}
    candidates = [Candidate(f, 1, (), _reached_through(f, first)) for f in hop1]
    said = [*matched, *names]
    neutral_q: Question | None = None
    if controls.hops >= 2:
        links = _neighbours(hop1, set(matched))
        if links:
            if meaning is not None and asked_words(question, said):
                # For the paths: the question without its names. A model across the
                # network is asked now, beside the hop-2 read; a local one only if
                # hop 2 finds facts.
                neutral_q = Question(
                    neutral_question(question, said),
                    meaning.question.embedder,
                    early=meaning.question.early,
                )
            order = {key: i for i, key in enumerate(links)}
            hop2 = store.facts_about(
                project,
                list(links),
                roles,
                limit=FACT_POOL,
                exclude={f.id for f in hop1},
                filters=filters,
            )
            for fact in hop2:
                if read is not None:
                    read[fact.id] = fact
                linked = _reached_through(fact, order)
                link = links[linked]
                candidates.append(Candidate(fact, 2, link.path, link.matched, linked))
    if not candidates:
        return
    similarities: dict[str, float] | None = None
    neutral: dict[str, float] | None = None
    if meaning is not None:
        similarities = meaning.similarities(project, "fact", [c.fact.id for c in candidates])
        at_hop2 = [c.fact.id for c in candidates if c.hop == 2]
        if at_hop2 and similarities is not None and neutral_q is not None:
            # The paths' facts, by the question with its names taken out; if that
            # fails, their words order them.
            neutral = meaning.similarities(project, "fact", at_hop2, neutral_q) or {}
    ranked = rank_facts(
        question,
        candidates,
        similarities,
        said,
        model=meaning is not None,
        neutral=neutral,
        explain=controls.explain,
    )
    for scored in ranked:
        c = scored.candidate
        why = None
        if controls.explain:
            why = FactWhy(
                step,
                c.matched,
                c.hop,
                scored.words,
                scored.similarity,
                scored.score,
                scored.path,
                scored.neutral,
            )
        item = RecalledFact(c.fact, c.path, why)
        if not bundle.add("facts", item, fact_characters(c.fact, c.path)):
            break
