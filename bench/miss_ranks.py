"""Where the evidence of the questions a recall misses sits in its ranking.

    .venv/bin/python -m bench.miss_ranks [FILE] [--limit-conversations N]

Each conversation is stored as `taisce bench quality` stores it (through the local
gateway, the local model), and each question with evidence is recalled once at 16,000
characters with `explain`, all four roles, hops 2. From that one ordering (a smaller
budget returns its prefix) it prints, for the questions whose evidence the first 1,000
characters miss, where the first evidence item stands (its place in the bundle) and, for
a passage, whether the vector or the words ranking put it in its first ten; and, for the
multi-hop questions, how many characters the bundle needs to hold all their evidence.
It says what a change of order could reach and what needs a new signal: evidence
ranked deep by both rankings is not reached by reweighting them.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taisce.domain.budget import item_characters
from taisce.evaluation.dataset import load_dataset
from taisce.evaluation.harness import embedded_run, gateway_run, store_conversation
from taisce.evaluation.quality import ROLES

DEFAULT_FILE = Path("../shared/bench/locomo/locomo-dev.json")
BUDGET = 16_000
SMALL = 1_000
KINDS = ("facts", "reports", "passages")


@dataclass(frozen=True)
class Item:
    characters: int
    cited: frozenset[str]
    # A passage's places in the vector and the words rankings (None: not in it).
    vector_rank: int | None = None
    word_rank: int | None = None


@dataclass(frozen=True)
class Asked:
    category: str
    evidence: frozenset[str]
    items: tuple[Item, ...]


def _cited(kind: str, item: Mapping[str, Any], dataset_id: Mapping[str, str]) -> frozenset[str]:
    ids = item.get("source_messages") if kind == "reports" else [item.get("message_id")]
    return frozenset(dataset_id.get(i, i) for i in ids or () if i)


def capture(path: Path, limit: int | None) -> list[Asked]:
    dataset = load_dataset(str(path))
    asked: list[Asked] = []
    with embedded_run("taisce-miss-ranks-", "local", BUDGET):
        _, state = gateway_run()
        for n, conversation in enumerate(dataset.conversations[:limit], start=1):
            client = state.client(f"miss-ranks-{n}")
            dataset_id = {i: m.dataset_id for m, i in store_conversation(client, conversation)}
            state.settle()
            for q in conversation.questions:
                if not q.evidence:
                    continue
                body = {"question": q.question, "max_characters": BUDGET,
                        "source_roles": list(ROLES), "hops": 2, "explain": True}  # fmt: skip
                status, answer, _ = client.post("/v1/recalls", body)
                if status != 200:
                    raise RuntimeError(f"recall answered {status}: {answer}")
                items = []
                for kind in KINDS:
                    for item in answer.get(kind) or ():
                        why = item.get("why") or {}
                        items.append(
                            Item(
                                item_characters(kind, item),
                                _cited(kind, item, dataset_id),
                                why.get("vector_rank"),
                                why.get("word_rank"),
                            )
                        )
                asked.append(Asked(q.category, frozenset(q.evidence), tuple(items)))
            print(f"[{n}] {conversation.id}: recalled", file=sys.stderr, flush=True)
    return asked


def first_evidence(q: Asked) -> tuple[int, int, Item] | None:
    """The first item citing the evidence: its place, the characters up to its end."""
    used = 0
    for place, item in enumerate(q.items, start=1):
        used += item.characters
        if item.cited & q.evidence:
            return place, used, item
    return None


def characters_for_all(q: Asked) -> int | None:
    """Characters the bundle needs to cite every evidence message (None: 16,000 do not)."""
    used, seen = 0, set()
    for item in q.items:
        used += item.characters
        seen |= item.cited & q.evidence
        if seen == q.evidence:
            return used
    return None


BANDS = ((10, "places 1-10"), (20, "places 11-20"), (50, "places 21-50"))


def _band(place: int | None) -> str:
    if place is None:
        return "not in the 16,000 bundle"
    return next((name for top, name in BANDS if place <= top), "places 51 and after")


def _in_ten(rank: int | None) -> str:
    return "first ten" if rank is not None and rank <= 10 else "not in its first ten"


def report(asked: Sequence[Asked]) -> str:
    missed = []
    for q in asked:
        found = first_evidence(q)
        if found is None or found[1] > SMALL:
            missed.append((q, found))
    lines = [
        f"{len(asked)} questions with evidence; {len(missed)} missed at {SMALL:,} characters "
        f"({100 * (1 - len(missed) / len(asked)):.1f}% covered)",
        "",
        "Where the first evidence item of a missed question stands in the 16,000 bundle:",
    ]
    bands = Counter(_band(f[0] if f else None) for _, f in missed)
    for band in (*(name for _, name in BANDS), "places 51 and after", "not in the 16,000 bundle"):
        lines.append(f"  {band}: {bands.get(band, 0)}")
    pairs = Counter(
        f"vector {_in_ten(f[2].vector_rank)}, words {_in_ten(f[2].word_rank)}"
        for _, f in missed
        if f is not None and (f[2].vector_rank is not None or f[2].word_rank is not None)
    )
    lines.append("Of those that are passages, by the two rankings' places:")
    lines += [f"  {k}: {v}" for k, v in sorted(pairs.items())]
    multi = [q for q in asked if q.category == "multi-hop"]
    if multi:
        need: Counter[str] = Counter()
        for q in multi:
            used = characters_for_all(q)
            need[
                "not all in the 16,000 bundle"
                if used is None
                else "within 4,000"
                if used <= 4_000
                else "within 8,000"
                if used <= 8_000
                else "within 16,000"
            ] += 1
        lines.append(f"Multi-hop ({len(multi)}), characters needed to hold all the evidence:")
        needs = ("within 4,000", "within 8,000", "within 16,000", "not all in the 16,000 bundle")
        for key in needs:
            lines.append(f"  {key}: {need.get(key, 0)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--limit-conversations", type=int, default=None)
    args = parser.parse_args(argv)
    if not args.file.exists():
        print(f"error: {args.file} not found (LoCoMo: see docs/quality.md)", file=sys.stderr)
        return 1
    print(report(capture(args.file, args.limit_conversations)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
