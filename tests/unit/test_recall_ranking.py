"""Recall's ranking: facts by words, meaning and hop with a floor; passages by fused
rankings without near-duplicates (domain/fact_ranking.py, domain/passage_ranking.py)."""

from __future__ import annotations

import dataclasses

import pytest

from taisce.domain import fact_ranking, passage_ranking
from taisce.domain.fact_ranking import Candidate, rank_facts, word_scores
from taisce.domain.model import Fact, Hit, Passage
from taisce.domain.passage_ranking import (
    NEIGHBOUR,
    SIBLING,
    WHEN_DEPTH,
    AskedTime,
    add_neighbours,
    asked_day,
    asked_month,
    asked_time,
    best_first,
    distinct_passages,
    first_of_all,
    fused_scores,
    in_month,
    keep_first,
    on_day,
    order_passages,
    reorder_head,
    spread_messages,
    states_time,
    time_factor,
)
from taisce.domain.words import words


def fact(statement: str, *, id: str, subject: str = "Caroline") -> Fact:
    return Fact(
        id=id,
        subject=subject,
        subject_key=subject.lower(),
        predicate="noted",
        object=statement,
        object_kind="value",
        object_key=None,
        statement=statement,
        source_role="user",
        quote=None,
        context=None,
        message_id=None,
        valid_from=None,
        valid_to=None,
        recorded_at="2024-05-01T12:00:00Z",
    )


def candidates(*statements: str, hop: int = 1, subject: str = "Caroline") -> list[Candidate]:
    path = (subject, "Acme") if hop == 2 else ()
    return [
        Candidate(fact(s, id=f"f{i}", subject=subject), hop, path, subject.lower())
        for i, s in enumerate(statements)
    ]


@pytest.fixture
def floor_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The floor, drop and cap rules alone: these tests' entities hold so few facts that
    the few-facts rule would return them all (tested on its own below)."""
    monkeypatch.setattr(fact_ranking, "FEW_FACTS", 0)


POOL = candidates(
    "Caroline went to a pottery class with her kids.",
    "Caroline adopted a dog named Max last spring.",
    "Caroline likes the beach.",
    "Caroline is researching adoption agencies.",
)


def test_words_fold_case_width_and_plurals() -> None:
    full_width = "\uff30\uff4f\uff54\uff54\uff45\uff52\uff59"  # Pottery
    assert words(f"{full_width} Classes and the DOGS' boxes") == ["pottery", "class", "dog", "box"]
    assert words("What did Melanie's kids paint?") == ["melanie", "kid", "paint"]


def test_word_scores_reward_the_rarer_asked_word() -> None:
    docs = [words(c.fact.statement) for c in POOL]
    scores = word_scores(words("pottery dog"), docs)
    assert scores[0] > 0 and scores[1] > 0
    assert scores[2] == scores[3] == 0
    assert all(0 <= s <= 1 for s in scores)
    # Statistics come from the documents given only: a word none holds scores nothing.
    assert word_scores(words("volcano"), docs) == [0.0] * 4


def test_words_alone_rank_and_the_floor_drops_what_bears_on_nothing() -> None:
    ranked = rank_facts("Did Caroline go to a pottery class?", POOL, None, ["caroline"])
    assert [s.candidate.fact.id for s in ranked] == ["f0"]
    assert ranked[0].similarity is None and ranked[0].words >= fact_ranking.NO_MODEL_FLOOR


def test_without_a_model_every_fact_holding_an_asked_word_comes_back() -> None:
    # No later step would use the budget: no cap, words best first.
    pool = candidates(*(f"Caroline painted picture number {n}." for n in range(6)))
    ranked = rank_facts("Which pictures did Caroline paint?", pool, None, ["caroline"])
    assert len(ranked) == 6 > fact_ranking.MAX_FACTS
    assert [s.candidate.fact.id for s in ranked] == [f"f{n}" for n in range(6)]
    # With a model configured but failed during the recall, words decide under the cap.
    failed = rank_facts("Which pictures did Caroline paint?", pool, None, ["caroline"], model=True)
    assert [s.candidate.fact.id for s in failed] == ["f0", "f1", "f2"]


@pytest.mark.usefixtures("floor_alone")
def test_meaning_alone_finds_a_fact_asked_in_other_words() -> None:
    pool = candidates(
        "Atlas Moran works at Acme Corp.",
        "Atlas Moran likes tea.",
        subject="Atlas Moran",
    )
    sims = {"f0": 0.79, "f1": 0.5}
    ranked = rank_facts("Where is Atlas Moran employed?", pool, sims, ["atlas moran"])
    assert [s.candidate.fact.id for s in ranked] == ["f0"]
    assert ranked[0].words == 0 and ranked[0].score == pytest.approx(0.79)


@pytest.mark.usefixtures("floor_alone")
def test_meaning_orders_facts_that_share_the_words() -> None:
    pool = candidates(
        "Caroline went to a class on pottery.",
        "Caroline took her kids to a pottery class.",
        "Caroline likes the beach.",
    )
    sims = {"f0": 0.85, "f1": 0.9, "f2": 0.6}
    ranked = rank_facts("Did Caroline take the kids to pottery class?", pool, sims, ["caroline"])
    assert [s.candidate.fact.id for s in ranked] == ["f1", "f0"]
    # Below the floor a cosine keeps nothing, whatever words the fact shares.
    assert all(s.score >= fact_ranking.FLOOR for s in ranked)
    low = {"f0": 0.6, "f1": 0.6, "f2": 0.6}
    assert rank_facts("Did Caroline take the kids to pottery class?", pool, low, []) == []


@pytest.mark.usefixtures("floor_alone")
def test_a_fact_holding_every_asked_word_is_kept_under_the_floor() -> None:
    pool = candidates(
        "Atlas works at Acme Corp.",
        "Atlas prefers email to calls.",
        "Atlas likes tea.",
        subject="Atlas",
    )
    # all-MiniLM-L6-v2 puts "What does Atlas prefer?" at 0.58 with the second.
    sims = {"f0": 0.61, "f1": 0.58, "f2": 0.55}
    ranked = rank_facts("What does Atlas prefer?", pool, sims, ["atlas"])
    assert [s.candidate.fact.id for s in ranked] == ["f1"]
    assert ranked[0].similarity == 0.58 < fact_ranking.FLOOR
    # After the facts over the floor, within the cap; one asked word missing keeps nothing.
    kept = {"f0": 0.9, "f1": 0.4, "f2": 0.55}
    after = rank_facts("What does Atlas prefer?", pool, kept, ["atlas"])
    assert [s.candidate.fact.id for s in after] == ["f0", "f1"]
    assert rank_facts("What does Atlas prefer to drink?", pool, sims, ["atlas"]) == []
    full = {f"f{i}": 0.9 for i in range(3)}
    assert len(rank_facts("What does Atlas prefer?", pool, full, ["atlas"])) == 3


def test_an_entity_of_few_facts_has_them_all_after_those_kept() -> None:
    # "What should I cook for Alice?": the local model puts the allergy at 0.54, under
    # the floor, but what is known of Alice is two facts.
    few = candidates("Alice lives in Lisbon.", "Alice is allergic to peanuts.", subject="Alice")
    sims = {"f0": 0.45, "f1": 0.54}
    ranked = rank_facts("What should I cook for Alice?", few, sims, ["alice"])
    assert [s.candidate.fact.id for s in ranked] == ["f1", "f0"]
    # After the facts the rule keeps, best score first.
    kept = rank_facts("Where does Alice live?", few, {"f0": 0.9, "f1": 0.2}, ["alice"])
    assert [s.candidate.fact.id for s in kept] == ["f0", "f1"]
    # Without a model too (only step 1 runs): the question shares no word with either
    # fact, so the words rule alone gave nothing. Both score 0: storing order.
    unmodelled = rank_facts("What should I cook for Alice?", few, None, ["alice"])
    assert [(s.candidate.fact.id, s.few) for s in unmodelled] == [("f0", True), ("f1", True)]
    worded = rank_facts("Is Alice allergic to anything?", few, None, ["alice"])
    assert [(s.candidate.fact.id, s.few) for s in worded] == [("f1", False), ("f0", True)]
    # One fact more than FEW_FACTS: the floor holds again, with a model or without.
    many = candidates(
        *(f"Alice fact {n}." for n in range(fact_ranking.FEW_FACTS + 1)), subject="Alice"
    )
    low = {f"f{n}": 0.3 for n in range(fact_ranking.FEW_FACTS + 1)}
    assert rank_facts("What should I cook for Alice?", many, low, ["alice"]) == []
    assert rank_facts("What should I cook for Alice?", many, None, ["alice"]) == []
    # Counted per matched entity: Alice's few facts come back beside Bob's many.
    bob = [
        dataclasses.replace(c, fact=dataclasses.replace(c.fact, id=f"b{n}"))
        for n, c in enumerate(
            candidates(
                *(f"Bob fact {n}." for n in range(fact_ranking.FEW_FACTS + 1)), subject="Bob"
            )
        )
    ]
    both = rank_facts(
        "What should I cook for Alice and Bob?",
        few + bob,
        {**sims, **{c.fact.id: 0.3 for c in bob}},
        ["alice", "bob"],
    )
    assert [s.candidate.fact.id for s in both] == ["f1", "f0"]


def test_a_fact_without_a_vector_competes_by_its_words() -> None:
    sims = {"f1": 0.3, "f2": 0.2, "f3": 0.2}  # f0 not embedded yet
    ranked = rank_facts("Did Caroline go to a pottery class?", POOL, sims, ["caroline"])
    assert [s.candidate.fact.id for s in ranked] == ["f0"]
    assert ranked[0].similarity is None and ranked[0].words >= fact_ranking.WORDS_FLOOR
    # A fact not yet embedded that holds too little of the question is not dropped
    # for lack of a vector (read your writes): it comes after any kept fact.
    weak = rank_facts("Caroline pottery dog", POOL, sims, ["caroline"])
    assert [s.candidate.fact.id for s in weak] == ["f0"]
    assert weak[0].words < fact_ranking.WORDS_FLOOR
    kept = {"f1": 0.8, "f2": 0.2, "f3": 0.2}
    after = rank_facts("Caroline pottery dog", POOL, kept, ["caroline"])
    assert [s.candidate.fact.id for s in after] == ["f1", "f0"]
    # When the model failed for the whole recall, words rank every fact and their floor holds.
    assert rank_facts("Caroline pottery dog", POOL, None, ["caroline"], model=True) == []
    assert rank_facts("Caroline pottery dog", POOL, None, ["caroline"])[0].words > 0


def test_the_cap_keeps_the_best_over_the_floor() -> None:
    pool = candidates(*(f"Caroline fact {n}." for n in range(5)))
    sims = {"f0": 0.7, "f1": 0.9, "f2": 0.86, "f3": 0.85, "f4": 0.88}
    ranked = rank_facts("What did Caroline cook?", pool, sims, ["caroline"])
    assert [s.candidate.fact.id for s in ranked] == ["f1", "f4", "f2"]


@pytest.mark.usefixtures("floor_alone")
def test_a_fact_far_below_the_best_is_dropped() -> None:
    pool = candidates(*(f"Caroline fact {n}." for n in range(3)))
    sims = {"f0": 0.95, "f1": 0.9, "f2": 0.8}  # f2 is over the floor, 0.15 below the best
    ranked = rank_facts("What did Caroline cook?", pool, sims, ["caroline"])
    assert [s.candidate.fact.id for s in ranked] == ["f0", "f1"]
    assert 0.95 - 0.8 > fact_ranking.DROP >= 0.95 - 0.9
    # Without a model nothing is dropped for being below the best (no later step).
    worded = candidates("Caroline cooks pasta and soup.", "Caroline cooks.", "Caroline ate.")
    alone = rank_facts("What did Caroline cook, pasta?", worded, None, ["caroline"])
    assert [s.candidate.fact.id for s in alone] == ["f0", "f1"]
    assert alone[0].score - alone[1].score > fact_ranking.DROP


def test_at_most_max_facts_are_kept() -> None:
    sims = {f"f{i}": 0.9 for i in range(4)}
    ranked = rank_facts("Caroline pottery dog beach adoption", POOL, sims, ["caroline"])
    assert len(ranked) == fact_ranking.MAX_FACTS


def test_hop_2_counts_less_and_ties_keep_storing_order() -> None:
    near = candidates("Acme is based in Dublin.", hop=2)
    far = [dataclasses.replace(c, hop=1) for c in near]
    sims = {"f0": 0.9}
    two = rank_facts("Where is Acme based?", near, sims, ["caroline"])
    one = rank_facts("Where is Acme based?", far, sims, ["caroline"])
    assert two[0].score == pytest.approx(one[0].score * fact_ranking.HOP2)
    same = candidates("Caroline paints.", "Caroline paints.")
    order = rank_facts("Does Caroline paint?", same, None, ["caroline"])
    assert [s.candidate.fact.id for s in order][: fact_ranking.MAX_FACTS] == ["f0", "f1"]


def test_a_question_about_the_name_alone_keeps_every_candidate_in_order() -> None:
    mixed = POOL[:2] + candidates("Acme is in Dublin.", hop=2) + POOL[2:]
    ranked = rank_facts("Tell me about Caroline", mixed, None, ["caroline"])
    assert [(s.candidate.hop, s.candidate.fact.statement) for s in ranked] == [
        (1, POOL[0].fact.statement),
        (1, POOL[1].fact.statement),
        (1, POOL[2].fact.statement),
        (1, POOL[3].fact.statement),
        (2, "Acme is in Dublin."),
    ]


def test_the_order_is_the_same_for_any_order_of_equal_input() -> None:
    sims = {"f0": 0.7, "f1": 0.7, "f2": 0.1, "f3": 0.65}
    first = rank_facts("Caroline class dog adoption", POOL, sims, ["caroline"])
    again = rank_facts("Caroline class dog adoption", POOL, sims, ["caroline"])
    assert first == again


# -- passages -------------------------------------------------------------------------


def fuse_rankings(nearest: list[Hit], lexical: list[Hit]) -> list[str]:
    """Ids by the fused scores, best first (as recall reads them)."""
    return [pid for _, pid in best_first(fused_scores(nearest, lexical))]


def test_fusion_puts_what_both_rankings_find_first() -> None:
    nearest = [Hit("a", 0.9), Hit("b", 0.8), Hit("c", 0.7)]
    lexical = [Hit("c", 9.0), Hit("d", 5.0)]
    fused = fuse_rankings(nearest, lexical)
    assert fused[0] == "c"
    assert set(fused) == {"a", "b", "c", "d"}
    assert fuse_rankings(nearest, []) == ["a", "b", "c"]
    assert fuse_rankings([], lexical) == ["c", "d"]
    # Ties go by id.
    assert fuse_rankings([Hit("y", 1.0)], [Hit("x", 1.0)]) == ["x", "y"]


def test_meaning_and_words_count_equally() -> None:
    # First by meaning only and first by words only score alike: the tie goes by id,
    # whichever ranking found each.
    assert fuse_rankings([Hit("a", 0.9)], [Hit("b", 9.0)]) == ["a", "b"]
    assert fuse_rankings([Hit("b", 0.9)], [Hit("a", 9.0)]) == ["a", "b"]
    # Second in both beats first in one alone.
    nearest = [Hit("v", 0.9), Hit("both", 0.8)]
    lexical = [Hit("w", 9.0), Hit("both", 8.0)]
    assert fuse_rankings(nearest, lexical)[0] == "both"


def test_a_message_later_passages_yield_to_other_messages() -> None:
    # m1's two passages lead the fused order; its second keeps SIBLING of its score,
    # its third SIBLING squared, so m2's first passage comes before them.
    scores = {"m1#0": 0.20, "m1#1": 0.19, "m1#2": 0.18, "m2#0": 0.15, "m2#1": 0.01}
    spread = spread_messages(scores)
    assert spread["m1#0"] == 0.20 and spread["m2#0"] == 0.15
    assert spread["m1#1"] == pytest.approx(0.19 * SIBLING)
    assert spread["m1#2"] == pytest.approx(0.18 * SIBLING**2)
    assert spread["m2#1"] == pytest.approx(0.01 * SIBLING)
    order = sorted(spread, key=lambda i: (-spread[i], i))
    assert order[:2] == ["m1#0", "m2#0"]
    # Which passage of a message counts as first goes by score, then id, whatever the
    # mapping's order; a message id holding "#" still groups by its last "#".
    assert spread_messages(dict(reversed(list(scores.items())))) == spread
    tied = spread_messages({"a#b#1": 0.1, "a#b#0": 0.1, "a#1": 0.1})
    assert tied == {"a#1": 0.1, "a#b#0": 0.1, "a#b#1": pytest.approx(0.1 * SIBLING)}
    assert spread_messages({}) == {}


# m1 (position 1) and m3 (position 3) sit either side of m2 (position 2); m9 has no
# neighbour among the candidates; "x#0" was stored before positions were kept.
SCORES = {"m1#0": 0.30, "m1#1": 0.05, "m2#0": 0.10, "m3#0": 0.20, "m9#0": 0.25, "x#0": 0.4}
POSITIONS = {"m1#0": 1, "m1#1": 1, "m2#0": 2, "m3#0": 3, "m9#0": 9}


def test_a_passage_gains_from_the_message_stored_before_its_own() -> None:
    assert passage_ranking.NEIGHBOUR_STEPS == (-1,)
    raised = add_neighbours(SCORES, POSITIONS)
    assert raised["m2#0"] == pytest.approx(0.10 + NEIGHBOUR * 0.30)
    assert raised["m3#0"] == pytest.approx(0.20 + NEIGHBOUR * 0.10)
    # The first message has no message before it; the message after gives nothing.
    assert raised["m1#0"] == 0.30 and raised["m1#1"] == 0.05
    assert raised["m9#0"] == 0.25 and raised["x#0"] == 0.4


def test_the_passage_every_ranking_put_first_keeps_its_place() -> None:
    # Three notes stored in a row, each ranked just behind the one before in every
    # ranking (short, close rankings, as in a new memory): the gains the later two get
    # from the note before them would put them ahead of the first.
    spread = {"a#0": 0.5, "b#0": 0.43, "c#0": 0.375}
    raised = add_neighbours(spread, {"a#0": 1, "b#0": 2, "c#0": 3})
    assert next(pid for _, pid in best_first(raised)) != "a#0"
    first = first_of_all([[Hit("a#0", 0.9)], [Hit("a#0", 3.0)], []])
    kept = keep_first(raised, spread, first)
    order = [pid for _, pid in best_first(kept)]
    assert order[0] == "a#0" and order[1:] == [p for _, p in best_first(raised) if p != "a#0"]
    assert kept["b#0"] == raised["b#0"] and kept["c#0"] == raised["c#0"]
    # Rankings that disagree name no first; nothing then moves.
    assert first_of_all([[Hit("a#0", 0.9)], [Hit("b#0", 3.0)]]) is None
    assert first_of_all([[], None]) is None
    assert keep_first(raised, spread, None) is raised
    # A passage that something else led before the gains (the facts' pointers) is not
    # lifted, and one still ahead is left as it is.
    assert keep_first(raised, {**spread, "b#0": 0.6}, "a#0") is raised
    assert keep_first(spread, spread, "a#0") is spread


def test_a_passage_gains_from_the_messages_stored_beside_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The rule with both sides (measured, docs/API.md step 4): the mechanism holds for
    # any steps.
    monkeypatch.setattr(passage_ranking, "NEIGHBOUR_STEPS", (-1, 1))
    scores, positions = SCORES, POSITIONS
    raised = add_neighbours(scores, positions)
    # The best passage of either neighbouring message counts, read before any gain.
    assert raised["m2#0"] == pytest.approx(0.10 + NEIGHBOUR * 0.30)
    assert raised["m1#0"] == pytest.approx(0.30 + NEIGHBOUR * 0.10)
    assert raised["m1#1"] == pytest.approx(0.05 + NEIGHBOUR * 0.10)
    assert raised["m3#0"] == pytest.approx(0.20 + NEIGHBOUR * 0.10)
    assert raised["m9#0"] == 0.25 and raised["x#0"] == 0.4
    # The same whatever the mappings' order; a position without a candidate gives nothing.
    assert add_neighbours(dict(reversed(scores.items())), positions) == raised
    assert add_neighbours(scores, {**positions, "gone#0": 10}) == raised
    # What is not among the positions (a passage the filters hide) neither gives nor gains.
    hidden = add_neighbours(scores, {k: v for k, v in positions.items() if k != "m1#0"})
    assert hidden["m2#0"] == pytest.approx(0.10 + NEIGHBOUR * 0.20)
    assert hidden["m1#0"] == 0.30
    assert add_neighbours(scores, {}) == scores


def passage(quote: str, n: int) -> Passage:
    return Passage(f"m{n}#0", f"m{n}", "user", None, 0, len(quote), quote)


def test_near_duplicate_passages_are_dropped_the_first_kept() -> None:
    found = [
        passage("Caroline: I went to the pottery class yesterday!", 1),
        passage("Caroline: I went to the pottery class yesterday.", 2),
        passage("Melanie: The pottery class sounds fun.", 3),
        passage("Caroline: I went to the pottery class yesterday with my kids!", 4),
    ]
    kept = [p.message_id for p in distinct_passages(found)]
    assert kept[:2] == ["m1", "m3"]
    assert "m2" not in kept


def test_the_month_a_question_names() -> None:
    assert asked_month("When did Melanie go camping in June?") == (6, None)
    assert asked_month("What did Caroline paint in October 2023?") == (10, 2023)
    # "may" is a verb; two months, or none, name no one time.
    assert asked_month("What may Caroline paint next?") is None
    assert asked_month("Did she move between March and May?") is None
    assert asked_month("What did Jon do in 2023?") is None
    # Two years: the month alone.
    assert asked_month("Was it June 2022 or 2023?") == (6, None)


def test_in_month_reads_the_stored_timestamp() -> None:
    assert in_month("2023-06-27T10:37:00Z", (6, None))
    assert in_month("2023-06-27T10:37:00.000000Z", (6, 2023))
    assert not in_month("2022-06-27T10:37:00Z", (6, 2023))
    assert not in_month("2023-07-01T00:00:00Z", (6, None))
    assert not in_month(None, (6, None))


def dated(n: int, occurred_at: str) -> Passage:
    return Passage(f"m{n}#0", f"m{n}", "user", None, 0, 4, "text", occurred_at)


def test_a_passage_of_the_month_asked_counts_three_times() -> None:
    june, july = dated(1, "2023-06-27T10:37:00Z"), dated(2, "2023-07-17T14:31:00Z")
    scores = {june.id: 0.04, july.id: 0.1}
    # 3 x 0.04 beats 0.1 when June is asked ...
    assert order_passages([july, june], scores, "Where did Mel camp in June?") == [june, july]
    # ... and nothing moves when no month is (or another year is).
    assert order_passages([june, july], scores, "Where did Mel camp?") == [july, june]
    assert order_passages([june, july], scores, "Where in June 2022?") == [july, june]
    # Ties by id, whatever order the store returned.
    even = {june.id: 0.1, july.id: 0.1}
    assert order_passages([july, june], even, "Where?") == [june, july]


def test_facts_rank_the_messages_they_cite_by_the_first_citing_fact() -> None:
    cited = [
        dataclasses.replace(fact("a", id="f0"), message_id="m2"),
        dataclasses.replace(fact("b", id="f1"), message_id=None),
        dataclasses.replace(fact("c", id="f2"), message_id="m1"),
        dataclasses.replace(fact("d", id="f3"), message_id="m2"),
    ]
    assert fact_ranking.cited_message_ranks(cited) == {"m2": 1, "m1": 2}
    assert fact_ranking.cited_message_ranks([]) == {}


def test_a_passage_of_a_cited_message_gains_by_its_message_rank() -> None:
    ranks = {"m2": 1, "m1#x": 2}
    added = fact_ranking.pointer_scores(["m2#0", "m2#1", "m1#x#0", "m3#0", "m2"], ranks, 10)
    weight = fact_ranking.POINTER_WEIGHT
    assert added == {"m2#0": weight / 11, "m2#1": weight / 11, "m1#x#0": weight / 12}
    # A pointer never outweighs being first in both fused rankings (1/11 + 1/11).
    assert weight / 11 < 2 / 11


def test_the_day_a_question_names() -> None:
    assert asked_day("What painting did Mel show on October 13, 2023?") == (2023, 10, 13)
    assert asked_day("What did Gina find on 1 February, 2023?") == (2023, 2, 1)
    assert asked_day("Which team did Tim sign with on 21st May?") == (None, 5, 21)
    assert asked_day("Where was the photo from December 1,2023 taken?") == (2023, 12, 1)
    # A month alone, two days, or no day of a month name no one day.
    assert asked_day("What did Caroline paint in October 2023?") is None
    assert asked_day("Where was John between August 11 and August 15 2023?") is None
    assert asked_day("What may 3 people do?") is None
    assert asked_day("Was it on June 45?") is None


def test_on_day_reads_the_stored_timestamp() -> None:
    assert on_day("2023-10-13T18:00:00Z", (2023, 10, 13))
    assert on_day("2023-10-13T18:00:00Z", (None, 10, 13))
    assert not on_day("2022-10-13T18:00:00Z", (2023, 10, 13))
    assert not on_day("2023-10-14T18:00:00Z", (None, 10, 13))
    assert not on_day(None, (None, 10, 13))
    assert not on_day("2023-10", (None, 10, 13))


def test_a_question_that_asks_when_and_a_passage_that_states_a_time() -> None:
    assert asked_time("When did Caroline go to the support group?").when
    assert asked_time("What year did Nate win?").when
    assert not asked_time("What did Caroline research?").reorders
    assert states_time("I went to a support group yesterday.")
    assert states_time("We moved here 4 years ago")
    assert states_time("Last Friday I finished it")
    # "may" the verb is not a month; words merely containing one are not times.
    assert not states_time("You may like the yearbook, Mayday!")


def test_the_time_factors_multiply() -> None:
    asked = asked_time("When did Mel paint on October 13, 2023?")
    assert asked == AskedTime(month=(10, 2023), day=(2023, 10, 13), when=True)
    day = Passage("m1#0", "m1", "user", None, 0, 9, "yesterday", "2023-10-13T10:00:00Z")
    month = Passage("m2#0", "m2", "user", None, 0, 4, "text", "2023-10-20T10:00:00Z")
    other = Passage("m3#0", "m3", "user", None, 0, 4, "text", "2023-11-13T10:00:00Z")
    assert time_factor(day, asked) == 3.0 * 4.0 * 2.0
    assert time_factor(month, asked) == 3.0
    assert time_factor(other, asked) == 1.0
    # The day's passage at a tenth of the score still comes first.
    scores = {other.id: 1.0, month.id: 0.3, day.id: 0.1}
    assert order_passages([other, month, day], scores, asked) == [day, other, month]


def test_when_lifts_a_passage_that_states_a_time() -> None:
    said = passage("I went to the pottery class yesterday", 1)
    plain = passage("The pottery class was fun", 2)
    scores = {said.id: 0.06, plain.id: 0.1}
    assert order_passages([plain, said], scores, "When did she go to pottery?") == [said, plain]
    assert order_passages([plain, said], scores, "Where did she do pottery?") == [plain, said]


def test_when_alone_reorders_the_first_passages_only() -> None:
    asked = asked_time("When did she go to pottery?")
    found = [passage(f"pottery class number {n}", n) for n in range(WHEN_DEPTH)]
    late = passage("pottery class yesterday", WHEN_DEPTH)
    early = passage("pottery class last week", WHEN_DEPTH - 1)
    found[-1] = early
    scores = {p.id: 1.0 - p_n / 1000 for p_n, p in enumerate([*found, late])}
    ordered = list(reorder_head([*found, late], scores, asked))
    # Within the first WHEN_DEPTH the passage that states a time goes first; the one
    # after them keeps its place in the fused order.
    assert ordered[0] == early
    assert ordered[-1] == late
    assert sorted(p.id for p in ordered) == sorted(p.id for p in [*found, late])


def link(subject: str, predicate: str, obj: str, *, id: str) -> Fact:
    """A fact joining two entities (hop 1 from `subject`)."""
    return dataclasses.replace(
        fact(f"{subject} {predicate} {obj}", id=id, subject=subject),
        predicate=predicate,
        object=obj,
        object_kind="entity",
        object_key=obj.lower(),
    )


def sean_pool() -> list[Candidate]:
    """Sean's facts and, at hop 2, those of Vera (his partner) and Acme (his employer)."""
    hop1 = [
        fact("Sean is allergic to kiwi fruit", id="s1", subject="Sean"),
        link("Sean", "is the partner of", "Vera", id="s2"),
        link("Sean", "works at", "Acme", id="s3"),
        fact("Sean lives in Ljubljana", id="s4", subject="Sean"),
    ]
    vera = [
        fact("Vera plays hurling", id="v1", subject="Vera"),
        fact("Vera lives in Cork", id="v2", subject="Vera"),
        fact("Vera is allergic to celery", id="v3", subject="Vera"),
    ]
    acme = [fact("Acme makes paint", id="a1", subject="Acme")]
    return [
        *(Candidate(f, 1, (), "sean") for f in hop1),
        *(Candidate(f, 2, ("Sean", "Vera"), "sean", "vera") for f in vera),
        *(Candidate(f, 2, ("Sean", "Acme"), "sean", "acme") for f in acme),
    ]


def test_neutral_question_takes_the_names_out_as_whole_words() -> None:
    neutral = fact_ranking.neutral_question
    assert neutral("What is Sean's partner allergic to?", ["sean"]) == (
        "What is someone's partner allergic to?"
    )
    assert neutral("Who runs Project Halyard for SEAN?", ["project halyard", "Sean"]) == (
        "Who runs someone for someone?"
    )
    # Part of a longer word is not the name.
    assert neutral("Did Seanna call Sean?", ["sean"]) == "Did Seanna call someone?"
    assert neutral("Where is Sean?", []) == "Where is Sean?"


def test_a_path_follows_the_link_nearest_the_question_to_its_entitys_nearest_facts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pool = sean_pool()
    question = "What is Sean's partner allergic to?"
    # The question's cosines favour Sean's own facts; its link to Vera is nearer the
    # question than the one to Acme, and Vera's facts are all far from a question
    # that names Sean.
    sims = {"s1": 0.75, "s2": 0.6, "s3": 0.4, "s4": 0.41, "v1": 0.2, "v2": 0.3, "v3": 0.46}
    # With Sean taken out, Vera's allergy is nearest, then where she lives.
    neutral = {"v1": 0.1, "v2": 0.35, "v3": 0.7, "a1": 0.05}
    ranked = rank_facts(question, pool, sims, ["sean"], neutral=neutral)
    ids = [s.candidate.fact.id for s in ranked]
    # The kept fact first (the rule's floor and drop-off), then the paths: each link
    # (the nearer first) followed by its entity's fact nearest the neutral question.
    assert ids == ["s1", "s2", "v3", "s3", "a1"]
    assert [s.path for s in ranked] == [False, True, True, True, True]
    assert [s.neutral for s in ranked[1:5]] == [None, 0.7, None, 0.05]
    # With two facts a link, Vera's next nearest follows her allergy.
    monkeypatch.setattr(fact_ranking, "PATH_FACTS", 2)
    ranked = rank_facts(question, pool, sims, ["sean"], neutral=neutral)
    assert [s.candidate.fact.id for s in ranked] == ["s1", "s2", "v3", "v2", "s3", "a1"]
    # One link: only the nearest is followed.
    monkeypatch.setattr(fact_ranking, "PATH_LINKS", 1)
    ranked = rank_facts(question, pool, sims, ["sean"], neutral=neutral)
    assert [s.candidate.fact.id for s in ranked] == ["s1", "s2", "v3", "v2"]
    # Without the neutral cosines (none asked for) only the rule's facts come back.
    assert [s.candidate.fact.id for s in rank_facts(question, pool, sims, ["sean"])] == ["s1"]


def test_paths_are_capped_and_never_repeat_a_kept_fact(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fact_ranking, "PATH_LINKS", 1)
    monkeypatch.setattr(fact_ranking, "PATH_FACTS", 1)
    pool = sean_pool()
    # The link itself passes the floor and is kept: the path does not return it twice.
    sims = {"s1": 0.7, "s2": 0.72, "s3": 0.4, "s4": 0.41, "v1": 0.2, "v2": 0.3, "v3": 0.46}
    neutral = {"v1": 0.1, "v2": 0.35, "v3": 0.7}
    question = "What is Sean's partner allergic to?"
    ranked = rank_facts(question, pool, sims, ["sean"], neutral=neutral)
    assert [s.candidate.fact.id for s in ranked] == ["s2", "s1", "v3"]
    # A fact without a neutral cosine (not yet embedded) competes by its words.
    ranked = rank_facts("Where does Sean's partner live?", pool, sims, ["sean"], neutral={})
    assert [s.candidate.fact.id for s in ranked if s.path] == ["v2"]


def test_words_are_skipped_only_where_they_would_change_nothing() -> None:
    pool = sean_pool()
    question = "What is Sean's partner allergic to?"
    sims = {"s1": 0.75, "s2": 0.6, "s3": 0.4, "s4": 0.41, "v1": 0.2, "v2": 0.3, "v3": 0.46}
    sims["a1"] = 0.1
    neutral = {"v1": 0.1, "v2": 0.35, "v3": 0.7, "a1": 0.05}

    def chosen(ranked: list) -> list[tuple[str, float, bool]]:
        return [(s.candidate.fact.id, s.score, s.path) for s in ranked]

    full = rank_facts(question, pool, sims, ["sean"], neutral=neutral, explain=True)
    quick = rank_facts(question, pool, sims, ["sean"], neutral=neutral, explain=False)
    # Every candidate has both cosines: the same facts, scores and paths without words.
    assert chosen(quick) == chosen(full)
    assert all(s.words == 0.0 for s in quick) and any(s.words > 0 for s in full)
    # A fact without a cosine (or a path fact without a neutral one) is ranked by its
    # words: they are computed then, explain or not.
    for missing in ({**sims, "s1": None}, sims):
        given = {k: v for k, v in missing.items() if v is not None}
        held = neutral if missing is not sims else {k: v for k, v in neutral.items() if k != "v3"}
        a = rank_facts(question, pool, given, ["sean"], neutral=held, explain=False)
        b = rank_facts(question, pool, given, ["sean"], neutral=held, explain=True)
        assert [(s.candidate.fact.id, s.words) for s in a] == [
            (s.candidate.fact.id, s.words) for s in b
        ]
        assert any(s.words > 0 for s in a)
