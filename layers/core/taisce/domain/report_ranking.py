"""Recall step 3: which reports come back, and in what order.

Two cases (docs/API.md, "Step 3, reports"):

- Nothing matched: the candidates are the `REPORT_DEPTH` reports nearest the question
  by vector and the `REPORT_DEPTH` best by BM25 over the report text index (title and
  summary), of the asked roles, that the store still holds. The `REPORTS` best by score
  come back, each with a cosine of at least `REPORT_FLOOR` (a report not yet embedded,
  or every report when the model failed: at least one of the question's words).
- `themes` with a matched name: the matched entities' reports (level 0) and their
  ancestors; all of them come back, best first, each preceded by its ancestors not yet
  given (a parent comes before its children, at the place of its best descendant).

Scores are those of facts (domain/fact_ranking.py): words, BM25 of the question's words
(less the matched names') over the candidates' title and summary, with document
frequencies from the candidates only, normalised to at most 1; meaning, the report's
cosine with the question where it has a vector; score = `MEANING` x cosine +
(1 - `MEANING`) x words, words alone without a vector. Ties go to the earlier candidate
(the hierarchy's order for themes, report id otherwise). Nothing here depends on the
budget, so a smaller budget returns a prefix of a larger one's reports.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from .fact_ranking import asked_words, word_scores
from .floors import MINILM_FLOORS
from .model import Report
from .recalled import ReportWhy
from .words import words

# At most this many reports come back when no name matched.
REPORTS = 5
# Depth of each of the two rankings (vector, text) that give the candidates.
REPORT_DEPTH = 20
# Cosine a report must reach with the question to come back when nothing matched
# (MiniLM's; another model brings its own: domain/floors.py).
REPORT_FLOOR = MINILM_FLOORS.report
# Weight of meaning against words when a report has a vector.
MEANING = 0.5


@dataclass(frozen=True, slots=True)
class ScoredReport:
    report: Report
    words: float
    similarity: float | None
    score: float
    # The matched name's key the report was reached through (themes), else None.
    matched: str | None = None

    def why(self) -> ReportWhy:
        """The `why` of an explained recall: the signals that chose it."""
        return ReportWhy(self.matched, self.words, self.similarity, self.score)


def report_text(report: Report) -> str:
    """What a report's words are drawn from (the text its vector was made from)."""
    return f"{report.title}. {report.summary}"


def score_reports(
    question: str,
    reports: Sequence[Report],
    similarities: Mapping[str, float] | None,
    names: Collection[str] = (),
    matched: Mapping[str, str] | None = None,
) -> list[ScoredReport]:
    """The reports scored against the question, best first; ties keep the given order.
    `similarities` maps report ids to their cosine with the question (None: no model);
    `names` are the matched names, whose words are not asked."""
    asked = asked_words(question, names)
    lexical = word_scores(asked, [words(report_text(r)) for r in reports])
    scored: list[tuple[float, int, ScoredReport]] = []
    for position, (report, w) in enumerate(zip(reports, lexical, strict=True)):
        sim = similarities.get(report.id) if similarities is not None else None
        score = w if sim is None else MEANING * sim + (1 - MEANING) * w
        reached = matched.get(report.id) if matched is not None else None
        scored.append((-score, position, ScoredReport(report, w, sim, score, reached)))
    scored.sort(key=lambda s: s[:2])
    return [s[2] for s in scored]


def nearest_reports(
    question: str,
    candidates: Sequence[Report],
    similarities: Mapping[str, float] | None,
    floor: float = REPORT_FLOOR,
) -> list[ScoredReport]:
    """Step 3 when nothing matched: the `REPORTS` best candidates that reach the floor.
    Candidates are taken in id order first, so that ties never depend on which search
    found a report first."""
    ordered = sorted({r.id: r for r in candidates}.values(), key=lambda r: r.id)
    kept = [
        s
        for s in score_reports(question, ordered, similarities)
        if (s.similarity >= floor if s.similarity is not None else s.words > 0)
    ]
    return kept[:REPORTS]


def themed_reports(
    question: str,
    hierarchy: Sequence[Report],
    matched: Mapping[str, str],
    similarities: Mapping[str, float] | None,
    names: Collection[str],
) -> list[ScoredReport]:
    """Step 3 with `themes`: every report of `hierarchy` (the matched entities' reports,
    each after its ancestors), best first, each preceded by its ancestors not yet given."""
    scored = score_reports(question, hierarchy, similarities, names, matched)
    by_id = {s.report.id: s for s in scored}
    given: dict[str, ScoredReport] = {}
    for s in scored:
        chain: list[ScoredReport] = []
        at: ScoredReport | None = s
        while at is not None and at.report.id not in given:
            chain.append(at)
            parent = at.report.parent_id
            at = by_id.get(parent) if parent is not None else None
        for item in reversed(chain):
            given[item.report.id] = item
    return list(given.values())


def hierarchy_of(
    matched: Sequence[str],
    of_entity: Callable[[str], Sequence[Report]],
    by_ids: Callable[[Sequence[str]], Sequence[Report]],
) -> tuple[list[Report], dict[str, str]]:
    """The reports of the matched entities, each after its ancestors (top down), and the
    matched key each was first reached through."""
    ordered: dict[str, Report] = {}
    reached: dict[str, str] = {}
    for key in matched:
        for report in of_entity(key):
            chain = [report]
            parent = report.parent_id
            while parent and parent not in ordered:
                found = by_ids([parent])
                if not found:
                    break
                chain.append(found[0])
                parent = found[0].parent_id
            for r in reversed(chain):
                ordered.setdefault(r.id, r)
                reached.setdefault(r.id, key)
    return list(ordered.values()), reached
