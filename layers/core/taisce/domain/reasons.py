"""`explain`'s `reason`: each `why` in one line of plain words, beside its numbers.

Made from the `why` records alone (and, for a fact, the question's words it shares),
so a reason never says more than the numbers do. Not counted against the budget.
"""

from __future__ import annotations

from .recalled import FactWhy, PassageWhy, ReportWhy

# How step 2 found a name, as the reason says it (domain/similar_names.py).
_HOW = {
    "spelling": " (spelt alike)",
    "meaning": " (close in meaning)",
    "part": " (a part of the name)",
    "case": " (a case form)",
}


def _quoted(words: tuple[str, ...]) -> str:
    return ", ".join(f"'{w}'" for w in words)


def _meaning(similarity: float | None) -> str | None:
    return None if similarity is None else f"close in meaning ({similarity:.2f})"


def fact_reason(why: FactWhy) -> str:
    """ "named Atlas exactly; words 'work', 'manager' matched"."""
    if why.step == "exact_name":
        named = f"named {why.matched} exactly"
    else:
        named = f"a name like {why.matched}"
        if why.asked_as is not None:
            named += f", asked as '{why.asked_as}'{_HOW.get(why.signal or '', '')}"
    if why.hop == 2:
        named += ", one link away"
    parts = [named]
    if why.shared:
        noun = "word" if len(why.shared) == 1 else "words"
        parts.append(f"{noun} {_quoted(why.shared)} matched")
    meaning = _meaning(why.similarity)
    if meaning is not None:
        parts.append(meaning)
    if why.few:
        parts.append(f"{why.matched} has few facts: all come back")
    return "; ".join(parts)


def report_reason(why: ReportWhy) -> str:
    parts = [f"a report on {why.matched}" if why.matched else "a report near the question"]
    if why.words > 0:
        parts.append(f"holds {why.words:.0%} of what is asked")
    meaning = _meaning(why.similarity)
    if meaning is not None:
        parts.append(meaning)
    return "; ".join(parts)


def passage_reason(why: PassageWhy) -> str:
    parts: list[str] = []
    if why.vector_rank is not None:
        parts.append(f"close in meaning (#{why.vector_rank})")
    if why.word_rank is not None:
        parts.append(f"shares words with the question (#{why.word_rank})")
    if why.topic_rank is not None:
        parts.append(f"close in meaning to what is asked, names aside (#{why.topic_rank})")
    if why.fact_rank is not None:
        parts.append(f"its message is cited by a fact near the question (#{why.fact_rank})")
    if why.neighbour_share is not None:
        parts.append("the message before it is related")
    if why.time_factor is not None:
        parts.append("from the time asked" if why.time_factor >= 1 else "outside the time asked")
    if why.cited_share is not None:
        parts.append(f"a fact above cites its message (kept {why.cited_share:.0%} of its score)")
    if why.diversity_shift is not None:
        places = abs(why.diversity_shift)
        where = f"{places} place{'s' if places > 1 else ''}"
        where += " later" if why.diversity_shift > 0 else " earlier"
        parts.append(f"moved {where} so that the first passages say different things")
    return "; ".join(parts) or "a passage near the question"
