"""A data folder written under the older name rule is re-keyed when opened (issue 15):
"Xanthe-Morrow" was keyed "xanthe-morrow"; it is now "xanthe morrow", and two old
spellings that read alike become one entity."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from taisce.adapters.sqlite.name_keys import NAME_KEYS_VERSION
from taisce.adapters.sqlite.store import SqliteStore
from taisce.api import bodies
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.ingest import FactsRequest
from taisce.service.memory import Memory

ROLES = ["user", "assistant", "system", "tool"]


def _store(memory: Memory, *facts: tuple[str, str, str, str]) -> None:
    body = [
        {"id": i, "subject": s, "predicate": "visited", "object": o, "source_role": r}
        for i, s, o, r in facts
    ]
    memory.store_facts("p", FactsRequest.model_validate({"facts": body}))


def _as_old_rule(path: Path) -> None:
    """What an older version held: keys with the hyphen, an accent and an en dash kept."""
    with sqlite3.connect(path) as db:
        old = {"xanthe morrow": "xanthe-morrow"}
        for table, column in [("facts", "subject_key"), ("facts", "object_key"),
                              ("entities", "key"), ("entity_roles", "key"),
                              ("dirty_entities", "key")]:  # fmt: skip
            for new, was in old.items():
                db.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?", (was, new))
        # A second spelling, stored apart under an old rule (an accent, an en dash).
        db.execute("UPDATE facts SET subject_key = 'x\u00e1nthe\u2013morrow' WHERE id = 'b'")
        db.execute(
            "INSERT INTO entities "
            "VALUES ('p', 'x\u00e1nthe\u2013morrow', 'X\u00e1nthe\u2013Morrow')"
        )
        db.execute("UPDATE entity_roles SET facts = 1 WHERE key = 'xanthe-morrow'")
        db.execute("INSERT INTO entity_roles VALUES ('p', 'x\u00e1nthe\u2013morrow', 'user', 1)")
        db.execute("INSERT INTO aliases VALUES ('p', 'x-m', 'X-M', 'xanthe-morrow')")
        db.execute("DELETE FROM meta WHERE key = 'name_keys'")


def _recall(memory: Memory, question: str) -> list[str]:
    body = {"question": question, "source_roles": ROLES}
    return [
        f["id"]
        for f in bodies.recall(memory.recall("p", RecallRequest.model_validate(body)))["facts"]
    ]


def test_an_old_file_is_rekeyed_once_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite3"
    store = SqliteStore(path)
    _store(Memory(store, Limits()), ("a", "Xanthe-Morrow", "Galway", "user"),
           ("b", "Xanthe Morrow", "Cork", "user"))  # fmt: skip
    store.close()
    _as_old_rule(path)

    store = SqliteStore(path)
    memory = Memory(store, Limits())
    assert _recall(memory, "What about Xanthe-Morrow?") == ["a", "b"]
    assert _recall(memory, "What about Xanthe Morrow?") == ["a", "b"]
    assert _recall(memory, "What about X-M?") == ["a", "b"]  # the alias moved too
    with sqlite3.connect(path) as db:
        keys = {r[0] for r in db.execute("SELECT key FROM entities WHERE project = 'p'")}
        assert keys == {"xanthe morrow", "galway", "cork"}
        counts = db.execute(
            "SELECT facts FROM entity_roles WHERE key = 'xanthe morrow' AND role = 'user'"
        ).fetchall()
        assert counts == [(2,)]  # the two old spellings' counts, added
        assert db.execute("SELECT target FROM aliases").fetchall() == [("xanthe morrow",)]
        marks = {r[0] for r in db.execute("SELECT key FROM dirty_entities WHERE project = 'p'")}
        assert "xanthe morrow" in marks and "xanthe-morrow" not in marks
        version = db.execute("SELECT value FROM meta WHERE key = 'name_keys'").fetchone()
        assert version == (NAME_KEYS_VERSION,)
    store.close()


def test_a_greek_arabic_or_hebrew_key_with_its_marks_is_rekeyed(tmp_path: Path) -> None:
    """Version 4: Greek accents and Arabic and Hebrew optional marks go, so a name
    stored with them is found by a question written without them (as in capitals)."""
    path = tmp_path / "t.sqlite3"
    store = SqliteStore(path)
    _store(Memory(store, Limits()), ("g", "Αθήνα", "Piraeus", "user"),
           ("a", "مُحَمَّد", "Cairo", "user"), ("h", "שָׁלוֹם", "Haifa", "user"))  # fmt: skip
    store.close()
    with sqlite3.connect(path) as db:  # the keys an older version made
        for new, was in {"αθηνα": "αθήνα", "محمد": "مُحَمَّد", "שלום": "שָׁלוֹם"}.items():
            for table, column in [("facts", "subject_key"), ("entities", "key"),
                                  ("entity_roles", "key")]:  # fmt: skip
                db.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?", (was, new))
        db.execute("DELETE FROM meta WHERE key = 'name_keys'")

    store = SqliteStore(path)
    memory = Memory(store, Limits())
    assert _recall(memory, "ΑΘΗΝΑ;") == ["g"]
    assert _recall(memory, "أين محمد؟") == ["a"]
    assert _recall(memory, "איפה שלום?") == ["h"]
    with sqlite3.connect(path) as db:
        keys = {r[0] for r in db.execute("SELECT key FROM entities WHERE project = 'p'")}
        assert {"αθηνα", "محمد", "שלום"} <= keys and "αθήνα" not in keys
    store.close()


def test_a_new_file_needs_no_rekeying(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "t.sqlite3")
    with sqlite3.connect(store.path) as db:
        version = db.execute("SELECT value FROM meta WHERE key = 'name_keys'").fetchone()
        assert version == (NAME_KEYS_VERSION,)
    store.close()
