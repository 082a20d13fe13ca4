"""The head of step 4's order made diverse: maximal marginal relevance over the
passages' stored vectors, so that the first places of a small budget do not all say
the same thing in other words (near-duplicates are dropped anyway; these are passages
on one subject from different messages).

Each place of the head goes to the passage with the best
DIVERSE_WEIGHT * (its score / the head's best score) - (1 - DIVERSE_WEIGHT) * (its
largest cosine with a passage placed before it). Chosen on the real conversations of
the development half, replayed from one store with the synthetic set as a guard
(docs/API.md, step 4): depth 20 and weight 0.8 gave evidence any at 1,000 characters
+0.4 point on the messages file, +0.7 on the file with facts (+1.2 beside the cited
messages' share, passage_step.py) and +0.7 on the synthetic set, no cell lower. Weight
0.7 gained more on the messages file (+0.9) and less on the synthetic set (+0.4);
depth 50 lost multi-hop "all evidence" at 4,000 (0.404 against 0.433); word overlap in
place of the cosine gained about half as much.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

# How many of the order's first passages are reordered, and the weight of the score
# against the likeness to those placed before.
DIVERSE_DEPTH = 20
DIVERSE_WEIGHT = 0.8


def diversify(
    ids: Sequence[str], scores: Mapping[str, float], vectors: Mapping[str, Sequence[float]]
) -> list[str]:
    """`ids` (best first by `scores`) with the first DIVERSE_DEPTH reordered; a passage
    without a vector is like none of the others. The rest keep their order."""
    head, tail = list(ids[:DIVERSE_DEPTH]), list(ids[DIVERSE_DEPTH:])
    top = scores.get(head[0], 0.0) if head else 0.0
    if len(head) < 2 or top <= 0.0:
        return [*head, *tail]
    row = {pid: n for n, pid in enumerate(pid for pid in head if pid in vectors)}
    cosines: list[list[float]] = []
    if len(row) > 1:
        import numpy as np  # here: a handler's cold start does without it until a recall needs it

        matrix = np.asarray([vectors[pid] for pid in row], dtype=np.float64)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = matrix / np.where(norms > 0.0, norms, 1.0)
        cosines = (matrix @ matrix.T).tolist()

    def like(a: str, b: str) -> float:
        """Their cosine; 0 (like none) where either has no vector."""
        return cosines[row[a]][row[b]] if cosines and a in row and b in row else 0.0

    placed: list[str] = []
    nearest = dict.fromkeys(head, -1.0)  # each one's largest cosine with those placed
    left = list(head)
    while left:
        # max() keeps the first of equals: ties go to the better score, as before.
        best = max(
            left,
            key=lambda pid: (
                DIVERSE_WEIGHT * scores.get(pid, 0.0) / top
                - (1.0 - DIVERSE_WEIGHT) * (nearest[pid] if placed else 0.0)
            ),
        )
        left.remove(best)
        placed.append(best)
        for pid in left:
            nearest[pid] = max(nearest[pid], like(pid, best))
    return [*placed, *tail]
