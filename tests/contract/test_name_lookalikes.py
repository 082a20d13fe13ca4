"""One notion of the same name on every store: a name written with invisible characters
between its words, with any dash or middle dot between them, with accents, or with
letters of another script that look Latin (Unicode's confusables) is the name, for
storing, matching, similar names and erasure alike. Erasing "Xanthe Morrow" leaves none
of these spellings in listings, facts, neighbourhoods, message text or recall."""

from __future__ import annotations

from typing import Any

import pytest

from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.api import bodies
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.erasure import names_it
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.service.memory import Memory
from tests.contract.factories import fact, unique
from tests.moto_server import shared_moto

_BETWEEN = [
    # invisible: joiners, word joiner, soft hyphen, zero width space, byte order mark,
    # direction marks, grapheme joiner, Mongolian vowel separator, invisible operators
    "\u200d", "\u200c", "\u2060", "\u00ad", "\u200b", "\ufeff", "\u200e", "\u200f",
    "\u034f", "\u180e", "\u2063", "\u2061",
    # dashes: hyphen, non-breaking hyphen, figure, en, em, bar, minus, small, full-width
    "-", "\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2015", "\u2212", "\ufe58",
    "\ufe63", "\uff0d",
    # middle dots: middle dot, ano teleia, hyphenation point, word separator, dot
    # operator, katakana middle dot (and its half-width form)
    "\u00b7", "\u0387", "\u2027", "\u2e31", "\u22c5", "\u30fb", "\uff65",
]  # fmt: skip
SPELLINGS = [f"Xanthe{between}Morrow" for between in _BETWEEN] + [
    # combining and precomposed accents
    "Xa\u0301nthe Morrow", "Xanthe\u0301 Morrow", "Xa\u0308nthe Morrow",
    "Xanthe Mo\u0301rrow", "X\u00e1nthe Morrow", "Xanthe M\u00f6rrow",
    # letters of other scripts that look Latin: Cyrillic ha, a, ie, o, em; Greek omicron, alpha
    "\u0425anthe Morrow", "Xanthe M\u03bfrrow", "X\u0430nthe Morrow", "Xanth\u0435 Morrow",
    "Xanthe M\u043errow", "Xanthe \u041corrow", "X\u0391nthe Morrow",
    "\u0425\u0430nth\u0435 \u041c\u043errow",
    # case, width and white space
    "XANTHE MORROW", "xanthe morrow",
    "\uff38\uff41\uff4e\uff54\uff48\uff45 \uff2d\uff4f\uff52\uff52\uff4f\uff57",  # full width
    "Xanthe\u00a0Morrow", "Xanthe  Morrow", "Xanthe\tMorrow",
    # together
    "Xanthe\u200d\u2013Morrow", "\u0425anthe\u00adMorrow", "XANTHE\u2060MORROW",
    "xanthe\u200cmorrow", "Xa\u0301nthe\u30fbM\u03bfrrow", "Xanthe_Morrow",
]  # fmt: skip
ROLES = ["user", "assistant", "system", "tool"]


def test_the_spellings_are_fifty_six() -> None:
    assert len(SPELLINGS) == len(set(SPELLINGS)) == 56


@pytest.fixture
def store(open_store: Any) -> Any:
    """Erasure reads the whole project on DynamoDB: a table of its own keeps it small."""
    opened = open_store()
    if isinstance(opened, DynamoDbStore):
        return shared_moto().table_named("taisce-erasure").store()
    return opened


def _recall(memory: Memory, project: str, question: str) -> dict[str, Any]:
    body = {"question": question, "source_roles": ROLES, "hops": 2}
    return bodies.recall(memory.recall(project, RecallRequest.model_validate(body)))


def _fill(memory: Memory, project: str) -> None:
    facts = [
        {"id": f"x{i}", "subject": s, "predicate": "lives in", "object": "Galway",
         "source_role": "user"}
        for i, s in enumerate(SPELLINGS)
    ] + [{"id": "keep", "subject": "Maya", "predicate": "knows", "object": "Galway",
          "source_role": "user"}]  # fmt: skip
    memory.store_facts(project, FactsRequest.model_validate({"facts": facts}))
    messages = [
        {"id": f"m{i}", "role": "user", "content": f"Yesterday {s} moved to Galway. Maya stayed."}
        for i, s in enumerate(SPELLINGS)
    ] + [{"id": "m-keep", "role": "user", "content": "Maya stayed in Galway."}]
    memory.store_messages(project, MessagesRequest.model_validate({"messages": messages}))


def test_every_spelling_is_erased_with_the_name(store: Any) -> None:
    memory = Memory(store, Limits(bundle_characters=16_000, max_rows=400))
    project = unique("lookalikes")
    _fill(memory, project)
    # One entity: each spelling is the name, but for the words run together by an
    # invisible character between them (an entity of its own, which erasure finds).
    found = memory.list_entities(project, "xanthe", 100, None).entities
    assert {e.key for e in found} == {"xanthe morrow", "xanthemorrow"}

    counts = memory.erase_now(project, "Xanthe Morrow")
    assert counts["facts"] == len(SPELLINGS)
    assert counts["messages"] == len(SPELLINGS)

    listed = {e.key for e in memory.list_entities(project, None, 100, None).entities}
    assert listed == {"maya", "galway"}
    assert {f.id for f in store.project_facts(project)} == {"keep"}
    graph = memory.neighbourhood(project, "Galway", 2)
    assert [f.id for f in memory.list_facts(project, "Galway").facts] == []
    assert {n.key for n in graph.nodes if n.kind == "entity"} <= {"galway", "maya"}
    for i, spelling in enumerate(SPELLINGS):
        held = store.message(project, f"m{i}")
        assert held is not None
        # The whole sentence about her is masked: no letters of the name are left.
        assert "rrow" not in held.content and "nth" not in held.content, repr(held.content)
        assert not names_it(held.content, "xanthe morrow")
        assert memory.list_facts(project, spelling).facts == []
        answer = _recall(memory, project, f"Where does {spelling} live?")
        assert answer["facts"] == [] and answer["passages"] == [], spelling
    assert store.message(project, "m-keep").content == "Maya stayed in Galway."
    # The tombstone covers the words run together too: a late extraction is dropped.
    late = [
        fact("Xanthe\u200dMorrow", "lives in", "Cork"),
        fact("Maya", "knows", "XANTHE\u2060MORROW"),
        fact("Maya", "likes", "Cork"),
    ]
    assert memory.drop_erased(project, late) == late[2:]


def test_a_lookalike_of_an_erased_name_does_not_come_back(semantic_memory: Memory) -> None:
    """Erasing Latin "Atlas" takes "\u0410tlas" (Cyrillic A) too (one name), and the tombstone
    keeps an extraction of either from bringing it back."""
    memory = semantic_memory
    project = unique("atlas")
    facts = [
        {"id": "latin", "subject": "Atlas", "predicate": "is based in", "object": "Dublin",
         "source_role": "user"},
        {"id": "cyrillic", "subject": "\u0410tlas", "predicate": "employs", "object": "Maya",
         "source_role": "user"},
        {"id": "keep", "subject": "Maya", "predicate": "lives in", "object": "Cork",
         "source_role": "user"},
    ]  # fmt: skip
    memory.store_facts(project, FactsRequest.model_validate({"facts": facts}))
    memory.index_pending(project)  # the names' vectors: similar names by meaning
    memory.erase_now(project, "Atlas")
    memory.index_pending(project)

    assert {f.id for f in memory.store.project_facts(project)} == {"keep"}
    for question in ["Where is Atlas based?", "Who does \u0410tlas employ?", "Who is Atlass?"]:
        answer = _recall(memory, project, question)
        assert answer["facts"] == [], question
    # The tombstone is the name's: a late extraction of a look-alike is dropped.
    late = [fact("\u0410TLAS", "hires", "Ann"), fact("Maya", "met", "\u0391tlas")]
    assert memory.drop_erased(project, late) == []
