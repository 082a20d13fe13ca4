"""The quality benchmark's baselines over passages: split as Taisce splits messages,
counted by the same character rule, packed whole within the budget, and ranked by BM25
and reciprocal-rank fusion as those methods rank."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from taisce.evaluation.baselines import (
    EmbeddingCache,
    Rankers,
    message_units,
    pack,
    passage_units,
)
from taisce.evaluation.dataset import StoredMessage

LONG = (
    "Ana: I adopted a quokka last spring. It sleeps in a basket by the stove every night. "
    "On weekends we take the ferry to the island, and it watches gulls from the deck."
)
MESSAGES = [
    StoredMessage("m0", "m0", 0, "user", LONG, "session-1/Ana", None, None),
    StoredMessage("m1", "m1", 1, "user", "Ben: My hound hates boats.", "session-1/Ben", None, None),
    StoredMessage(
        "m2", "m2", 2, "assistant",
        "The ferry to the island was late again today, said the harbour office.", None, None, None,
    ),
]  # fmt: skip


class Concepts:
    """A stand-in embedder: words of one concept share a dimension."""

    GROUPS = (("dog", "canine", "hound"), ("ferry", "boat", "boats"), ("quokka",))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = []
        for text in texts:
            words = set(re.findall(r"\w+", text.lower()))
            v = [1.0 if words & set(g) else 0.0 for g in self.GROUPS] + [0.1]
            norm = math.sqrt(sum(x * x for x in v))
            vectors.append([x / norm for x in v])
        return vectors


def _rankers() -> Rankers:
    embedder = Concepts()
    return Rankers.build(
        passage_units(MESSAGES),
        EmbeddingCache(embedder),
        lambda q: np.asarray(embedder.embed([q])[0], dtype=np.float32),
    )


def test_messages_are_split_as_taisce_splits_them_and_counted_by_its_rule() -> None:
    units = passage_units(MESSAGES)
    first, second = LONG[: LONG.index(" On weekends")], LONG[LONG.index("On weekends") :]
    assert units.texts == [first, second, MESSAGES[1].text, MESSAGES[2].text]
    assert units.owners == [0, 0, 1, 2]
    # role + source + quote code points, as a Taisce bundle counts a passage.
    assert units.sizes == [
        len("user") + len("session-1/Ana") + len(first),
        len("user") + len("session-1/Ana") + len(second),
        len("user") + len("session-1/Ben") + len(MESSAGES[1].text),
        len("assistant") + len(MESSAGES[2].text),
    ]
    assert all(size <= 150 + len("user") + len("session-1/Ana") for size in units.sizes)


def test_a_passage_fits_a_budget_its_whole_message_does_not() -> None:
    rankers = _rankers()
    ranking, _ = rankers.rankings("quokka")["bm25"]
    assert ranking == [0]  # only the long message's first passage holds the word
    size = rankers.units.sizes[0]
    assert pack(ranking, rankers.units.sizes, size, 200) == ([0], size)
    assert pack(ranking, rankers.units.sizes, size - 1, 200) == ([], 0)
    whole = message_units(MESSAGES)
    assert pack(ranking, whole.sizes, size, 200) == ([], 0)  # the message is too long


def test_passages_are_packed_whole_within_the_budget() -> None:
    rankers = _rankers()
    sizes = rankers.units.sizes
    for method, (ranking, _) in rankers.rankings("ferry to the island").items():
        for budget in range(0, sum(sizes) + 2, 7):
            taken, used = pack(ranking, sizes, budget, 200)
            assert used == sum(sizes[i] for i in taken) <= budget, method
            assert taken == ranking[: len(taken)], method
            if len(taken) < len(ranking):  # stopped at the first that does not fit
                assert used + sizes[ranking[len(taken)]] > budget, method


def test_bm25_and_rrf_rank_the_passages() -> None:
    rankings = {
        k: r
        for k, (r, _) in _rankers().rankings("Was the harbour ferry late for the quokka?").items()
    }
    # BM25 ranks only passages sharing a word: "harbour" (rare) and "ferry" in the
    # assistant's message first, then "quokka", then "ferry" alone in the second passage.
    assert rankings["bm25"] == [3, 0, 1]
    # Dense: passages 0, 1 and 3 each share one concept with the question (a tie, kept
    # in order); the hound's boats share one too but add a concept the question lacks.
    assert rankings["dense"] == [0, 1, 3, 2]
    # RRF, k=60: 0 has 1/62 + 1/61, 3 has 1/61 + 1/63, 1 has 1/63 + 1/62, 2 only 1/64:
    # an order neither list gives.
    assert rankings["hybrid"] == [0, 3, 1, 2]
