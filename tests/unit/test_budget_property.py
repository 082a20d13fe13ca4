"""The character budget, checked through the domain over a real SQLite store.

For any memory and any valid controls: `characters` is the code points of exactly
the counted fields (recounted here, independently of taisce.domain.budget), never
over max_characters; items come whole and in order, so any answer is a prefix of
the complete answer and is truncated exactly when it is shorter; every fact is the
stored fact, said by an allowed role; and the same request gives the same answer.
"""

# ruff: noqa: RUF001 - full-width and other look-alike characters are the point

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from taisce.adapters.sqlite.store import SqliteStore
from taisce.api import bodies
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.fact_ranking import FEW_FACTS, MAX_FACTS, fact_text
from taisce.domain.ingest import FactsRequest
from taisce.domain.model import Fact
from taisce.domain.names import normalize_name
from taisce.domain.words import words
from taisce.service.memory import Memory

BUDGET = 800
ROW_LIMIT = 10
LIMITS = Limits(bundle_characters=BUDGET, max_rows=ROW_LIMIT)
COMPLETE = Limits(bundle_characters=10**9, max_rows=10**6)
NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
RECORDED_AT = "2024-05-01T12:00:00Z"
ROLES = ("user", "assistant", "system", "tool")
SURFACES = ("facts", "reports", "passages")

# Entity names and ways of writing each. No name is a run of whole words of another.
SPELLINGS = {
    "Atlas": ["Atlas", "ATLAS", "atlas"],
    "Acme Corp": ["Acme Corp", "ACME  corp", "Ａｃｍｅ Ｃｏｒｐ"],
    "Dublin": ["Dublin", "DUBLIN"],
    "Zoë Ó Briain": ["Zoë Ó Briain", "ZOË Ó BRIAIN", "Zoe\u0308 O\u0301 Briain"],
    "Straße": ["Straße", "STRASSE"],
    "北京": ["北京"],
    "हिन्दी": ["हिन्दी"],
}
NAMES = [s for spellings in SPELLINGS.values() for s in spellings]
VALUES = ["42", "Dublin", "blue 🚀", "since 2021", "Straße", "北京"]
PREDICATES = ["works at", "lives in", "knows", "is based in", "mag", "住在"]
# The single-valued ones (docs/API.md, "Time and filters"): a later fact of the same
# subject, role and predicate with another object closes the earlier one.
SINGLE_VALUED = {"works at", "lives in", "is based in"}
EXTRAS = [None, "I work there", "«exact words» 🚀", "since 2021", "e\u0301", "x" * 120]


def recount(answer: dict[str, Any]) -> int:
    """Code points of exactly the fields API.md counts."""
    counted = {
        "facts": ("subject", "predicate", "object", "statement", "source_role", "quote", "context"),
        "reports": ("title", "summary"),
        "passages": ("role", "source", "quote"),
    }
    total = 0
    for kind, fields in counted.items():
        for item in answer[kind]:
            texts = [item.get(f) for f in fields] + list(item.get("path") or [])
            total += sum(len(t) for t in texts if t is not None)
    return total


@st.composite
def facts_in(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["entity", "entity", "value"]))
    fact: dict[str, Any] = {
        "subject": draw(st.sampled_from(NAMES)),
        "predicate": draw(st.sampled_from(PREDICATES)),
        "object": draw(st.sampled_from(NAMES if kind == "entity" else VALUES)),
        "source_role": draw(st.sampled_from(ROLES)),
    }
    if kind == "value" or draw(st.booleans()):
        fact["object_kind"] = kind
    for field in ("quote", "context"):
        value = draw(st.sampled_from(EXTRAS))
        if value is not None:
            fact[field] = value
    if draw(st.booleans()):
        fact["statement"] = draw(st.sampled_from(["A statement.", "Ráiteas 🚀 fada " * 3]))
    return fact


@st.composite
def controls(draw: st.DrawFn) -> dict[str, Any]:
    sent: dict[str, Any] = {}
    if draw(st.booleans()):
        sent["max_characters"] = draw(
            st.integers(1, BUDGET) | st.integers(1, 200) | st.sampled_from([1, BUDGET])
        )
    if draw(st.booleans()):
        sent["max_rows"] = draw(st.integers(1, ROW_LIMIT))
    if draw(st.integers(0, 3)):
        sent["source_roles"] = draw(st.permutations(ROLES).flatmap(_nonempty_prefix))
    if draw(st.integers(0, 3)):
        sent["hops"] = draw(st.sampled_from([1, 2]) | st.integers(-3, 5))
    if not draw(st.integers(0, 3)):
        sent["surfaces"] = draw(st.permutations(SURFACES).flatmap(_nonempty_prefix))
    for control in ("max_characters", "max_rows", "source_roles", "hops", "surfaces"):
        if control not in sent and draw(st.booleans()):
            sent[control] = None  # null counts as not sent
    return sent


def _nonempty_prefix(items: list[str]) -> st.SearchStrategy[list[str]]:
    return st.integers(1, len(items)).map(lambda n: list(items[:n]))


@st.composite
def memories(draw: st.DrawFn) -> tuple[list[dict[str, Any]], str]:
    """Facts, and a question naming mostly names those facts use."""
    facts = draw(st.lists(facts_in(), min_size=draw(st.sampled_from([0, 1, 4, 8])), max_size=16))
    used = [f["subject"] for f in facts] + [
        f["object"] for f in facts if f.get("object_kind", "entity") == "entity"
    ]
    pool = st.sampled_from([*NAMES, "nobody"])
    if used:
        pool = st.sampled_from(used) | pool
    names = draw(st.lists(pool, min_size=1, max_size=3))
    return facts, "Tell me about " + " and ".join(names) + "?"


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    store = SqliteStore(Path(tmp_path_factory.mktemp("budget")) / "t.sqlite3")
    yield Memory(store, LIMITS, clock=lambda: NOW)
    store.close()


def store(memory: Memory, facts: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """A fresh project holding these facts; the facts as GET /v1/facts returns them."""
    project = f"p-{uuid.uuid4().hex}"
    stored: list[dict[str, Any]] = []
    if facts:
        ids = memory.store_facts(project, FactsRequest.model_validate({"facts": facts}))
        for fact_id, given_fact in zip(ids, facts, strict=True):
            if any(f["id"] == fact_id for f in stored):
                continue  # identical to an earlier fact of the batch: stored once
            stored.append(
                {
                    "id": fact_id,
                    "subject": given_fact["subject"],
                    "predicate": given_fact["predicate"],
                    "object": given_fact["object"],
                    "object_kind": given_fact.get("object_kind", "entity"),
                    "statement": given_fact.get("statement")
                    or f"{given_fact['subject']} {given_fact['predicate']} {given_fact['object']}",
                    "source_role": given_fact["source_role"],
                    "quote": given_fact.get("quote"),
                    "context": given_fact.get("context"),
                    "message_id": None,
                    "valid_from": None,
                    "valid_to": None,
                    "recorded_at": RECORDED_AT,
                    "quote_start": None,
                    "quote_end": None,
                }
            )
    # One batch, one start (recorded_at): each fact is closed at that start by any
    # later stored fact that contradicts it (a copy left out closes nothing).
    for i, early in enumerate(stored):
        if early["predicate"] in SINGLE_VALUED and any(
            normalize_name(late["subject"]) == normalize_name(early["subject"])
            and late["source_role"] == early["source_role"]
            and late["predicate"] == early["predicate"]
            and normalize_name(late["object"]) != normalize_name(early["object"])
            for late in stored[i + 1 :]
        ):
            early["valid_to"] = RECORDED_AT
    return project, stored


def recall(memory: Memory, project: str, question: str, sent: dict[str, Any]) -> dict[str, Any]:
    return bodies.recall(
        memory.recall(project, RecallRequest.model_validate({"question": question, **sent}))
    )


def asked_names(question: str) -> list[str]:
    """The names a generated question ("Tell me about A and B?") writes."""
    return question.removeprefix("Tell me about ").removesuffix("?").split(" and ")


def ends(f: dict[str, Any]) -> list[str]:
    """The normalised names a fact links: its subject, and its object if an entity."""
    subject = [normalize_name(f["subject"])]
    return subject + ([normalize_name(f["object"])] if f["object_kind"] == "entity" else [])


def expected_facts(stored: list[dict[str, Any]], question: str, roles, hops: int) -> list[dict]:
    """The facts the complete answer is drawn from, in order, worked out from API.md's
    rules over the stored facts (before "never twice", which once_each_text applies)."""

    def key(name: str) -> str:
        return normalize_name(name)

    known = {k for f in stored for k in ends(f)}
    words = asked_names(question)
    matched = list(dict.fromkeys(key(w) for w in words if key(w) in known))
    # Facts valid now (NOW is also when they were recorded): closed ones are not.
    visible = [f for f in stored if f["source_role"] in roles and f["valid_to"] is None]
    hop1 = [f for k in matched for f in visible if k in ends(f)]
    hop1 = list({f["id"]: f for f in hop1}.values())
    if hops < 2:
        return hop1
    links: dict[str, list[str]] = {}
    for f in hop1:
        subject, obj = (
            key(f["subject"]),
            (key(f["object"]) if f["object_kind"] == "entity" else None),
        )
        if subject in matched and obj is not None and obj not in matched:
            links.setdefault(obj, [f["subject"], f["object"]])
        elif obj in matched and subject not in matched:
            links.setdefault(subject, [f["object"], f["subject"]])
    taken = {f["id"] for f in hop1}
    hop2: list[dict[str, Any]] = []
    for linked in links:
        for f in visible:
            if linked in ends(f) and f["id"] not in taken:
                taken.add(f["id"])
                through = min((k for k in ends(f) if k in links), key=list(links).index)
                hop2.append({**f, "path": links[through]})
    return hop1 + hop2


def texts_of(fact: dict[str, Any]) -> list[str]:
    """A fact's statement and quote as "never twice" compares them."""
    return [" ".join(t.split()).casefold() for t in (fact["statement"], fact["quote"]) if t]


def once_each_text(facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """API.md: a bundle never holds two items with the same text (a fact's statement
    or quote, whatever the case and spacing); a later copy is left out."""
    seen: set[str] = set()
    kept = []
    for f in facts:
        texts = texts_of(f)
        if texts[0] not in seen:
            seen.update(texts)
            kept.append(f)
    return kept


def few_facts(want: list[dict[str, Any]], question: str) -> set[str]:
    """The ids of the hop-1 facts of each matched entity that holds at most FEW_FACTS
    of them, each fact counted for the first name of the question it holds."""
    order = list(dict.fromkeys(normalize_name(n) for n in asked_names(question)))
    held: dict[str, list[str]] = {}
    for f in want:
        if "path" in f:
            continue
        first = min((k for k in ends(f) if k in order), key=order.index)
        held.setdefault(first, []).append(f["id"])
    return {i for ids in held.values() if len(ids) <= FEW_FACTS for i in ids}


def asked_words(stored: list[dict[str, Any]], question: str, roles: list[str]) -> set[str]:
    """The question's words that are not a name the asked roles use (nor filler)."""
    known = {
        normalize_name(f[k])
        for f in stored
        if f["source_role"] in roles
        for k in ("subject", "object")
        if k == "subject" or f["object_kind"] == "entity"
    }
    names = asked_names(question)
    unknown = " ".join(n for n in names if normalize_name(n) not in known)
    return set(words(unknown))


def fact_of(item: dict[str, Any]) -> Fact:
    """A returned fact as the domain's record (for the words it holds)."""
    fields = {k: v for k, v in item.items() if k != "path"}
    subject_key = normalize_name(item["subject"])
    return Fact(subject_key=subject_key, object_key=None, **fields)


def check_recall(
    memory: Memory, facts: list[dict[str, Any]], question: str, sent: dict[str, Any]
) -> None:
    """Store the facts in a fresh project, recall, and check every rule."""
    project, stored = store(memory, facts)
    answer = recall(memory, project, question, sent)
    used = answer["controls"]

    # The controls in effect, as the echo says.
    assert used["max_characters"] == (sent.get("max_characters") or BUDGET)
    assert used["max_rows"] == (sent.get("max_rows") or ROW_LIMIT)
    assert used["source_roles"] == (sent.get("source_roles") or ["user"])
    hops = sent.get("hops")
    assert used["hops"] == (1 if hops is None else min(2, max(1, hops)))
    assert used["surfaces"] == (sent.get("surfaces") or list(SURFACES))
    assert answer["degraded"] == [s for s in used["surfaces"] if s != "facts"]
    assert answer["reports"] == [] and answer["passages"] == []

    # The budget: counted exactly, never exceeded; the row limit too.
    assert answer["characters"] == recount(answer)
    assert answer["characters"] <= used["max_characters"]
    rows = len(answer["facts"]) + len(answer["reports"]) + len(answer["passages"])
    assert rows <= used["max_rows"]

    # No item is cut: each fact is the stored fact, whole, said by an allowed role.
    by_id = {f["id"]: f for f in stored}
    returned_ids = [f["id"] for f in answer["facts"]]
    assert len(returned_ids) == len(set(returned_ids))
    for fact in answer["facts"]:
        path = fact.get("path")
        assert {k: v for k, v in fact.items() if k != "path"} == by_id[fact["id"]]
        assert fact["source_role"] in used["source_roles"]
        assert path is None or (len(path) == 2 and used["hops"] == 2)

    # Whole items in order: a prefix of the complete answer, truncated iff shorter.
    complete_memory = Memory(memory.store, COMPLETE, clock=lambda: NOW)
    unlimited = {k: v for k, v in sent.items() if k not in ("max_characters", "max_rows")}
    complete = recall(complete_memory, project, question, unlimited)
    assert complete["truncated"] is False
    assert answer["facts"] == complete["facts"][: len(answer["facts"])]
    assert answer["truncated"] is (len(answer["facts"]) < len(complete["facts"]))
    at_budget = recall(memory, project, question, unlimited)  # the server's own limits
    if answer["facts"] == at_budget["facts"] and not at_budget["truncated"]:
        assert answer["truncated"] is False
    if not answer["facts"]:
        assert answer["characters"] == 0

    # The complete answer is the one API.md's rules give.
    if "facts" in used["surfaces"]:
        want = expected_facts(stored, question, used["source_roles"], used["hops"])
    else:
        want = []
    asked = asked_words(stored, question, used["source_roles"])
    if not asked:
        # Only names asked about: every visible fact of the matched entities, in order,
        # each text once.
        assert complete["facts"] == once_each_text(want)
    else:
        # A name that matched nothing is asked words (API.md, "the facts of the matched
        # entities most related to it"): facts holding one of them, at most MAX_FACTS;
        # then every hop-1 fact of a matched entity that holds at most FEW_FACTS (all
        # that is known of it). Each one the rules above would give, each text once
        # (the copy left out may be one the asked words did not choose).
        by_want = {f["id"]: f for f in want}
        few = few_facts(want, question)
        assert once_each_text(complete["facts"]) == complete["facts"]
        worded = [f for f in complete["facts"] if f["id"] not in few]
        assert len(worded) <= MAX_FACTS
        for fact in complete["facts"]:
            assert by_want[fact["id"]] == fact
        for fact in worded:
            assert asked & set(words(fact_text(fact_of(fact))))
        shown = {t for f in complete["facts"] for t in texts_of(f)}
        for fact_id in few:
            assert texts_of(by_want[fact_id])[0] in shown

    event(f"facts returned: {min(len(answer['facts']), 3)}+, truncated: {answer['truncated']}")
    event(f"hop-2 facts returned: {any('path' in f for f in answer['facts'])}")
    event(f"hop-2 facts in the complete answer: {any('path' in f for f in complete['facts'])}")

    # Stable: the same memory and request give the same answer.
    assert recall(memory, project, question, sent) == answer


SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@SETTINGS
@given(scenario=memories(), sent=controls())
def test_the_budget_holds_for_any_memory_and_controls(
    memory: Memory, scenario: tuple[list[dict[str, Any]], str], sent: dict[str, Any]
) -> None:
    facts, question = scenario
    check_recall(memory, facts, question, sent)


@SETTINGS
@given(
    facts=st.lists(facts_in(), min_size=6, max_size=20),
    names=st.lists(st.sampled_from(NAMES), min_size=1, max_size=2),
    max_characters=st.integers(1, BUDGET),
    max_rows=st.none() | st.integers(1, ROW_LIMIT),
)
def test_the_budget_holds_when_following_links(
    memory: Memory,
    facts: list[dict[str, Any]],
    names: list[str],
    max_characters: int,
    max_rows: int | None,
) -> None:
    sent = {
        "max_characters": max_characters,
        "max_rows": max_rows,
        "source_roles": list(ROLES),
        "hops": 2,
        "surfaces": ["facts"],
    }
    check_recall(memory, facts, "Tell me about " + " and ".join(names) + "?", sent)


def test_the_first_fact_too_large_gives_nothing_and_truncated(memory: Memory) -> None:
    fact = {
        "subject": "Atlas",
        "predicate": "works at",
        "object": "Acme Corp",
        "source_role": "user",
    }
    project, _ = store(memory, [fact])
    size = len("Atlas" + "works at" + "Acme Corp" + "Atlas works at Acme Corp" + "user")
    fits = recall(memory, project, "Where does Atlas work?", {"max_characters": size})
    assert (fits["characters"], fits["truncated"], len(fits["facts"])) == (size, False, 1)
    short = recall(memory, project, "Where does Atlas work?", {"max_characters": size - 1})
    assert (short["characters"], short["truncated"], short["facts"]) == (0, True, [])


def test_an_empty_answer_is_not_truncated(memory: Memory) -> None:
    project, _ = store(memory, [])
    answer = recall(memory, project, "Where does Atlas work?", {"max_characters": 1})
    assert (answer["characters"], answer["truncated"], answer["facts"]) == (0, False, [])


def test_a_hop_2_path_is_counted(memory: Memory) -> None:
    project, _ = store(
        memory,
        [
            {
                "subject": "Atlas",
                "predicate": "works at",
                "object": "Acme Corp",
                "source_role": "user",
            },
            {
                "subject": "Acme Corp",
                "predicate": "is based in",
                "object": "Dublin",
                "source_role": "user",
            },
        ],
    )
    # A question asking nothing beyond the name: every fact of hop 1 and hop 2 comes back.
    answer = recall(memory, project, "Tell me about Atlas", {"hops": 2})
    hop1, hop2 = answer["facts"]
    assert "path" not in hop1
    assert hop2["path"] == ["Atlas", "Acme Corp"]
    assert (
        answer["characters"]
        == recount(answer)
        == (
            len("Atlasworks atAcme CorpAtlas works at Acme Corpuser")
            + len("Acme Corpis based inDublinAcme Corp is based in Dublinuser")
            + len("AtlasAcme Corp")
        )
    )


def test_the_row_limit_truncates(memory: Memory) -> None:
    facts = [
        {"subject": "Atlas", "predicate": "knows", "object": f"Friend {n}", "source_role": "user"}
        for n in range(3)
    ]
    project, _ = store(memory, facts)
    assert recall(memory, project, "Atlas?", {"max_rows": 3})["truncated"] is False
    two = recall(memory, project, "Atlas?", {"max_rows": 2})
    assert (len(two["facts"]), two["truncated"]) == (2, True)
