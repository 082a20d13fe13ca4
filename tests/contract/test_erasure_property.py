"""Property: after erasing a name, no recall (any controls) says anything about it, the
rest of the project is kept, and the other project is unchanged. Random small memories
(facts and messages across roles, in two projects) on every Store, embeddings off.

Names are checked with the reference rule (candidate_spans, as a question finds names),
independent of the erasure code's own matcher.
"""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.adapters.sqlite.store import SqliteStore
from taisce.api import bodies
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.domain.model import ROLES
from taisce.domain.names import candidate_spans, normalize_name
from taisce.service.memory import Memory
from tests.moto_server import shared_moto

# Names that overlap, differ only by case, width or Unicode form, or fold to another
# length ("Straße" → "strasse"), so masking must map offsets back.
NAMES = [
    "Atlas",
    "Atlas Corp",
    "Maya Okafor",
    "Acme",
    "Al",
    "Alice",
    "Zoë",
    "Straße",
    "São Paulo",
    "AT&T",
    "\uff26\uff55\uff4c\uff4c \uff2d\uff4f\uff4f\uff4e",  # full-width "Full Moon"
]
WORDS = ["met", "likes", "the", "in", "Dublin", "yesterday", "and", "café", "!", "—", "s"]
PREDICATES = ["works at", "knows", "lives in", "likes"]
FACT_FIELDS = ("subject", "predicate", "object", "statement", "quote", "context")


def variant(name: str, how: int) -> str:
    return [name, name.upper(), name.lower(), name.replace(" ", "  \t")][how % 4]


names = st.sampled_from(NAMES)
roles = st.sampled_from(ROLES)


@st.composite
def sentences(draw: st.DrawFn, names: st.SearchStrategy[str] = names) -> str:
    parts = draw(
        st.lists(
            st.one_of(
                st.sampled_from(WORDS),
                st.builds(variant, names, st.integers(0, 3)),
                st.builds(lambda n: n + "'s", names),
            ),
            min_size=1,
            max_size=8,
        )
    )
    end = draw(st.sampled_from([".", "!", "?", "", "\n"]))
    return " ".join(parts) + end


@st.composite
def facts(draw: st.DrawFn, names: st.SearchStrategy[str] = names) -> dict[str, Any]:
    kind = draw(st.sampled_from(["entity", "entity", "value"]))
    fact: dict[str, Any] = {
        "subject": variant(draw(names), draw(st.integers(0, 3))),
        "predicate": draw(st.sampled_from(PREDICATES)),
        "object": draw(names) if kind == "entity" else draw(sentences(names)),
        "object_kind": kind,
        "source_role": draw(roles),
    }
    for field in ("statement", "quote", "context"):
        if draw(st.booleans()):
            fact[field] = draw(sentences(names))
    return fact


@st.composite
def messages(draw: st.DrawFn, names: st.SearchStrategy[str] = names) -> dict[str, Any]:
    text = " ".join(draw(st.lists(sentences(names), min_size=1, max_size=6)))
    message: dict[str, Any] = {"role": draw(roles), "content": text}
    if draw(st.booleans()):
        message["source"] = "chat:" + variant(draw(names), 2)
    return message


def memories(names: st.SearchStrategy[str] = names) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "facts": st.lists(facts(names), min_size=1, max_size=8),
            "messages": st.lists(messages(names), max_size=3),
        }
    )


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The name to erase, then both projects' memories, which name it often."""
    target = draw(names)
    biased = st.one_of(st.just(target), names)
    return target, draw(memories(biased)), draw(memories(biased))


controls = st.fixed_dictionaries(
    {
        "question": st.builds(
            lambda picked: " and ".join(picked), st.lists(names, min_size=1, max_size=4)
        ),
        "source_roles": st.lists(roles, min_size=1, max_size=4, unique=True),
        "hops": st.integers(1, 2),
        "surfaces": st.permutations(["facts", "reports", "passages"]).flatmap(
            lambda s: st.integers(1, 3).map(lambda n: s[:n])
        ),
        "themes": st.booleans(),
        "max_characters": st.integers(1, 16_000),
    }
)


def names_it(text: object, key: str) -> bool:
    return isinstance(text, str) and any(s.key == key for s in candidate_spans(text))


def response_texts(answer: dict[str, Any]) -> list[str]:
    texts: list[str] = []
    for f in answer["facts"]:
        texts += [f[k] for k in FACT_FIELDS if f.get(k)] + list(f.get("path", []))
    for r in answer["reports"]:
        texts += [r["title"], r["summary"], *r["path"]]
    for p in answer["passages"]:
        texts += [p["quote"], p["source"] or ""]
    return texts


def store_memory(memory: Memory, project: str, held: dict[str, Any]) -> None:
    memory.store_facts(project, FactsRequest.model_validate({"facts": held["facts"]}))
    if held["messages"]:
        given = [{**m, "id": f"m{n}"} for n, m in enumerate(held["messages"])]
        memory.store_messages(project, MessagesRequest.model_validate({"messages": given}))


def fact_names_it(f: Any, key: str) -> bool:
    return any(names_it(getattr(f, k), key) for k in FACT_FIELDS)


def test_nothing_about_an_erased_name_is_recalled(store: Any) -> None:
    if isinstance(store, DynamoDbStore):
        # Erasure and these checks Scan the whole table: on a table of this test's own
        # they read only its own items, not everything the suite stored before.
        store = shared_moto().table_named("taisce-erasure-property").store()
    memory = Memory(store, Limits(bundle_characters=16_000, max_rows=200))
    examples = 60 if isinstance(store, SqliteStore) else 8

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(
        scenario=scenarios(),
        how=st.integers(0, 3),
        asks=st.lists(controls, min_size=1, max_size=4),
    )
    def check(
        scenario: tuple[str, dict[str, Any], dict[str, Any]], how: int, asks: list[dict[str, Any]]
    ) -> None:
        name, mine, theirs = scenario
        target = variant(name, how)
        run = uuid.uuid4().hex[:10]
        project, other = f"erase-{run}", f"keep-{run}"
        key = normalize_name(target)
        store_memory(memory, project, mine)
        store_memory(memory, other, theirs)
        kept = {f.id for f in store.project_facts(project) if not fact_names_it(f, key)}
        others_before = [
            bodies.recall(
                memory.recall(
                    other,
                    RecallRequest.model_validate({**a, "question": target + " " + a["question"]}),
                )
            )
            for a in asks
        ]

        # Every entity whose name holds it goes too, and a name that is no entity may
        # mask any share: both as the preview allows (docs/API.md, "Erasure").
        spared = memory.preview_erasure(project, target).reach.spared
        preview = memory.preview_erasure(project, target, also=spared)
        memory.erase_now(project, target, also=spared, token=preview.token)

        for ask in asks:
            for question in (ask["question"], target, f"{ask['question']} {target}"):
                answer = bodies.recall(
                    memory.recall(
                        project, RecallRequest.model_validate({**ask, "question": question})
                    )
                )
                assert not [t for t in response_texts(answer) if names_it(t, key)]
        # Nothing stored names it; everything that did not name it is kept.
        assert {f.id for f in store.project_facts(project)} == kept
        assert key not in set(store.project_entities(project))
        for m in store.project_messages(project):
            assert not names_it(m.content, key) and not names_it(m.source, key)
            original = mine["messages"][int(m.id[1:])]
            assert len(m.content) == len(original["content"])  # offsets stay valid
            assert len(m.source or "") == len(original.get("source") or "")
            for p in store.passages_of(project, m.id):
                assert m.content[p.start : p.end] == p.quote
                assert not names_it(p.quote, key) and not names_it(p.source, key)
        assert memory.erased_names(project, [key]) == {key}
        # The other project answers exactly as before.
        assert others_before == [
            bodies.recall(
                memory.recall(
                    other,
                    RecallRequest.model_validate({**a, "question": target + " " + a["question"]}),
                )
            )
            for a in asks
        ]

    check()
