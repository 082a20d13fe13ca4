"""Recall step 2: similar names, when no name in the question matched exactly. The
question's name-like spans are compared by spelling and by meaning
(domain/similar_names.py), and the entities found give their facts as in step 1."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .fact_step import FactAsk, fill_facts
from .question_vector import Meaning, Question
from .recall_context import RecallContext
from .similar_names import SimilarName, similar_names


@dataclass(frozen=True, slots=True)
class Similar:
    """The entity keys found, most similar first, and the surfaces lost on the way."""

    matched: list[str]
    lost: set[str] = field(default_factory=set)


def similar_step(ctx: RecallContext, meaning: Meaning) -> Similar:
    """Step 2: the entities the question's spans are similar to, and their facts."""
    q = meaning.question
    similar = similar_names(
        ctx.store,
        ctx.project,
        ctx.question,
        ctx.roles,
        embedder=q.embedder,
        index=meaning.index,
        floor=ctx.floors.span,
    )
    lost = {"facts"} if similar.failed and ctx.wants("facts") else set()
    matched = [m.key for m in similar.matches]
    if matched and ctx.wants("facts") and not ctx.bundle.truncated:
        # Ranked as in step 1, by the question with each span that found a name read
        # as that name ("Where is Atlas Moren employed?" asks about Atlas Moran: the
        # misspelling would pull the question's vector away).
        reworded = _reworded(ctx.question, similar.matches)
        if reworded != ctx.question:
            meaning = Meaning(Question(reworded, q.embedder), meaning.index)
        spans = [m.span for m in similar.matches]
        found_by = {m.key: (m.span, m.signal) for m in similar.matches}
        ask = FactAsk(reworded, matched, meaning, "similar_name", spans, found_by)
        fill_facts(ctx, ask)
    return Similar(matched, lost)


def _reworded(question: str, matches: Sequence[SimilarName]) -> str:
    """The question with each span that found a name written as that name."""
    for m in matches:
        question = question.replace(m.span, m.key)
    return question
