"""Recall step 1 (and step 2's facts): the names in the question, then the matched
entities' facts that bear on it and, with hops 2, the facts of the entities they link
to, ranked together (domain/fact_ranking.py) and added to the bundle in order until it
closes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .budget import fact_characters
from .fact_ranking import (
    Candidate,
    Scored,
    asked_words,
    fact_text,
    neutral_question,
    rank_facts,
)
from .languages import reads_as_english
from .model import Fact
from .names import QuestionNames
from .question_vector import Meaning, Question
from .recall_context import RecallContext
from .recalled import (
    FactWhy,
    NameSignal,
    RecalledFact,
)
from .words import words

# Facts read per hop as candidates for the ranking: bounds a recall's work however
# much the memory knows about the matched entities (storing order: the oldest first).
FACT_POOL = 256


@dataclass(frozen=True, slots=True)
class Names:
    """The entities the question names exactly (keys, in the question's order), and
    what it said of them: the keys and the names as written (an alias too), which are
    not asked words."""

    matched: list[str]
    said: list[str]


@dataclass(frozen=True, slots=True)
class FactAsk:
    """What a step asks facts for: the question as it ranks them (step 2 writes each
    misspelt span as the name it found), the matched entity keys, the question's
    meaning (None: words alone), the step `why` names, and the names the question
    said besides the keys."""

    question: str
    matched: list[str]
    meaning: Meaning | None
    step: Literal["exact_name", "similar_name"] = "exact_name"
    names: Sequence[str] = ()
    # Step 2: each matched key's span of the question and signal (for `explain`).
    found_by: Mapping[str, tuple[str, NameSignal]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Pool:
    """The candidate facts of one ask, and the question without its names for the
    paths' facts (None: their words order them)."""

    candidates: list[Candidate]
    neutral_q: Question | None = None


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


def exact_names(ctx: RecallContext) -> Names:
    """The names in the question, resolved through aliases by the store. Only names
    that facts of the asked roles use count: what was not asked for cannot shape the
    answer (a tool's longer name cannot hide the user's). An alias found in the
    question stands for its entity (domain/aliases.py)."""
    names = QuestionNames(ctx.question)
    found = ctx.store.resolve_names(ctx.project, names.keys(), ctx.roles)
    picked = names.matches(found)
    matched = list(dict.fromkeys(found[k] for k in picked))
    return Names(matched, [*matched, *picked])


def fill_facts(ctx: RecallContext, ask: FactAsk) -> None:
    """Fill the bundle with the matched entities' facts that bear on the question
    (domain/fact_ranking.py). If the model or the index fails, words alone rank them,
    and `degraded` does not list facts: step 1 ran (as without a model). Every fact
    read (each passed the roles and filters) is put in the context's `read`."""
    said = [*ask.matched, *ask.names]
    pool = _candidates(ctx, ask, said)
    if not pool.candidates:
        return
    similarities, neutral = _similarities(ctx, ask.meaning, pool)
    english = reads_as_english(ask.question, said)
    ranked = rank_facts(
        ask.question,
        pool.candidates,
        similarities,
        said,
        model=ask.meaning is not None,
        neutral=neutral,
        explain=bool(ctx.controls.explain),  # None: not sent, so no `why`
        readable=ctx.any_language or english,
        floors=ctx.floors,
        floored=english,
    )
    _add(ctx, ask, ranked)


def _candidates(ctx: RecallContext, ask: FactAsk, said: list[str]) -> _Pool:
    """Hop 1's facts, then with hops 2 those of the entities they link to. A fact the
    filters hide is neither a candidate nor walked, nor counted in the word
    statistics: only hop-1 facts that passed them name the entities of hop 2."""
    hop1 = list(
        ctx.store.facts_about(
            ctx.project, ask.matched, ctx.roles, limit=FACT_POOL, filters=ctx.filters
        )
    )
    ctx.read.update((f.id, f) for f in hop1)
    first = {key: i for i, key in enumerate(ask.matched)}
    candidates = [Candidate(f, 1, (), _reached_through(f, first)) for f in hop1]
    if ctx.controls.hops < 2:
        return _Pool(candidates)
    links = _neighbours(hop1, set(ask.matched))
    if not links:
        return _Pool(candidates)
    neutral_q = _neutral_question(ask, said)
    order = {key: i for i, key in enumerate(links)}
    hop2 = ctx.store.facts_about(
        ctx.project,
        list(links),
        ctx.roles,
        limit=FACT_POOL,
        exclude={f.id for f in hop1},
        filters=ctx.filters,
    )
    for fact in hop2:
        ctx.read[fact.id] = fact
        linked = _reached_through(fact, order)
        link = links[linked]
        candidates.append(Candidate(fact, 2, link.path, link.matched, linked))
    return _Pool(candidates, neutral_q)


def _neutral_question(ask: FactAsk, said: list[str]) -> Question | None:
    """For the paths: the question without its names. A model across the network is
    asked now, beside the hop-2 read; a local one only if hop 2 finds facts."""
    meaning = ask.meaning
    if meaning is None or not asked_words(ask.question, said):
        return None
    return Question(
        neutral_question(ask.question, said),
        meaning.question.embedder,
        early=meaning.question.early,
    )


def _similarities(
    ctx: RecallContext, meaning: Meaning | None, pool: _Pool
) -> tuple[dict[str, float] | None, dict[str, float] | None]:
    """Each candidate's cosine with the question (None without a model or if it
    failed), and the paths' facts' with the question without its names (None: their
    words order them)."""
    if meaning is None:
        return None, None
    similarities = meaning.similarities(ctx.project, "fact", [c.fact.id for c in pool.candidates])
    at_hop2 = [c.fact.id for c in pool.candidates if c.hop == 2]
    if not at_hop2 or similarities is None or pool.neutral_q is None:
        return similarities, None
    # If that fails, their words order them.
    return similarities, meaning.similarities(ctx.project, "fact", at_hop2, pool.neutral_q) or {}


def _shared_words(question: str, fact: Fact, matched: str) -> tuple[str, ...]:
    """The question's words the fact holds, once each, in question order, but for the
    matched name's (for `explain`'s reason)."""
    held = set(words(fact_text(fact))) - set(words(matched))
    return tuple(w for w in dict.fromkeys(words(question)) if w in held)


def _add(ctx: RecallContext, ask: FactAsk, ranked: Sequence[Scored]) -> None:
    """The ranked facts into the bundle, in order, until it closes."""
    for scored in ranked:
        c = scored.candidate
        why = None
        if ctx.controls.explain:
            asked_as, signal = ask.found_by.get(c.matched, (None, None))
            why = FactWhy(
                ask.step,
                c.matched,
                c.hop,
                scored.words,
                scored.similarity,
                scored.score,
                scored.path,
                scored.neutral,
                _shared_words(ctx.question, c.fact, c.matched),
                asked_as,
                signal,
                scored.few,
            )
        item = RecalledFact(c.fact, c.path, why)
        if not ctx.bundle.add("facts", item, fact_characters(c.fact, c.path)):
            break
