"""Replay step 4's order of passages under variants, from one store.

    .venv/bin/python -m bench.passage_replay [FILE] [--limit-conversations N] [--save F]
    .venv/bin/python -m bench.passage_replay --load F

Each conversation is stored as `taisce bench quality` stores it (through the local
gateway, the local model) and each question with evidence is recalled once at 16,000
characters with all four roles and hops 2, recording what step 4 ranks from: both
rankings' hits with their scores, the messages the nearest facts cite, and every
candidate passage with its message's time; and the facts and reports that come before
the passages. Each variant then orders the passages again as domain/passage_step.py does
(or as the variant changes it) and the bundle is refilled at each budget in step order,
whole items until the first that does not fit or the row limit; evidence any / all is
counted as the benchmark counts it. The first line is step 4's order without the two
rules that share the budget out (a cited message's share and the diverse head: they
need the bundle's facts and the passages' vectors, which the capture does not keep);
it matched `taisce bench quality` on the same data before those rules came (a few
answers may differ by ties between two stores); compare variants with that line, not
with the benchmark. `--save` keeps the capture (pickle) so that variants can be
replayed without storing again. `--ablate` prints, per conversation, what taking each
rule of step 4 away alone changes (evidence any @1,000 / @4,000, all @4,000, multi-hop all
@4,000, in points): a rule that helps on one conversation only was chosen on that one.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.replay_evidence import BUDGETS, Figures, evidence_recall, figures_line
from taisce.domain import passage_ranking as pr
from taisce.domain import passage_step
from taisce.domain.budget import item_characters, passage_characters
from taisce.domain.fact_ranking import pointer_scores
from taisce.domain.floors import MINILM_FLOORS
from taisce.domain.model import Hit, Passage
from taisce.domain.search import passage_message_id
from taisce.evaluation.dataset import load_dataset
from taisce.evaluation.harness import embedded_run, gateway_run, store_conversation
from taisce.evaluation.quality import ROLES

DEFAULT_FILE = Path("../shared/bench/locomo/locomo-dev.json")


@dataclass
class Question:
    id: str
    category: str
    question: str
    evidence: set[str]
    before: list[tuple[int, set[str]]]  # facts and reports, in step order
    nearest: list[Hit]
    lexical: list[Hit]
    topic: list[Hit]
    cited: dict[str, int]
    passages: dict[str, Passage]
    dataset_id: dict[str, str]
    # Second-hop rankings (ids, best first) from the first pass's best passages, one per
    # message: "words+1" / "words+3" the question's words plus the first one's / three's
    # text; "words" / "vector" each of the first SECOND_HOP passages' own text / vector.
    second: dict[str, list[list[str]]] = field(default_factory=dict)


SECOND_HOP = 5


@dataclass
class Capture:
    max_rows: int = 200
    questions: list[Question] = field(default_factory=list)


def capture(path: Path, limit: int | None) -> Capture:
    """Store each conversation and record what each question's replay needs."""
    dataset = load_dataset(str(path))
    seen: dict[str, Any] = {}
    search, cited_messages = passage_step._search, passage_step._cited_messages

    def recording_search(ctx: Any, meaning: Any, vectors: bool = True) -> Any:
        hits = search(ctx, meaning, vectors)
        ids = sorted({h.id for h in hits.all()})
        seen["hits"] = hits
        seen["passages"] = {
            p.id: p for p in ctx.store.passages_by_ids(ctx.project, ids, None, times=True)
        }
        seen["second"] = _second_hop(ctx, meaning.index, hits, seen["passages"])
        return hits

    def recording_cited(*args: Any) -> dict[str, int]:
        seen["cited"] = cited_messages(*args)
        return seen["cited"]

    out = Capture()
    with embedded_run("taisce-passage-replay-", "local", BUDGETS[-1]):
        passage_step._search = recording_search  # type: ignore[assignment]
        passage_step._cited_messages = recording_cited  # type: ignore[assignment]
        try:
            built, state = gateway_run()
            out.max_rows = built.settings.max_rows
            for n, conversation in enumerate(dataset.conversations[:limit], start=1):
                client = state.client(f"passage-replay-{n}")
                dataset_id = {i: m.dataset_id for m, i in store_conversation(client, conversation)}
                state.settle()
                for q in conversation.questions:
                    if not q.evidence:
                        continue
                    asked = {"question": q.question, "max_characters": BUDGETS[-1],
                             "source_roles": list(ROLES), "hops": 2}  # fmt: skip
                    seen.clear()
                    status, body, _ = client.post("/v1/recalls", asked)
                    assert status == 200, body
                    before = [
                        (item_characters(kind, item), _cited(item, kind, dataset_id))
                        for kind in ("facts", "reports")
                        for item in body.get(kind) or ()
                    ]
                    hits = seen["hits"]
                    out.questions.append(
                        Question(
                            q.id, q.category, q.question, set(q.evidence), before,
                            list(hits.nearest or ()), list(hits.lexical or ()),
                            list(hits.topic or ()),
                            dict(seen.get("cited", {})), seen["passages"], dataset_id,
                            seen["second"],
                        )
                    )  # fmt: skip
                print(f"[{n}] {conversation.id}: stored and recalled", file=sys.stderr, flush=True)
        finally:
            passage_step._search = search  # type: ignore[assignment]
            passage_step._cited_messages = cited_messages  # type: ignore[assignment]
    return out


def _second_hop(
    ctx: Any, index: Any, hits: Any, passages: Mapping[str, Passage]
) -> dict[str, list[list[str]]]:
    """The second-hop rankings (Question.second) of one recall, from its candidates."""
    fused = pr.fused_scores(hits.nearest or [], hits.lexical or [], hits.topic or [])
    best: list[str] = []
    messages: set[str] = set()
    for _, pid in pr.best_first(pr.spread_messages(fused)):
        if passage_message_id(pid) not in messages:
            messages.add(passage_message_id(pid))
            best.append(pid)
        if len(best) == SECOND_HOP:
            break
    texts = {pid: passages[pid].quote for pid in best if pid in passages}
    vectors = index.vectors(ctx.project, "passage", best)

    def words(text: str) -> list[str]:
        return [h.id for h in index.search_text(ctx.project, "passage", text, 400, ctx.roles)]

    def near(vector: Any) -> list[str]:
        return [h.id for h in index.search(ctx.project, "passage", vector, 400, ctx.roles)]

    return {
        "words+1": [words(" ".join([ctx.question, *(texts.get(b, "") for b in best[:1])]))],
        "words+3": [words(" ".join([ctx.question, *(texts.get(b, "") for b in best[:3])]))],
        "words": [words(texts.get(b, "")) for b in best],
        "vector": [near(vectors[b]) for b in best if b in vectors],
    }


def _cited(item: Mapping[str, Any], kind: str, ids: Mapping[str, str]) -> set[str]:
    found = item.get("source_messages") if kind == "reports" else [item.get("message_id")]
    return {ids.get(i, i) for i in found or () if i}


# -- variants -------------------------------------------------------------------------


Order = Callable[[Question], list[Passage]]


# The passage floor (domain/floors.py, MiniLM's: the captures' model).
PASSAGE_FLOOR = MINILM_FLOORS.passage


def committed(q: Question, added: Mapping[str, float] | None = None) -> list[Passage]:
    """Step 4's order as committed (no message filter: every candidate is visible),
    with `added` to the fused scores of the candidates it names."""
    nearest, topic = q.nearest, q.topic
    if pr.floors_passages(q.question, pr.asked_time(q.question)):
        q.nearest = pr.above_floor(nearest, PASSAGE_FLOOR) or []
        q.topic = pr.above_floor(topic, PASSAGE_FLOOR) or []
    try:
        fused = pr.fused_scores(q.nearest, q.lexical, q.topic)
        for pid, score in (added or {}).items():
            fused[pid] = fused.get(pid, 0.0) + score
        for pid, score in pointer_scores(list(fused), q.cited, pr.RRF_K).items():
            fused[pid] += score
        return _finish(q, fused)
    finally:
        q.nearest, q.topic = nearest, topic


def _without_floor(q: Question) -> list[Passage]:
    global PASSAGE_FLOOR
    saved, PASSAGE_FLOOR = PASSAGE_FLOOR, -1.0
    try:
        return committed(q)
    finally:
        PASSAGE_FLOOR = saved


def _finish(q: Question, fused: Mapping[str, float], neighbour: bool = True) -> list[Passage]:
    spread = pr.spread_messages(fused)
    hits = (*q.nearest, *q.lexical, *q.topic)
    positions = {h.id: h.position for h in hits if h.position is not None}
    raised = pr.add_neighbours(spread, positions) if neighbour else spread
    raised = pr.keep_first(raised, spread, pr.first_of_all((q.nearest, q.lexical, q.topic)))
    asked = pr.asked_time(q.question)
    ids = [pid for _, pid in pr.best_first(raised)]
    passages = [q.passages[pid] for pid in ids if pid in q.passages]
    if asked.dated:
        ordered: Iterator[Passage] | list[Passage] = pr.order_passages(passages, raised, asked)
    elif asked.when:
        ordered = pr.reorder_head(passages, raised, asked)
    else:
        ordered = passages
    return list(pr.distinct_passages(ordered))


def second_hop(name: str, first: int, weight: float) -> Order:
    """The committed order with the second-hop rankings `name` from the first `first`
    passages fused in at `weight` (shared among them), reordering the candidates."""

    def order(q: Question) -> list[Passage]:
        rankings = q.second[name][:first]
        added: dict[str, float] = {}
        for ranking in rankings:
            for rank, pid in enumerate(ranking, start=1):
                if pid in q.passages:
                    added[pid] = added.get(pid, 0.0) + weight / len(rankings) / (pr.RRF_K + rank)
        return committed(q, added)

    return order


def with_constants(**values: Any) -> Order:
    """The committed order with some of domain/passage_ranking.py's constants changed."""

    def order(q: Question) -> list[Passage]:
        saved = {name: getattr(pr, name) for name in values}
        for name, value in values.items():
            setattr(pr, name, value)
        try:
            return committed(q)
        finally:
            for name, value in saved.items():
                setattr(pr, name, value)

    return order


VARIANTS: dict[str, Order] = {
    "as committed": committed,
    "no passage floor": _without_floor,
    "no topic ranking": with_constants(TOPIC_WEIGHT=0.0),
    "topic ranking at 0.7": with_constants(TOPIC_WEIGHT=0.7),
    "topic ranking at 1.5": with_constants(TOPIC_WEIGHT=1.5),
    "neighbour 0.075": with_constants(NEIGHBOUR=0.075),
    "neighbour 0.2": with_constants(NEIGHBOUR=0.2),
    "neighbour 0.4": with_constants(NEIGHBOUR=0.4),
    "no topic ranking, neighbour 0.075": with_constants(TOPIC_WEIGHT=0.0, NEIGHBOUR=0.075),
    "second hop: words + best passage, 0.25": second_hop("words+1", 1, 0.25),
    "second hop: words + best passage, 0.5": second_hop("words+1", 1, 0.5),
    "second hop: words + best 3 passages, 0.5": second_hop("words+3", 1, 0.5),
    **{
        f"second hop: best {n} passages' {name}, {w}": second_hop(name, n, w)
        for name in ("words", "vector")
        for n in (1, 3, SECOND_HOP)
        for w in (0.5, 1.0)
    },
}


def _without_keep_first(q: Question) -> list[Passage]:
    saved = pr.keep_first
    pr.keep_first = lambda raised, spread, first: raised  # type: ignore[assignment]
    try:
        return committed(q)
    finally:
        pr.keep_first = saved


def _without_pointers(q: Question) -> list[Passage]:
    saved, q.cited = q.cited, {}
    try:
        return committed(q)
    finally:
        q.cited = saved


# Each rule of step 4 taken away alone (docs/quality.md, "Each rule alone").
ABLATIONS: dict[str, Order] = {
    "topic ranking": with_constants(TOPIC_WEIGHT=0.0),
    "neighbour gain": with_constants(NEIGHBOUR=0.0),
    "time factors": with_constants(MONTH_BOOST=1.0, DAY_BOOST=1.0, WHEN_BOOST=1.0),
    "facts' pointers": _without_pointers,
    "a message's later passages yield": with_constants(SIBLING=1.0),
    "first of all rankings kept first": _without_keep_first,
    "passage floor": _without_floor,
}


def conversation_of(q: Question) -> str:
    """The conversation a question belongs to (the dataset's ids are "<conversation>-qN")."""
    return q.id.rsplit("-q", 1)[0]


def _cells(data: Capture, order: Order, questions: list[Question]) -> tuple[float, ...]:
    part = Capture(data.max_rows, questions)
    result = evaluate(part, order)
    multi = result.get("multi-hop", {}).get(4000, (0.0, 0.0))[1]
    return (result["all"][1000][0], result["all"][4000][0], result["all"][4000][1], multi)


def ablate(data: Capture) -> None:
    """Per conversation (and all), each rule taken away alone against the committed
    order, in points: any @1,000 / any @4,000 / all @4,000 / multi-hop all @4,000."""
    groups: dict[str, list[Question]] = {}
    for q in data.questions:
        groups.setdefault(conversation_of(q), []).append(q)
    groups["all"] = list(data.questions)
    base = {name: _cells(data, committed, qs) for name, qs in groups.items()}
    print(f"{'as committed':42} " + " | ".join(
        f"{name}: " + "/".join(f"{100 * v:.1f}" for v in cells) for name, cells in base.items()
    ))  # fmt: skip
    for rule, order in ABLATIONS.items():
        deltas = []
        for name, qs in groups.items():
            cells = _cells(data, order, qs)
            deltas.append(
                "/".join(f"{100 * (v - b):+.1f}" for v, b in zip(cells, base[name], strict=True))
            )
        print(f"{'without ' + rule:42} " + " | ".join(deltas), flush=True)


def evaluate(data: Capture, order: Order) -> Figures:
    """Evidence any / all per budget, over all questions and per category."""
    return evidence_recall(
        (
            (
                q.category,
                q.evidence,
                [
                    *q.before,
                    *(
                        (passage_characters(p), {q.dataset_id.get(p.message_id, p.message_id)})
                        for p in order(q)
                    ),
                ],
            )
            for q in data.questions
        ),
        data.max_rows,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--limit-conversations", type=int, default=None)
    parser.add_argument("--save", type=Path, default=None)
    parser.add_argument("--load", type=Path, default=None)
    parser.add_argument("--only", default=None, help="variants whose name holds this")
    parser.add_argument("--ablate", action="store_true", help="each rule taken away alone")
    args = parser.parse_args(argv)
    if args.load:
        data = pickle.loads(args.load.read_bytes())
    elif not args.file.exists():
        print(f"{args.file} is absent: nothing to replay", file=sys.stderr)
        return 0
    else:
        data = capture(args.file, args.limit_conversations)
        if args.save:
            args.save.write_bytes(pickle.dumps(data))
    if args.ablate:
        ablate(data)
        return 0
    print(f"{len(data.questions)} questions with evidence; any / all at "
          + " / ".join(f"{b:,}" for b in BUDGETS))  # fmt: skip
    for name, order in VARIANTS.items():
        if args.only and args.only not in name and name != "as committed":
            continue
        print(figures_line(name, evaluate(data, order)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
