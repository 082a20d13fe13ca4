"""Step 4's head made diverse (domain/diversity.py): maximal marginal relevance over the
passages' stored vectors."""

from __future__ import annotations

from taisce.domain.diversity import DIVERSE_DEPTH, DIVERSE_WEIGHT, diversify

# Three directions: two passages about one thing (nearly the same vector), one about another.
SAME = [1.0, 0.0, 0.0]
ALMOST_SAME = [0.99, 0.14, 0.0]
OTHER = [0.0, 0.0, 1.0]


def test_a_passage_like_one_placed_yields_to_a_slightly_lower_different_one() -> None:
    scores = {"a": 1.0, "b": 0.95, "c": 0.9}
    vectors = {"a": SAME, "b": ALMOST_SAME, "c": OTHER}
    assert diversify(["a", "b", "c"], scores, vectors) == ["a", "c", "b"]


def test_a_passage_far_below_keeps_its_place_whatever_its_likeness() -> None:
    # 0.8 x (1.0 - 0.5) = 0.4 lost by the score, more than the 0.2 x 0.99 the likeness costs.
    scores = {"a": 1.0, "b": 0.95, "c": 0.5}
    vectors = {"a": SAME, "b": ALMOST_SAME, "c": OTHER}
    assert diversify(["a", "b", "c"], scores, vectors) == ["a", "b", "c"]


def test_without_vectors_the_order_is_the_order_given() -> None:
    ids = [f"p{n}" for n in range(30)]
    scores = {pid: 1.0 / (n + 1) for n, pid in enumerate(ids)}
    assert diversify(ids, scores, {}) == ids
    # Equal scores keep the order given, too.
    assert diversify(ids, dict.fromkeys(ids, 1.0), {}) == ids


def test_only_the_head_is_reordered_and_nothing_is_lost() -> None:
    ids = [f"p{n:02}" for n in range(DIVERSE_DEPTH + 10)]
    scores = {pid: 1.0 - n / 100 for n, pid in enumerate(ids)}
    # Every passage of the head is alike but the last, which comes up.
    vectors = {pid: SAME for pid in ids[: DIVERSE_DEPTH - 1]} | {ids[DIVERSE_DEPTH - 1]: OTHER}
    out = diversify(ids, scores, vectors)
    assert sorted(out) == sorted(ids)
    assert out[DIVERSE_DEPTH:] == ids[DIVERSE_DEPTH:]
    assert out[:2] == [ids[0], ids[DIVERSE_DEPTH - 1]]
    assert 0.0 < DIVERSE_WEIGHT < 1.0


def test_vectors_need_not_be_unit_length() -> None:
    scores = {"a": 1.0, "b": 0.95, "c": 0.9}
    vectors = {"a": [3.0, 0.0, 0.0], "b": [2.0, 0.3, 0.0], "c": [0.0, 0.0, 0.5]}
    assert diversify(["a", "b", "c"], scores, vectors) == ["a", "c", "b"]
