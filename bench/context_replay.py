"""Replay step 4 with each passage's vector made with the text before it.

    .venv/bin/python -m bench.context_replay --load CAPTURE [FILE]

A passage is embedded alone ("walking them always reminds me..."), so a passage whose
subject is named earlier in its message, or in the message before, is far from a
question that names it ("turtles"). Contextual embedding (the passage embedded after
the text that comes before it) is the usual remedy. This measures it before any store
changes: from a capture of `bench.passage_replay --save` (FILE is the dataset it was
made from, for the messages' texts), each candidate passage is embedded again with the
local model, alone and with each context below; the vector ranking is made again over
each question's candidates (400 deep, as the index's) from those vectors, and step 4's
order and the bundle follow as `bench.passage_replay` replays them. "alone" must match
the committed line (the same vectors, over the candidates): it checks the replay.

Contexts: "message" the up to 150 code points of its message before the passage;
"dialog" the message before's text and that, the last 200 code points; "opening" its
message's first 100 code points (for a passage after the first). Each alone, and mixed
half and half with the passage's own similarity.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench import passage_replay as replay
from bench.passage_replay import DEFAULT_FILE, Capture, Question, conversation_of
from bench.replay_evidence import figures_line
from taisce.adapters.embedders.local_minilm import LocalMiniLM
from taisce.domain.model import Hit, Passage
from taisce.evaluation.dataset import load_dataset
from taisce.evaluation.quality import stored_messages

CONTEXTS = ("alone", "message", "dialog", "opening")
DEPTH = 400  # the vector ranking's depth in step 4
BATCH = 256

Texts = dict[tuple[str, str], tuple[str, str | None]]  # (conversation, id) -> text, before


def message_texts(path: Path) -> Texts:
    """Each stored message's text (as `taisce bench quality` stores it) and the id of the
    message before it in its conversation."""
    out: Texts = {}
    for conversation in load_dataset(str(path)).conversations:
        before: str | None = None
        for m in stored_messages(conversation, "both")[0]:
            out[(conversation.id, m.dataset_id)] = (m.text, before)
            before = m.dataset_id
    return out


def embedded_text(texts: Texts, q: Question, p: Passage, context: str) -> str:
    """The text embedded for passage `p` under `context`."""
    conversation = conversation_of(q)
    text, before_id = texts.get((conversation, q.dataset_id.get(p.message_id, "")), ("", None))
    ahead = text[: p.start]
    if context == "message":
        prefix = ahead[-150:]
    elif context == "dialog":
        before = texts.get((conversation, before_id), ("", None))[0] if before_id else ""
        prefix = f"{before} {ahead}"[-200:] if ahead else before[-150:]
    elif context == "opening":
        prefix = text[: min(p.start, 100)]
    else:
        prefix = ""
    return f"{prefix} {p.quote}".strip() if prefix else p.quote


def vectors(data: Capture, texts: Texts) -> dict[str, dict[tuple[str, str], np.ndarray]]:
    """Every candidate passage's vector under each context, and each question's (under
    the context "question")."""
    model = LocalMiniLM()
    out: dict[str, dict[tuple[str, str], np.ndarray]] = {}
    for context in CONTEXTS:
        todo = {
            (conversation_of(q), pid): embedded_text(texts, q, p, context)
            for q in data.questions
            for pid, p in q.passages.items()
        }
        out[context] = _embed(model, todo)
        print(f"{context}: {len(todo)} passages embedded", file=sys.stderr, flush=True)
    out["question"] = _embed(model, {(q.id, ""): q.question for q in data.questions})
    return out


def _embed(model: LocalMiniLM, todo: dict[tuple[str, str], str]) -> dict:
    keys = list(todo)
    out = {}
    for i in range(0, len(keys), BATCH):
        chunk = keys[i : i + BATCH]
        for key, vector in zip(chunk, model.embed([todo[k] for k in chunk]), strict=True):
            out[key] = np.asarray(vector, dtype=np.float32)
    return out


def variant(
    vecs: dict[str, dict[tuple[str, str], np.ndarray]], context: str, mix: float = 1.0
) -> Callable[[Question], list[Passage]]:
    """Step 4's order with the vector ranking made again over the candidates, each
    passage's similarity `mix` of its context's and the rest of its own alone."""

    def order(q: Question) -> list[Passage]:
        asked = vecs["question"][(q.id, "")]
        conversation = conversation_of(q)

        def similarity(pid: str) -> float:
            own = float(vecs["alone"][(conversation, pid)] @ asked)
            with_context = float(vecs[context][(conversation, pid)] @ asked)
            return mix * with_context + (1.0 - mix) * own

        scores = {pid: similarity(pid) for pid in q.passages}
        kept = {h.id: h for h in q.nearest}
        ranked = sorted(scores, key=lambda pid: -scores[pid])[:DEPTH]
        hits = [
            kept[pid]._replace(score=scores[pid])
            if pid in kept
            else Hit(pid, scores[pid], q.passages[pid].position, q.passages[pid].occurred_at)
            for pid in ranked
        ]
        saved, q.nearest = q.nearest, hits
        try:
            return replay.committed(q)
        finally:
            q.nearest = saved

    return order


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--load", type=Path, required=True, help="a passage_replay capture")
    args = parser.parse_args(argv)
    # The capture was pickled by passage_replay run as __main__.
    main_module = sys.modules["__main__"]
    main_module.Capture, main_module.Question = Capture, Question  # type: ignore[attr-defined]
    data = pickle.loads(args.load.read_bytes())
    vecs = vectors(data, message_texts(args.file))
    lines = {"as committed": replay.committed}
    for context in CONTEXTS:
        lines[f"vectors: {context}"] = variant(vecs, context)
    for context in CONTEXTS[1:]:
        lines[f"vectors: {context}, mixed 0.5"] = variant(vecs, context, 0.5)
    for name, order in lines.items():
        print(figures_line(name, replay.evaluate(data, order)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
