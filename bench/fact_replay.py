"""Replay step 1's choice of facts under variants of its path rule (issue 11).

    .venv/bin/python -m bench.fact_replay [FILE] [--limit-conversations N]

FILE defaults to bench/data/dev.json, the only data here whose facts link entities (the
real conversations' facts are observations with value objects: no hop 2). Each
conversation is stored as `taisce bench quality` stores it, through the local gateway
with the local model; each question is recalled once at 16,000 characters with hops 2,
recording step 1's inputs (the candidates, their cosines with the question and with the
question without its names, the names), the reports, and the passages of a second
recall with passages alone (their order depends neither on the facts nor on the budget:
docs/API.md). Each variant then chooses the facts again (domain/fact_ranking.py) and the
bundle is refilled at each budget in step order, whole items until the first that does
not fit or the row limit, and evidence recall any / all is counted as the benchmark
counts it. The first line, the rule as committed, matches `taisce bench quality` on the
same data (within a question: a few answers differ by ties between two stores).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.replay_evidence import BUDGETS, Figures, evidence_recall, figures_line
from taisce.domain import fact_ranking, fact_step
from taisce.domain.budget import fact_characters, item_characters
from taisce.evaluation.dataset import load_dataset
from taisce.evaluation.harness import embedded_run, gateway_run, store_conversation
from taisce.evaluation.quality import ROLES

DEFAULT_FILE = Path("bench/data/dev.json")


@dataclass
class Question:
    id: str
    category: str
    evidence: set[str]
    steps: list[dict[str, Any]]
    reports: list[tuple[int, set[str]]]
    passages: list[tuple[int, set[str]]]


@dataclass
class Capture:
    max_rows: int = 200
    questions: list[Question] = field(default_factory=list)


def capture(path: Path, limit: int | None) -> Capture:
    """Store each conversation and record what each question's replay needs."""
    dataset = load_dataset(str(path))
    calls: list[dict[str, Any]] = []
    ranked = fact_ranking.rank_facts

    def recording(question: str, candidates: Any, similarities: Any, names: Any = (), **kw: Any):
        calls.append(
            {"question": question, "candidates": list(candidates),
             "similarities": similarities, "names": list(names), **kw}
        )  # fmt: skip
        return ranked(question, candidates, similarities, names, **kw)

    out = Capture()
    with embedded_run("taisce-replay-", "local", BUDGETS[-1]), _patched(recording):
        built, state = gateway_run()
        out.max_rows = built.settings.max_rows
        for n, conversation in enumerate(dataset.conversations[:limit], start=1):
            client = state.client(f"replay-{n}")
            dataset_id = {i: m.dataset_id for m, i in store_conversation(client, conversation)}
            state.settle()

            for q in conversation.questions:
                if not q.evidence:
                    continue
                asked = {"question": q.question, "max_characters": BUDGETS[-1],
                         "source_roles": list(ROLES), "hops": 2}  # fmt: skip
                calls.clear()
                status, full, _ = client.post("/v1/recalls", asked)
                assert status == 200, full
                steps = [dict(c) for c in calls]
                status, alone, _ = client.post("/v1/recalls", {**asked, "surfaces": ["passages"]})
                assert status == 200, alone
                for step in steps:
                    step["dataset_id"] = dataset_id
                out.questions.append(
                    Question(
                        q.id,
                        q.category,
                        set(q.evidence),
                        steps,
                        [
                            (
                                item_characters("reports", r),
                                _cited(r.get("source_messages") or (), dataset_id),
                            )
                            for r in full.get("reports") or ()
                        ],
                        [
                            (
                                item_characters("passages", p),
                                _cited([p.get("message_id")], dataset_id),
                            )
                            for p in alone.get("passages") or ()
                        ],
                    )
                )
            print(f"[{n}] {conversation.id}: stored and recalled", file=sys.stderr, flush=True)
    return out


def _cited(ids: Any, dataset_id: Mapping[str, str]) -> set[str]:
    return {dataset_id.get(i, i) for i in ids or () if i}


@contextmanager
def _patched(recording: Callable[..., Any]) -> Iterator[None]:
    original = fact_step.rank_facts
    fact_step.rank_facts = recording  # type: ignore[assignment]
    try:
        yield
    finally:
        fact_step.rank_facts = original  # type: ignore[assignment]


@dataclass(frozen=True)
class Variant:
    name: str
    links: int = fact_ranking.PATH_LINKS
    facts: int = fact_ranking.PATH_FACTS
    # "neutral": the question without its names; "question": its own cosine; None: no paths.
    by: str | None = "neutral"
    # An entity of at most this many facts has them all (fact_ranking.FEW_FACTS).
    few: int = fact_ranking.FEW_FACTS


VARIANTS = (
    Variant("as committed"),
    Variant("no paths", by=None),
    Variant("linked facts by the question's own cosine", by="question"),
    *(Variant(f"{k} links x {m} facts", k, m) for k in (1, 2, 3) for m in (1, 2, 3)),
    *(Variant(f"all facts of an entity of at most {n}", few=n) for n in (0, 1, 2, 3, 5, 8)),
)


def facts_of(step: Mapping[str, Any], variant: Variant) -> list[tuple[int, set[str]]]:
    neutral = step.get("neutral")
    if variant.by is None or neutral is None:
        neutral = None
    elif variant.by == "question":
        sims = step["similarities"] or {}
        neutral = {c.fact.id: sims[c.fact.id] for c in step["candidates"] if c.fact.id in sims}
    saved = fact_ranking.PATH_LINKS, fact_ranking.PATH_FACTS, fact_ranking.FEW_FACTS
    fact_ranking.PATH_LINKS, fact_ranking.PATH_FACTS = variant.links, variant.facts
    fact_ranking.FEW_FACTS = variant.few
    try:
        ranked = fact_ranking.rank_facts(
            step["question"],
            step["candidates"],
            step["similarities"],
            step["names"],
            model=step["model"],
            neutral=neutral,
        )
    finally:
        fact_ranking.PATH_LINKS, fact_ranking.PATH_FACTS, fact_ranking.FEW_FACTS = saved
    ids = step["dataset_id"]
    chosen = []
    for s in ranked:
        fact, message = s.candidate.fact, s.candidate.fact.message_id
        cited = {ids.get(message, message)} if message else set()
        chosen.append((fact_characters(fact, s.candidate.path), cited))
    return chosen


def evaluate(data: Capture, variant: Variant) -> Figures:
    """Evidence any / all per budget, over all questions and per category."""
    return evidence_recall(
        (
            (
                q.category,
                q.evidence,
                [f for step in q.steps for f in facts_of(step, variant)] + q.reports + q.passages,
            )
            for q in data.questions
        ),
        data.max_rows,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--limit-conversations", type=int, default=None)
    args = parser.parse_args(argv)
    if not args.file.exists():
        print(f"{args.file} is absent: nothing to replay", file=sys.stderr)
        return 0
    data = capture(args.file, args.limit_conversations)
    print(f"{args.file}: {len(data.questions)} questions with evidence; any / all at "
          + " / ".join(f"{b:,}" for b in BUDGETS))  # fmt: skip
    for variant in VARIANTS:
        print(figures_line(variant.name, evaluate(data, variant)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
