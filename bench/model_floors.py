"""Cosine floors for another embedding model, matched to the shipped model's on real data.

    .venv/bin/python -m bench.model_floors [--data FILE] [--model multilingual]

`--data`: a quality dataset with facts (default: the development conversations with
facts, where `taisce bench quality` finds them).

Recall's floors (domain/floors.py) were chosen with all-MiniLM-L6-v2 on the development
conversations. Another model puts its cosines on a scale of its own (e5 scores unrelated
texts near 0.8), so its floors are chosen here to keep the selectivity the ranking rules
were tuned with: each of its floors lets through the same share of the same pairs that
MiniLM's floor lets through.

- fact, report: pairs of a question and each fact of a speaker it names (the facts step
  1 ranks), the question on the model's query side;
- drop: within each question, the gap from its best fact to each other one;
- span, proposal: pairs of distinct name-like spans (runs of capitalised words, as step 2
  finds them) drawn from the conversations' messages, names on the stored side;
- passage: pairs of each of those questions and passages of its conversation (the first
  passage of every n-th message, PASSAGES_PER_CONVERSATION of them), nearly all
  unrelated to it: the floor cuts that tail.

It also prints how well each model separates, on the question-fact pairs, the facts
whose message is the question's evidence from the others (the share of evidence facts
over the floor, and of the others), so a floor is seen with what it costs. Prints
figures and asserts none.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from taisce.adapters.embedders import make_embedder
from taisce.domain.floors import MINILM_FLOORS, floors_of
from taisce.domain.ingest import split_passages
from taisce.domain.model import Message
from taisce.domain.ports.vectors import embed_questions
from taisce.domain.similar_names import name_like_spans
from taisce.evaluation.cli import REAL_FOLDER
from taisce.evaluation.machine import describe_machine

DEFAULT_DATA = REAL_FOLDER / "locomo-dev-facts.json"
MAX_NAMES = 400
# Passages drawn from each conversation (every n-th message's first passage) for the
# question-passage pairs.
PASSAGES_PER_CONVERSATION = 100


def _vectors(model: Any, texts: list[str], *, question: bool) -> np.ndarray:
    out: list[list[float]] = []
    for start in range(0, len(texts), 64):
        chunk = texts[start : start + 64]
        out += embed_questions(model, chunk) if question else model.embed(chunk)
    return np.asarray(out, dtype=np.float32)


def _pairs(conversations: list[dict[str, Any]]) -> dict[str, Any]:
    """The question-fact pairs (per question: its facts, and which are evidence) and the
    names."""
    questions: list[str] = []
    facts: list[str] = []
    groups: list[tuple[int, list[int], list[bool]]] = []
    names: list[str] = []
    passages: list[str] = []
    asked: list[tuple[int, range]] = []  # (question, its conversation's passages)
    for c in conversations:
        drawn = len(passages)
        step = max(1, len(c["messages"]) // PASSAGES_PER_CONVERSATION)
        for n, m in enumerate(c["messages"][::step]):
            message = Message(f"m{n}", "user", m["content"], None, "", "")
            passages += [p.quote for p in split_passages(message)[:1]]
        mine = range(drawn, len(passages))
        first = len(facts)
        facts += [f["statement"] for f in c["facts"]]
        for q in c["questions"]:
            evidence = set(q.get("evidence") or ())
            ids = [
                first + i
                for i, f in enumerate(c["facts"])
                if f["subject"].lower() in q["question"].lower()
            ]
            if not ids or not evidence:
                continue
            questions.append(q["question"])
            hits = [c["facts"][i - first].get("message_id") in evidence for i in ids]
            groups.append((len(questions) - 1, ids, hits))
            asked.append((len(questions) - 1, mine))
        for m in c["messages"]:
            names += name_like_spans(m["content"])
    names = sorted(set(names))
    step = max(1, len(names) // MAX_NAMES)
    return {
        "questions": questions,
        "facts": facts,
        "groups": groups,
        "names": names[::step],
        "passages": passages,
        "asked": asked,
    }


def _scores(model: Any, data: dict[str, Any]) -> dict[str, np.ndarray]:
    q = _vectors(model, data["questions"], question=True)
    f = _vectors(model, data["facts"], question=False)
    n = _vectors(model, data["names"], question=False)
    p = _vectors(model, data["passages"], question=False)
    pair, hit, gap = [], [], []
    for qi, ids, hits in data["groups"]:
        s = f[ids] @ q[qi]
        pair += s.tolist()
        hit += hits
        gap += (s.max() - s).tolist()
    upper = np.triu_indices(len(n), k=1)
    return {
        "pair": np.asarray(pair),
        "hit": np.asarray(hit),
        "gap": np.asarray(gap),
        "names": (n @ n.T)[upper],
        # Each question with passages of its conversation, nearly all unrelated to it.
        "passages": np.concatenate([p[list(ids)] @ q[qi] for qi, ids in data["asked"]]),
    }


def _matched(reference: np.ndarray, floor: float, other: np.ndarray, *, below: bool) -> float:
    """The value of `other` that lets through the share of pairs `floor` lets through of
    `reference` (at or over it; `below`: at or under it, for gaps)."""
    if below:
        share = float(np.mean(reference <= floor))
        return float(np.quantile(other, share))
    share = float(np.mean(reference >= floor))
    return float(np.quantile(other, 1 - share))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--model", default="multilingual")
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"skipped: {args.data} is not here (the development conversations)")
        return 0
    conversations = json.loads(args.data.read_text())["conversations"]
    data = _pairs(conversations)
    print(f"date: {datetime.now(UTC).isoformat(timespec='seconds')}")
    print(f"machine: {describe_machine()}")
    print(
        f"data: {args.data.name}: {len(data['groups'])} questions naming a speaker, "
        f"{sum(len(g[1]) for g in data['groups']):,} question-fact pairs, "
        f"{len(data['names'])} names ({len(data['names']) * (len(data['names']) - 1) // 2:,} "
        "pairs)"
    )
    reference = _scores(make_embedder("local"), data)
    candidate_model = make_embedder(args.model)
    other = _scores(candidate_model, data)
    base = MINILM_FLOORS
    chosen = {
        "fact": _matched(reference["pair"], base.fact, other["pair"], below=False),
        "drop": _matched(reference["gap"], base.drop, other["gap"], below=True),
        "span": _matched(reference["names"], base.span, other["names"], below=False),
        "proposal": _matched(reference["names"], base.proposal, other["names"], below=False),
        "report": _matched(reference["pair"], base.report, other["pair"], below=False),
        "passage": _matched(reference["passages"], base.passage, other["passages"], below=False),
    }
    shipped = floors_of(candidate_model)
    print()
    print(f"| floor | MiniLM | share let through | {args.model}, matched | {args.model}, shipped |")
    print("|---|---:|---:|---:|---:|")
    for name, value in chosen.items():
        ref = reference["gap"] if name == "drop" else reference[_pool(name)]
        floor = getattr(base, name)
        share = np.mean(ref <= floor) if name == "drop" else np.mean(ref >= floor)  # of pairs
        print(
            f"| {name} | {floor:.2f} | {share:.2%} | {value:.3f} | {getattr(shipped, name):.2f} |"
        )
    print()
    print("question-fact pairs over the fact floor: evidence facts / other facts")
    print("| model | floor | evidence over | others over |")
    print("|---|---:|---:|---:|")
    for label, scores, floor in (
        ("MiniLM", reference, base.fact),
        (args.model, other, shipped.fact),
    ):
        hit = scores["hit"]
        over = scores["pair"] >= floor
        print(
            f"| {label} | {floor:.2f} | {np.mean(over[hit]):.1%} of {hit.sum():,} | "
            f"{np.mean(over[~hit]):.1%} of {(~hit).sum():,} |"
        )
    return 0


def _pool(name: str) -> str:
    if name == "passage":
        return "passages"
    return "names" if name in ("span", "proposal") else "pair"


if __name__ == "__main__":
    sys.exit(main())
