"""Erasure leaves no bytes: after POST /v1/erasures answered, no file of the data folder
(the database, its WAL and shared memory, anything else) holds the erased name or the
words of what was erased, in any form they could be stored in: as written, casefolded,
NFKC, decomposed, without diacritics, as the full-text index's tokens (porter stems),
in UTF-8 and UTF-16. Over real HTTP against `taisce serve`, without a model and with
the local one (the worker indexing passages, names and reports before the erasure)."""

from __future__ import annotations

import sqlite3
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.test_http_erasure import wait_for_worker
from tests.server import LocalServer, start_server

ROLES = ["user", "assistant", "system", "tool"]

# What is erased: the name, an alias merged into it, and words that only the erased
# facts and passages hold. None of them occurs in what stays.
SUBJECT = "Xanthe Morrow"
ERASED_WORDS = [
    "Xanthe",
    "Morrow",
    "Quenbyvale",  # an alias merged into her
    "quincewood",
    "Ångströmvej",  # non-ASCII: NFC, NFD and without diacritics differ
    "Zyxomancer",
    "ﬂoriculturist",  # a ligature: NFKC makes it "floriculturist"
]
# What stays, to show the scan reads the data it should find.
KEPT_WORDS = ["Okafor", "Galway", "Dublinbay"]


def _messages(n: int) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    for i in range(n):
        found.append(
            {
                "id": f"x{i}",
                "role": ROLES[i % 4],
                "source": f"chat:{i}",
                "content": f"Xanthe Morrow planted quincewood row {i} near Ångströmvej.\n"
                f"Xanthe Morrow is a Zyxomancer and a ﬂoriculturist, visit {i}.\n"
                "Maya Okafor walked to Galway and Dublinbay.",
            }
        )
        found.append(
            {
                "id": f"o{i}",
                "role": "user",
                "content": f"Maya Okafor sails from Dublinbay to Galway, trip {i}.",
            }
        )
    return found


def _facts(n: int) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    for i in range(n):
        role = ROLES[i % 4]
        found += [
            {
                "subject": "Xanthe Morrow",
                "predicate": f"grows quincewood batch {i}",
                "object": "Ångströmvej garden",
                "object_kind": "value",
                "statement": f"Xanthe Morrow grows quincewood (batch {i}) as a Zyxomancer.",
                "quote": "Xanthe Morrow planted quincewood",
                "context": "ﬂoriculturist notes",
                "source_role": role,
            },
            {
                "subject": "Maya Okafor",
                "predicate": f"knows from trip {i}",
                "object": "Xanthe Morrow",
                "source_role": role,
            },
            {
                "subject": "Quenbyvale",
                "predicate": f"tends row {i}",
                "object": "quincewood hedge",
                "object_kind": "value",
                "source_role": role,
            },
            {
                "subject": "Maya Okafor",
                "predicate": f"sails trip {i} to",
                "object": "Galway",
                "statement": f"Maya Okafor sails from Dublinbay to Galway (trip {i}).",
                "source_role": role,
            },
        ]
    return found


def _tokens(words: list[str]) -> set[str]:
    """The terms SQLite's FTS5 index stores for these words, with the vector index's
    tokenizer (adapters/sqlite/vectors.py)."""
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE t USING fts5(text, tokenize = 'porter unicode61 remove_diacritics 2')"
    )
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
    db.executemany("INSERT INTO t (text) VALUES (?)", [(w,) for w in words])
    return {term for (term,) in db.execute("SELECT term FROM v")}


def forms(words: list[str]) -> set[str]:
    """Every form a word could be stored in."""
    found: set[str] = set()
    for word in words:
        for variant in (word, word.casefold(), word.lower(), word.upper()):
            for form in ("NFC", "NFD", "NFKC", "NFKD"):
                normal = unicodedata.normalize(form, variant)
                found.add(normal)
                found.add("".join(c for c in normal if not unicodedata.combining(c)))
    found |= _tokens(words)
    return {f for f in found if len(f) >= 4}


def files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            yield path


def traces(folder: Path, words: list[str]) -> list[tuple[str, str, str, int]]:
    """(file, form, encoding, count) for every form of the words found anywhere in any
    file of the folder, read as raw bytes."""
    found: list[tuple[str, str, str, int]] = []
    needles = forms(words)
    for path in files(folder):
        data = path.read_bytes()
        for needle in sorted(needles):
            for encoding in ("utf-8", "utf-16-le", "utf-16-be"):
                count = data.count(needle.encode(encoding))
                if count:
                    found.append((path.name, needle, encoding, count))
    return found


def _fill_and_erase(server: LocalServer, http: httpx.Client, pairs: int) -> None:
    messages = _messages(pairs)
    for i in range(0, len(messages), 100):
        r = http.post("/v1/messages", json={"messages": messages[i : i + 100]})
        assert r.status_code == 202, r.text
    facts = _facts(pairs)
    for i in range(0, len(facts), 100):
        r = http.post("/v1/facts", json={"facts": facts[i : i + 100]})
        assert r.status_code == 201, r.text
    r = http.post("/v1/entities/merges", json={"alias": "Quenbyvale", "into": SUBJECT})
    assert r.status_code == 200, r.text
    wait_for_worker(http)
    # The data is there before: the scan finds it (and the words to erase in it).
    assert {w for _, w, _, _ in traces(server.data_dir, ["Zyxomancer"])} >= {"Zyxomancer"}
    r = http.post("/v1/erasures", json={"subject": SUBJECT})
    assert r.status_code == 200, r.text
    erased = r.json()["erased"]
    assert erased["facts"] == 3 * pairs and erased["entities"] == 1
    assert erased["messages"] == pairs


# Without a model, 300 messages: enough for SQLite to move cells between pages, which
# left copies of erased facts in live pages' unused space until the purge rebuilt the
# file (docs/reliability.md, "Erasure leaves no bytes"). With the local model, fewer
# (embedding is the slow part).
@pytest.mark.parametrize(("embeddings", "pairs"), [("none", 150), ("local", 60)])
def test_no_byte_of_an_erased_entity_stays_in_the_data_folder(
    tmp_path: Path, embeddings: str, pairs: int
) -> None:
    server = start_server(tmp_path, {"TAISCE_EMBEDDINGS": embeddings})
    try:
        with sqlite3.connect(tmp_path / "taisce.sqlite3") as db:
            assert db.execute("PRAGMA encoding").fetchone()[0] == "UTF-8"
        with server.client(server.new_credential("bytes")) as http:
            _fill_and_erase(server, http, pairs)
            # At once, as the erasure answered; then after the worker's pass (it rebuilds
            # the reports the erasure dropped).
            assert traces(tmp_path, ERASED_WORDS) == []
            wait_for_worker(http)
            assert traces(tmp_path, ERASED_WORDS) == []
            # What stays is still there, and the scan finds it.
            kept = {w for _, w, _, _ in traces(tmp_path, KEPT_WORDS)}
            assert {"Okafor", "Galway", "Dublinbay"} <= kept
            answer = http.post(
                "/v1/recalls",
                json={"question": "Where does Maya Okafor sail?", "source_roles": ROLES},
            ).json()
            assert answer["facts"]
    finally:
        server.stop()
    # And after the server stopped (its last checkpoint).
    assert traces(tmp_path, ERASED_WORDS) == []
