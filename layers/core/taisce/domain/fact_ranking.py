"""Which facts of the matched entities bear on the question, and in what order.

The candidates are a bounded pool of the matched entities' facts (hop 1, and hop 2
when asked), all of which passed the recall's roles and filters. Each is scored
against the question by

- words: BM25 (k1 1.2, b 0.75) of the question's words, less the matched names' own
  words, over the fact's subject, predicate, object, statement, quote and context,
  with document frequencies from the visible pool only; divided by the score a fact
  of average length holding each of those words once would get, and capped at 1, so
  it reads as "how much of what is asked this fact holds";
- meaning: the cosine of the fact's statement vector with the question's, when the
  fact has one (a fact not yet embedded competes by words alone);
- hop: a fact reached at hop 2 counts `HOP2` of its score.

score = MEANING * cosine + (1 - MEANING) * words (words alone without a vector), times
the hop factor. A fact is kept when its score reaches `FLOOR` and `RELATIVE` of the
best candidate's; the kept facts go best first (ties: hop, then storing order). The
pool, the scores and so the order never depend on the budget, so a smaller budget
returns a prefix. The constants were chosen on real conversations (README, quality).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from .model import Fact
from .words import words

K1 = 1.2
B = 0.75
# Weight of meaning against words when a fact has a vector.
MEANING = 0.5
# Share of its score a fact reached at hop 2 keeps.
HOP2 = 0.9
# A fact must reach this score, and this share of the best candidate's score.
FLOOR = 0.6
WORDS_FLOOR = 0.3
RELATIVE = 0.0
# At most this many facts are kept (0: no cap).
MAX_FACTS = 2


# Words that ask without saying what about.
_ASKING = frozenset(
    words("tell know remember recall anything everything something thing things stuff")
)


@dataclass(frozen=True, slots=True)
class Candidate:
    fact: Fact
    hop: int
    # Names walked from the matched one to a hop-2 fact (empty at hop 1).
    path: tuple[str, ...]
    # The matched entity's key the fact was reached through.
    matched: str


@dataclass(frozen=True, slots=True)
class Scored:
    candidate: Candidate
    words: float
    similarity: float | None
    score: float


def fact_text(fact: Fact) -> str:
    """What the words of a fact are drawn from."""
    return " ".join(
        t
        for t in (
            fact.subject,
            fact.predicate,
            fact.object,
            fact.statement,
            fact.quote,
            fact.context,
        )
        if t
    )


def word_scores(question: Sequence[str], documents: Sequence[Sequence[str]]) -> list[float]:
    """BM25 of each document for the question's words, over these documents only,
    divided by what an average-length document holding each matched word once scores
    (at most 1; 0 when no question word occurs in any document)."""
    n = len(documents)
    terms = list(dict.fromkeys(question))
    if not n or not terms:
        return [0.0] * n
    # Only the asked words' counts matter: list.count per asked word is cheaper than
    # counting every word of every document.
    counts = [{t: c for t in terms if (c := d.count(t))} for d in documents]
    lengths = [len(d) for d in documents]
    average = sum(lengths) / n or 1.0
    df = {t: sum(1 for c in counts if t in c) for t in terms}
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms if df[t]}
    ideal = sum(idf.values())
    if ideal <= 0:
        return [0.0] * n
    scores: list[float] = []
    for c, length in zip(counts, lengths, strict=True):
        norm = K1 * (1 - B + B * length / average)
        s = 0.0
        for t, weight in idf.items():
            tf = c.get(t, 0)
            if tf:
                s += weight * tf * (K1 + 1) / (tf + norm)
        scores.append(min(1.0, s / ideal))
    return scores


def rank_facts(
    question: str,
    candidates: Sequence[Candidate],
    similarities: Mapping[str, float] | None,
    names: Collection[str] = (),
) -> list[Scored]:
    """The candidates that bear on the question, best first (see the module's rule).
    `similarities` maps fact ids to their cosine with the question (None: no model);
    `names` are the matched entities' names, whose words do not count as asked."""
    name_words = {w for name in names for w in words(name)}
    asked = [w for w in words(question) if w not in name_words and w not in _ASKING]
    if not asked:
        # The question asks about the entities as a whole ("Tell me about Atlas"): every
        # candidate bears on it, hop 1 first, each hop in storing order.
        return [
            Scored(c, 1.0, None, 1.0)
            for c in sorted(candidates, key=lambda c: c.hop)  # stable: storing order
        ]
    lexical = word_scores(asked, [words(fact_text(c.fact)) for c in candidates])
    scored: list[tuple[float, int, int, Scored]] = []
    for position, (candidate, w) in enumerate(zip(candidates, lexical, strict=True)):
        sim = similarities.get(candidate.fact.id) if similarities is not None else None
        base = w if sim is None else MEANING * sim + (1 - MEANING) * w
        score = base * (HOP2 if candidate.hop > 1 else 1.0)
        scored.append((-score, candidate.hop, position, Scored(candidate, w, sim, score)))
    scored.sort(key=lambda s: s[:3])
    ranked = [s[3] for s in scored]
    if not ranked:
        return []
    floor = FLOOR if similarities is not None else WORDS_FLOOR
    floor = max(floor, RELATIVE * ranked[0].score)
    kept = [s for s in ranked if s.score >= floor]
    return kept[:MAX_FACTS] if MAX_FACTS else kept
