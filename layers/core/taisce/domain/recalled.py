"""What a recall answers: the controls it used, the budget it spent, and the facts,
reports and passages it recalled, each with how it was found (`why`, with `explain`).

The records only: api/bodies.py makes the HTTP body of them (rounding the signals).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

from .controls import RecallControls
from .model import Fact, Passage, Report, Surface

# How step 2 found a name like one the question wrote (domain/similar_names.py).
NameSignal = Literal["spelling", "meaning", "part", "case"]


@dataclass(frozen=True, slots=True)
class FactWhy:
    """How a fact was found: the step, the matched name it was reached through, its
    hop and the signals it was ranked by. `path`: kept on a path (hops 2), where a
    hop-2 fact also carries its cosine with the question without its names."""

    step: Literal["exact_name", "similar_name"]
    matched: str
    hop: int
    words: float
    similarity: float | None
    score: float
    path: bool = False
    neutral_similarity: float | None = None
    # The question's words (compared forms) the fact holds, but for the matched name's.
    shared: tuple[str, ...] = ()
    # Step 2: the question's words that found the name, and how (similar_names.py).
    asked_as: str | None = None
    signal: NameSignal | None = None
    # One of the few facts of its entity, all of which come back (fact_ranking.FEW_FACTS).
    few: bool = False


@dataclass(frozen=True, slots=True)
class ReportWhy:
    """How a report was found: with themes, the matched name it was reached through."""

    matched: str | None
    words: float
    similarity: float | None
    score: float


@dataclass(frozen=True, slots=True)
class PassageWhy:
    """How a passage was found: its ranks (None: not there) and the factors of its
    fused score (None: none applied)."""

    vector_rank: int | None
    word_rank: int | None
    fact_rank: int | None
    # Its rank by the question without its written names (domain/question_topic.py);
    # None if not there, or the question writes no name (that ranking is the first).
    topic_rank: int | None
    message_share: float | None
    neighbour_share: float | None
    time_factor: float | None
    # The share of its fused score kept because a fact in the bundle cites its message
    # (passage_step.py, CITED_SHARE); None if none does.
    cited_share: float | None = None
    # The places the diverse head moved it (domain/diversity.py): positive later,
    # negative earlier; None if it kept its place.
    diversity_shift: int | None = None


# Plain tuples, not frozen dataclasses: a recall makes up to max_rows (200) of them.


class RecalledFact(NamedTuple):
    fact: Fact
    # Hop-2 facts only: the names walked, from the matched name to the subject.
    path: tuple[str, ...] = ()
    why: FactWhy | None = None


class RecalledReport(NamedTuple):
    report: Report
    why: ReportWhy | None = None


class RecalledPassage(NamedTuple):
    passage: Passage
    why: PassageWhy | None = None


@dataclass(frozen=True, slots=True)
class RecallAnswer:
    controls: RecallControls
    # Code points counted against the budget (domain/budget.py).
    characters: int
    truncated: bool
    # The surfaces in effect that could not run (a model or index failed, or none).
    degraded: list[Surface]
    facts: list[RecalledFact]
    reports: list[RecalledReport]
    passages: list[RecalledPassage]
