"""Search by words over facts and messages, on both stores (each with the embedded
vector index, whose text search is the one recall uses; the OpenSearch form of the same
query is tests/unit/test_opensearch_index.py's): best first, every page once, bound
to its words, inside the request's scope, and nothing a pending erasure hides."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from taisce.adapters.sqlite.vectors import SqliteVectorIndex
from taisce.api import bodies
from taisce.domain.controls import Limits
from taisce.domain.errors import InvalidRequest
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.domain.scope import Scope
from taisce.domain.semantic import Semantic
from taisce.service.memory import Memory
from tests.contract.factories import unique

POTTERY = [
    ("Maya", "took up", "pottery classes", "user"),
    ("Maya", "sells", "pottery at the market", "assistant"),
    ("Joel", "collects", "old pottery", "tool"),
    ("Joel", "plays", "the cello", "user"),
]


@pytest.fixture
def semantic_memory(store: Any, local_embedder: Any, tmp_path: Path) -> Iterator[Memory]:
    """The local model, which indexes what a request stores before it answers (with a
    remote model the worker's pass does: a search finds what is indexed)."""
    index = SqliteVectorIndex(tmp_path / "vectors.sqlite3", local_embedder.dimensions)
    yield Memory(store, Limits(), semantic=Semantic(local_embedder, index, embed_on_write=True))
    index.close()


def _store_facts(memory: Memory, project: str, rows: list[tuple[str, str, str, str]]) -> None:
    for subject, predicate, obj, role in rows:
        fact = {"subject": subject, "predicate": predicate, "object": obj, "source_role": role}
        memory.store_facts(project, FactsRequest.model_validate({"facts": [fact]}))


def _store_messages(memory: Memory, project: str, given: list[dict[str, Any]]) -> list[str]:
    return memory.store_messages(project, MessagesRequest.model_validate({"messages": given}))


def _all_pages(search: Any, **asked: Any) -> tuple[list[dict[str, Any]], int]:
    """Every page of a search, following next_cursor; and how many pages it took."""
    items: list[dict[str, Any]] = []
    cursor, pages = None, 0
    while True:
        body = search(cursor=cursor, **asked)
        pages += 1
        items += body.get("facts", body.get("messages", []))
        cursor = body["next_cursor"]
        if cursor is None:
            return items, pages


def test_facts_holding_the_words_come_best_first_every_page_once(
    semantic_memory: Memory,
) -> None:
    project = unique("search")
    _store_facts(semantic_memory, project, POTTERY)

    def search(**asked: Any) -> dict[str, Any]:
        return bodies.searched_facts(semantic_memory.search_facts(project, **asked))

    found = search(q="pottery")
    assert found["degraded"] == []
    statements = [f["statement"] for f in found["facts"]]
    assert sorted(statements) == sorted(f"{s} {p} {o}" for s, p, o, _ in POTTERY[:3])
    # Only the role asked for.
    tool = search(q="pottery", role="tool")["facts"]
    assert [f["statement"] for f in tool] == ["Joel collects old pottery"]
    # A page at a time: the same facts, each once.
    paged, pages = _all_pages(search, q="pottery", limit=1)
    assert pages == 3
    assert [f["id"] for f in paged] == [f["id"] for f in found["facts"]]
    # Nothing holds the words, or only common words were asked: an empty page.
    assert search(q="submarine") == {"facts": [], "next_cursor": None, "degraded": []}
    assert search(q="the of") == {"facts": [], "next_cursor": None, "degraded": []}
    # Any of the words matches; a fact holding more of them comes first.
    both = search(q="pottery market")["facts"]
    assert both[0]["statement"] == "Maya sells pottery at the market" and len(both) == 3


def test_a_cursor_is_bound_to_its_words_and_bad_words_are_refused(
    semantic_memory: Memory,
) -> None:
    project = unique("search")
    _store_facts(semantic_memory, project, POTTERY)
    first = semantic_memory.search_facts(project, "pottery", limit=1)
    assert first.next_cursor is not None
    with pytest.raises(InvalidRequest, match="same q"):
        semantic_memory.search_facts(project, "cello", limit=1, cursor=first.next_cursor)
    with pytest.raises(InvalidRequest, match="same q"):
        semantic_memory.search_facts(project, "pottery", "user", 1, first.next_cursor)
    with pytest.raises(InvalidRequest, match="cursor"):  # another route's cursor
        semantic_memory.search_messages(project, "pottery", limit=1, cursor=first.next_cursor)
    for bad in ("", "   ", "?!", "x" * 501):
        with pytest.raises(InvalidRequest, match="q must"):
            semantic_memory.search_facts(project, bad)


def test_messages_come_once_with_the_passages_that_matched(semantic_memory: Memory) -> None:
    project = unique("search")
    long_text = ("We talked about the weather for a long while. " * 8) + "Then the kiln cracked."
    ids = _store_messages(
        semantic_memory,
        project,
        [
            {"role": "user", "content": long_text, "source": "chat-1"},
            {"role": "assistant", "content": "A cracked kiln can be mended.", "source": "chat-1"},
            {"role": "user", "content": "The kiln is fixed, and the kiln is hot.", "source": "b"},
            {"role": "user", "content": "Nothing to see here."},
        ],
    )

    def search(**asked: Any) -> dict[str, Any]:
        return bodies.searched_messages(semantic_memory.search_messages(project, **asked))

    found = search(q="kiln")["messages"]
    assert sorted(m["id"] for m in found) == sorted(ids[:3])
    first = next(m for m in found if m["id"] == ids[0])
    # The long message carries the passage holding the word, not its others.
    assert [p["quote"] for p in first["passages"]] and all(
        "kiln" in p["quote"] for p in first["passages"]
    )
    assert first["content"] == long_text and first["occurred_at"]
    assert [m["id"] for m in search(q="kiln", role="assistant")["messages"]] == [ids[1]]
    assert [m["id"] for m in search(q="kiln", source="b")["messages"]] == [ids[2]]
    paged, pages = _all_pages(search, q="kiln", limit=2)
    assert pages == 2 and [m["id"] for m in paged] == [m["id"] for m in found]


def test_a_pending_erasure_hides_what_it_will_remove(semantic_memory: Memory) -> None:
    project = unique("search")
    _store_facts(semantic_memory, project, POTTERY)
    ids = _store_messages(
        semantic_memory,
        project,
        [
            {"role": "user", "content": "Maya bought pottery glaze."},
            {"role": "user", "content": "The pottery fair opens Friday."},
        ],
    )
    semantic_memory.request_erasure(project, "Maya", defer=True)
    facts = semantic_memory.search_facts(project, "pottery").facts
    assert [f.subject for f in facts] == ["Joel"]
    # The message naming Maya matched only in its one passage, which names her: gone.
    messages = semantic_memory.search_messages(project, "pottery").messages
    assert [m.message.id for m in messages] == [ids[1]]
    assert "maya" not in repr(semantic_memory.search_messages(project, "glaze")).lower()


def test_a_user_searches_the_shared_memory_and_their_own_only(semantic_memory: Memory) -> None:
    project = unique("search")
    _store_facts(semantic_memory, project, [("Acme", "sells", "pottery wheels", "system")])
    _store_facts(semantic_memory, Scope(project, "ana"), [POTTERY[0]])
    _store_facts(semantic_memory, Scope(project, "ben"), [POTTERY[2]])
    _store_messages(
        semantic_memory, Scope(project, "ben"), [{"role": "user", "content": "Ben's pottery"}]
    )

    ana = semantic_memory.search_facts(Scope(project, "ana"), "pottery").facts
    assert sorted(f.subject for f in ana) == ["Acme", "Maya"]
    assert semantic_memory.search_messages(Scope(project, "ana"), "pottery").messages == []
    shared = semantic_memory.search_facts(project, "pottery").facts
    assert [f.subject for f in shared] == ["Acme"]


def test_without_a_model_the_search_says_it_could_not_run(store: Any) -> None:
    memory = Memory(store, Limits())
    project = unique("search")
    _store_facts(memory, project, POTTERY)
    assert bodies.searched_facts(memory.search_facts(project, "pottery")) == {
        "facts": [],
        "next_cursor": None,
        "degraded": ["search"],
    }
    assert memory.search_messages(project, "pottery").degraded == ["search"]
