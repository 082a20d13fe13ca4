"""Erasure through Memory on every Store (see conftest.py): what goes, what stays,
tombstones, the audit record, and a failure part-way followed by a retry."""

from __future__ import annotations

from typing import Any

import pytest

from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.adapters.sqlite.store import SqliteStore
from taisce.adapters.sqlite.vectors import SqliteVectorIndex
from taisce.api import bodies
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.erasure import MASK, plan_erasure, subject_hash
from taisce.domain.ingest import FactsRequest
from taisce.domain.model import VectorItem
from taisce.domain.names import candidate_spans
from taisce.domain.reports import build_reports
from taisce.service.memory import Memory
from tests.contract.factories import fact, message, unique, with_passages
from tests.moto_server import shared_moto

ALL_ROLES = ["user", "assistant", "system", "tool"]


@pytest.fixture
def store(open_store: Any) -> Any:
    """Erasure Scans the whole table on DynamoDB: a table of this module's own keeps
    that to its own items, not everything the suite stored before."""
    opened = open_store()
    if isinstance(opened, DynamoDbStore):
        return shared_moto().table_named("taisce-erasure").store()
    return opened


@pytest.fixture
def project() -> str:
    return unique("proj")


@pytest.fixture
def memory(store: Any) -> Memory:
    return Memory(store, Limits(bundle_characters=16_000, max_rows=200))


def names(text: str | None, key: str) -> bool:
    """The reference rule: the name is found in the text as a question finds it."""
    return bool(text) and any(s.key == key for s in candidate_spans(text or ""))


def recall(memory: Memory, project: str, question: str, hops: int = 2) -> dict[str, Any]:
    request = RecallRequest.model_validate(
        {"question": question, "hops": hops, "source_roles": ALL_ROLES}
    )
    return bodies.recall(memory.recall(project, request))


def seed(store: Any, project: str) -> dict[str, Any]:
    f = {
        "works": fact("Atlas", "works at", "Acme Corp", role="user"),
        "manages": fact("Maya Okafor", "manages", "ATLAS", role="tool"),
        "mention": fact(
            "Maya Okafor", "likes", "tea", kind="value", statement="Maya likes tea, as atlas does."
        ),
        "corp": fact("Atlas Corp", "is based in", "Dublin", role="assistant"),
        "near": fact("Alice", "lives in", "Galway"),
        "keep": fact("Maya Okafor", "lives in", "Galway"),
    }
    store.put_facts(project, list(f.values()))
    m1 = message(
        "Maya lives in Galway.\nAtlas started at Acme last month.\nAlice likes Dublin.",
        source="chat:atlas",
    )
    m2 = message("Nothing about him here; Alice and Al met in Galway.", role="tool")
    messages, passages = with_passages(m1, m2, limit=30)
    store.put_messages(project, messages, passages)
    return {"facts": f, "m1": m1, "m2": m2}


def test_erasure_removes_facts_entities_and_text_naming_the_entity(
    store: Any, memory: Memory, project: str
) -> None:
    held = seed(store, project)
    f, m1 = held["facts"], held["m1"]
    before = store.passages_of(project, m1.id)

    # Atlas Corp holds the name: taken only when named (docs/API.md, "Erasure").
    counts = memory.erase_now(project, "  atlas ", also=["Atlas Corp"])

    assert counts["facts"] == 4  # works, manages, mention, corp
    assert counts["entities"] == 2  # atlas and atlas corp
    assert counts["messages"] == 1 and counts["passages"] >= 1
    left = {x.id for x in store.project_facts(project)}
    assert left == {f["near"].id, f["keep"].id}
    assert store.known_names(project, {"atlas", "atlas corp"}) == set()
    assert store.known_names(project, {"atlas", "acme corp", "maya okafor"}, ALL_ROLES) == {
        "maya okafor"
    }
    assert "atlas" not in set(store.project_entities(project))
    # A recall naming it finds nothing about it; the rest of memory answers as before.
    answer = recall(memory, project, "Atlas and Atlas Corp at Acme Corp with Maya Okafor")
    assert all(not names(x["statement"], "atlas") for x in answer["facts"])
    # The erased names are now only words that no remaining fact holds (docs/API.md,
    # "Which facts come back"): asked about by name alone, the rest of memory answers.
    answer = recall(memory, project, "Tell me about Maya Okafor")
    assert {x["id"] for x in answer["facts"]} == {f["keep"].id, f["near"].id}  # hop 2: Galway

    # The message keeps its id and length, the name's passage is gone, the others
    # still quote the content at their offsets; the source is masked too.
    (redacted,) = [m for m in store.project_messages(project) if m.id == m1.id]
    assert len(redacted.content) == len(m1.content)
    assert not names(redacted.content, "atlas") and not names(redacted.source, "atlas")
    assert len(redacted.source) == len(m1.source)
    after = store.passages_of(project, m1.id)
    assert [p.id for p in after] == [p.id for p in before if not names(p.quote, "atlas")]
    assert len(after) == len(before) - 1
    for p in after:
        assert redacted.content[p.start : p.end] == p.quote
        assert p.source == redacted.source
    assert "Maya lives in Galway." in redacted.content
    # "Al" is not "Alice" and not Atlas: the other message is untouched.
    (m2,) = [m for m in store.project_messages(project) if m.id == held["m2"].id]
    assert m2.content == held["m2"].content


def test_a_name_is_erased_where_words_are_written_joined_to_it(
    store: Any, memory: Memory, project: str
) -> None:
    """Korean particles after a name and Hebrew or Arabic prefixes before it are written
    in the same word (domain/affixes.py): the passages naming it go, and a longer word
    that only begins with the name is another word."""
    lines = [
        "김민수는 삼성전자에서 일해요.",
        "김민수전자는 회사예요.",
        "דני גר בחיפה.",
        "علي يسكن بالقاهرة.",
        "Nothing else here.",
    ]
    messages, passages = with_passages(*map(message, lines))
    assert [p.quote for p in passages] == lines
    store.put_messages(project, messages, passages)
    store.put_facts(
        project,
        [
            fact("김민수", "works at", "Samsung"),
            fact("Dani", "lives in", "חיפה"),
            fact("Ali", "lives in", "القاهرة"),
        ],
    )
    for name in ["김민수", "חיפה", "القاهرة"]:
        assert memory.erase_now(project, name)["facts"] == 1

    held = {x.id: x.content for x in store.project_messages(project)}
    left = [held[x.id] for x in messages]
    assert [set(text) <= {MASK, " "} for text in left] == [True, False, True, True, False]
    assert [left[1], left[4]] == [lines[1], lines[4]]
    assert [[p.quote for p in store.passages_of(project, x.id)] for x in messages] == [
        [],
        [lines[1]],
        [],
        [],
        [lines[4]],
    ]
    assert list(store.project_facts(project)) == []


def test_a_name_is_erased_where_it_is_written_in_a_case_form(
    store: Any, memory: Memory, project: str
) -> None:
    """Languages that inflect names write them in case forms (domain/inflections.py):
    the passages naming the name so go too; in Latin letters only in a text of such a
    language (an English "Dane" is not Dan)."""
    lines = [
        "Вчера я видел Ивана Петрова в Москве.",
        "Wczoraj rozmawiałem z Janem o pracy.",
        "Dane said hello to everyone.",
        "Иванов пришёл позже.",
    ]
    messages, passages = with_passages(*map(message, lines))
    store.put_messages(project, messages, passages)
    store.put_facts(project, [fact("Иван Петров", "works at", "Газпром"), fact("Jan", "is", "x")])
    assert memory.erase_now(project, "Иван Петров")["facts"] == 1
    assert memory.erase_now(project, "Jan")["facts"] == 1

    held = {x.id: x.content for x in store.project_messages(project)}
    left = [held[x.id] for x in messages]
    assert [set(text) <= {MASK, " "} for text in left] == [True, True, False, False]
    assert [left[2], left[3]] == [lines[2], lines[3]]  # "Иванов" is another name
    assert [[p.quote for p in store.passages_of(project, x.id)] for x in messages] == [
        [],
        [],
        [lines[2]],
        [lines[3]],
    ]


def test_erasure_keeps_other_projects_and_other_entities_counts(
    store: Any, memory: Memory, project: str
) -> None:
    other = unique("other")
    seed(store, project)
    seed(store, other)
    before = recall(memory, other, "Atlas Maya Okafor Alice Atlas Corp")
    memory.erase_now(project, "Atlas", also=["Atlas Corp"])
    assert recall(memory, other, "Atlas Maya Okafor Alice Atlas Corp") == before
    # Acme Corp lost its only fact (Atlas works at Acme Corp): no longer a live name.
    assert store.known_names(project, {"acme corp"}, ALL_ROLES) == set()
    assert store.known_names(other, {"acme corp", "atlas"}, ALL_ROLES) == {"acme corp", "atlas"}
    assert memory.erased_names(other, ["atlas"]) == set()


def test_erasing_twice_or_an_unknown_name_is_zero_and_audited_without_the_name(
    store: Any, memory: Memory, project: str
) -> None:
    seed(store, project)
    first = memory.erase_now(project, "Atlas")
    assert first["facts"] > 0
    assert memory.erase_now(project, "ATLAS") == dict.fromkeys(first, 0)
    assert memory.erase_now(project, "Nobody Known") == dict.fromkeys(first, 0)
    records = store.erasures(project)
    assert [r.subject_hash for r in records] == [
        subject_hash(project, "atlas"),
        subject_hash(project, "atlas"),
        subject_hash(project, "nobody known"),
    ]
    assert records[0].counts() == first
    assert records[0].erased_at <= records[1].erased_at
    assert all("atlas" not in repr(r).lower() for r in records)
    assert store.erasures(unique("none")) == []
    assert {r.id for r in records} <= {r.id for r in store.erasures()}


def test_a_tombstone_drops_late_facts_until_the_client_stores_the_name_again(
    store: Any, memory: Memory, project: str
) -> None:
    seed(store, project)
    memory.erase_now(project, "Atlas", also=["Atlas Corp"])
    assert memory.erased_names(project, ["atlas", "maya okafor"]) == {"atlas"}
    late = [
        fact("Atlas", "likes", "Dublin"),
        fact("Maya Okafor", "met", "atlas"),
        fact("Maya Okafor", "said", "hi", kind="value", quote="Atlas said hi"),
        fact("Maya Okafor", "likes", "Galway"),
    ]
    assert memory.drop_erased(project, late) == [late[3]]
    assert memory.drop_erased(project, []) == []
    # A client storing facts about the name on purpose lifts the tombstone.
    memory.store_facts(
        project,
        FactsRequest.model_validate(
            {
                "facts": [
                    {
                        "subject": "Maya",
                        "predicate": "knows",
                        "object": "Atlas",
                        "source_role": "user",
                    }
                ]
            }
        ),
    )
    assert memory.erased_names(project, ["atlas"]) == set()
    assert memory.drop_erased(project, late) == late
    assert store.known_names(project, {"atlas"}, ["user"]) == {"atlas"}


def test_a_failure_part_way_then_a_retry_finishes_the_erasure(
    store: Any, memory: Memory, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = seed(store, project)
    # The embedded store fails inside its one transaction (nothing changes); DynamoDB
    # fails after its facts are deleted, before the messages are rewritten.
    erasure = store.erasure_store
    step = "_redact_all" if hasattr(erasure, "_redact_all") else "_drop_reports"

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("crash part-way")

    monkeypatch.setattr(erasure, step, crash)
    with pytest.raises(RuntimeError):
        memory.erase_now(project, "Atlas", also=["Atlas Corp"])
    monkeypatch.undo()
    memory.erase_now(project, "Atlas", also=["Atlas Corp"])
    assert {x.id for x in store.project_facts(project)} == {
        held["facts"]["near"].id,
        held["facts"]["keep"].id,
    }
    assert all(not names(m.content, "atlas") for m in store.project_messages(project))
    for m in (held["m1"], held["m2"]):
        assert all(not names(p.quote, "atlas") for p in store.passages_of(project, m.id))
    assert store.known_names(project, {"atlas", "atlas corp"}) == set()
    assert memory.erase_now(project, "Atlas")["facts"] == 0


def test_without_an_index_no_erased_vector_id_is_kept(
    store: Any, memory: Memory, project: str
) -> None:
    seed(store, project)
    memory.erase_now(project, "Atlas")  # no vector index: nothing to delete, nothing kept
    # An entity's vector id holds its name ("user:atlas"): none may outlive the erasure.
    assert store.erased_vectors(project) == []


def test_on_dynamodb_erased_vector_ids_are_recorded_until_cleared(store: Any, project: str) -> None:
    if not isinstance(store, DynamoDbStore):
        pytest.skip("the embedded store deletes the vectors in the erasure's transaction")
    held = seed(store, project)
    before = {p.id for p in store.passages_of(project, held["m1"].id)}
    store.erase(project, plan_erasure(store, project, "atlas"))
    recorded = store.erased_vectors(project)
    assert ("entity", "user:atlas") in recorded and ("entity", "tool:atlas corp") in recorded
    gone = before - {p.id for p in store.passages_of(project, held["m1"].id)}
    assert gone and {("passage", i) for i in gone} <= set(recorded)
    store.clear_erased_vectors(project, recorded)
    assert store.erased_vectors(project) == []


def test_the_embedded_store_erases_vectors_and_their_text_in_its_transaction(
    store: Any, memory: Memory, project: str
) -> None:
    if not isinstance(store, SqliteStore):
        pytest.skip("the vector index shares the embedded store's file")
    held = seed(store, project)
    index = SqliteVectorIndex(store.path, 2)
    passages = store.passages_of(project, held["m1"].id)
    items = {
        "entity": [
            VectorItem("user:atlas", [1.0, 0.0], "user", "Atlas"),
            VectorItem("assistant:atlas corp", [1.0, 0.0], "assistant", "Atlas Corp"),
            VectorItem("user:maya okafor", [0.0, 1.0], "user", "Maya Okafor"),
        ],
        "passage": [VectorItem(p.id, [1.0, 0.0], p.role, p.quote) for p in passages],
    }
    for kind, batch in items.items():
        index.upsert(project, kind, batch)  # type: ignore[arg-type]
        assert index.search(project, kind, [1.0, 0.0], 10)  # the matrix is loaded
    assert index.search_text(project, "passage", "Atlas started", 10)

    # No semantic side given: the store does it.
    memory.erase_now(project, "Atlas", also=["Atlas Corp"])

    assert store.erased_vectors(project) == []
    entities = {h.id for h in index.search(project, "entity", [1.0, 0.0], 10)}
    assert entities == {"user:maya okafor"}
    named = index.search_text(project, "entity", "Atlas Corp Maya", 10)
    assert [h.id for h in named] == ["user:maya okafor"]
    kept = {p.id for p in store.passages_of(project, held["m1"].id)}
    assert {h.id for h in index.search(project, "passage", [1.0, 0.0], 10)} == kept
    assert index.search_text(project, "passage", "Atlas started", 10) == []
    index.close()


@pytest.mark.parametrize("erase_by", ["Robert Smith", "Bob"])
def test_erasing_an_entity_or_its_alias_erases_every_name_of_it(
    store: Any, memory: Memory, project: str, erase_by: str
) -> None:
    store.put_facts(
        project,
        [fact("Robert Smith", "lives in", "Cork"), fact("Bob", "plays", "chess", kind="value")],
    )
    store.merge_entities(project, "bob", "Bob", "robert smith", "Robert Smith")
    store.put_facts(project, [fact("Bob", "works at", "Acme Corp")])
    kept = fact("Alice", "knows", "Carol")
    store.put_facts(project, [kept])
    assert {a.alias_key for a in store.aliases(project)} == {"bob"}

    counts = memory.erase_now(project, erase_by)

    assert counts["facts"] == 3
    assert store.aliases(project) == []
    for question in ("Where does Bob live?", "Robert Smith", "Bob Smith and Acme Corp"):
        answer = recall(memory, project, question)
        text = repr(answer).casefold()
        assert "bob" not in text and "robert" not in text, question
    assert store.known_names(project, ["bob", "robert smith"]) == set()
    assert [f.id for f in store.facts_with_subject(project, "alice")] == [kept.id]
    # Both names are tombstoned: a late extraction naming either is dropped.
    late = [fact("Bob", "lives in", "Galway"), fact("Robert Smith", "likes", "tea", kind="value")]
    assert memory.drop_erased(project, late) == []


def test_reports_naming_the_entity_go_and_are_rebuilt_without_it(
    store: Any, memory: Memory, project: str
) -> None:
    store.put_facts(
        project,
        [
            fact("Atlas", "works at", "Acme Corp"),
            fact("Acme Corp", "is based in", "Dublin"),
            fact("Dublin", "is in", "Ireland"),
            fact("Maya Okafor", "works at", "Acme Corp"),
        ],
    )
    assert memory.rebuild_reports(project) > 0

    def report_texts() -> str:
        keys = ["acme corp", "dublin", "ireland", "maya okafor", "atlas"]
        found = [r for k in keys for r in store.reports_of_entity(project, k, ALL_ROLES)]
        return " ".join(f"{r.title} {r.summary} {' '.join(r.path)}" for r in found).casefold()

    assert "atlas" in report_texts()
    counts = memory.erase_now(project, "Atlas")
    assert counts["reports"] >= 1
    assert "atlas" not in report_texts()
    # The worker rebuilds the reports of what remains, without the erased entity.
    assert memory.rebuild_reports(project) > 0
    rebuilt = report_texts()
    assert "acme corp" in rebuilt and "atlas" not in rebuilt


def test_a_rebuild_racing_the_erasure_writes_no_report_naming_it(
    store: Any, memory: Memory, project: str
) -> None:
    """A worker's rebuild that read the facts before the erasure and writes after it:
    the embedded store checks the tombstones in the write's transaction. (On DynamoDB
    the erasure marks the erased names, and the worker's next pass drops such reports.)"""
    if not isinstance(store, SqliteStore):
        pytest.skip("the embedded store checks tombstones when it writes reports")
    atlas = fact("Atlas", "prefers", "email", kind="value")
    maya = fact("Maya Okafor", "lives in", "Galway")
    store.put_facts(project, [atlas, maya])
    read_before = build_reports([atlas, maya])  # the rebuild read the facts
    assert {k for r in read_before for k in r.entity_keys} >= {"atlas", "maya okafor"}

    memory.erase_now(project, "Atlas")
    store.replace_reports(project, "user", {r.component for r in read_before}, read_before)

    assert store.reports_of_entity(project, "atlas", ["user"]) == []
    kept = store.reports_of_entity(project, "maya okafor", ["user"])
    assert kept and all("atlas" not in (r.title + r.summary).casefold() for r in kept)
    # And no mark holds the erased name in plain text (the worker would keep it).
    assert all(key != "atlas" for _, key, _ in store.dirty_entities(project))
