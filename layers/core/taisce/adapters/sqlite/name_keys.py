"""Re-keying names stored under an older normalisation rule (embedded store).

Names are stored by their normalised key (domain/names.py). Since version 2 of the
rule, invisible characters are dropped and a hyphen, underscore, period or slash
between two parts of a name counts as a space, so a file written before holds keys
such as "jean-luc" that a question now looks up as "jean luc"; since version 3 every
dash and middle dot is such a separator, accents on Latin letters go and Latin
look-alikes in a Latin word read as Latin ("xánthe" is "xanthe"); since version 4
accents on Greek letters go ("αθήνα" is "αθηνα") and so do Arabic and Hebrew
optional marks (short vowels, niqqud) and the Arabic tatweel. Opening such a file
re-keys it once, in one transaction: each entity whose key changes is moved to its
new key (two old spellings that now read alike become one entity, their role counts
added), with its facts (both ends), aliases, report memberships and marks; its
reports are marked for a rebuild and its name for indexing under the new key. The
meta row `name_keys` records that it was done.

Not re-keyed: tombstones (a keyed hash of the old key: the name itself is not kept),
and vectors already indexed under an old key (step 2 confirms every name it finds with
the store, so an old key is never matched; the name is indexed again under its new key).
"""

from __future__ import annotations

import sqlite3
import uuid

from ...domain.model import ROLES
from ...domain.names import normalize_name
from .work import MARK_DIRTY

NAME_KEYS_VERSION = "4"


def _changed(db: sqlite3.Connection) -> list[tuple[str, str, str]]:
    """(project, old key, new key) of every held name whose key changes."""
    rows = db.execute(
        "SELECT project, key FROM entities UNION SELECT project, key FROM aliases "
        "UNION SELECT project, target FROM aliases"
    ).fetchall()
    return [(p, k, normalize_name(k)) for p, k in rows if normalize_name(k) != k]


def _rekey(
    db: sqlite3.Connection, project: str, old: str, new: str, token: str, mark_vectors: bool
) -> None:
    p = (project,)
    db.execute(
        "UPDATE facts SET subject_key = ? WHERE project = ? AND subject_key = ?", (new, *p, old)
    )
    db.execute(
        "UPDATE facts SET object_key = ? WHERE project = ? AND object_key = ?", (new, *p, old)
    )
    # The entity: kept under the new key (the first name written there stays).
    db.execute(
        "INSERT INTO entities (project, key, name) SELECT project, ?, name FROM entities "
        "WHERE project = ? AND key = ? ON CONFLICT (project, key) DO NOTHING",
        (new, *p, old),
    )
    db.execute("DELETE FROM entities WHERE project = ? AND key = ?", (*p, old))
    db.execute(
        "INSERT INTO entity_roles (project, key, role, facts) "
        "SELECT project, ?, role, facts FROM entity_roles WHERE project = ? AND key = ? "
        "ON CONFLICT (project, key, role) DO UPDATE SET facts = facts + excluded.facts",
        (new, *p, old),
    )
    db.execute("DELETE FROM entity_roles WHERE project = ? AND key = ?", (*p, old))
    # Aliases: the alias's own key, and the entity it points at.
    db.execute("UPDATE OR IGNORE aliases SET key = ? WHERE project = ? AND key = ?", (new, *p, old))
    db.execute("DELETE FROM aliases WHERE project = ? AND key = ?", (*p, old))
    db.execute("UPDATE aliases SET target = ? WHERE project = ? AND target = ?", (new, *p, old))
    db.execute("DELETE FROM aliases WHERE project = ? AND key = target", p)
    # Reports: memberships move; the entity's reports are rebuilt by the worker.
    db.execute(
        "UPDATE OR IGNORE report_members SET key = ? WHERE project = ? AND key = ?",
        (new, *p, old),
    )
    db.execute("DELETE FROM report_members WHERE project = ? AND key = ?", (*p, old))
    db.execute("DELETE FROM dirty_entities WHERE project = ? AND key = ?", (*p, old))
    roles = [
        r[0]
        for r in db.execute(
            "SELECT role FROM entity_roles WHERE project = ? AND key = ? AND facts > 0",
            (*p, new),
        )
    ]
    for role in roles:
        db.execute(MARK_DIRTY, (*p, role, new, token))
    # Name vectors: the old key's marks go; the new key is marked for each role.
    db.executemany(
        "DELETE FROM pending_vectors WHERE project = ? AND kind = 'entity' AND id = ?",
        [(project, f"{role}:{old}") for role in ROLES],
    )
    held = db.execute(
        "SELECT name FROM entities WHERE project = ? AND key = ?", (*p, new)
    ).fetchone()
    if mark_vectors and held is not None:
        db.executemany(
            "INSERT INTO pending_vectors (project, kind, id, text, role) "
            "VALUES (?, 'entity', ?, ?, ?) ON CONFLICT (project, kind, id) DO NOTHING",
            [(project, f"{role}:{new}", held[0], role) for role in roles],
        )


def name_keys_current(db: sqlite3.Connection) -> bool:
    done = db.execute("SELECT value FROM meta WHERE key = 'name_keys'").fetchone()
    return done is not None and done[0] == NAME_KEYS_VERSION


def migrate_name_keys(db: sqlite3.Connection, *, mark_vectors: bool) -> int:
    """Re-key the file's names if an older rule wrote them; returns how many keys
    changed. Call inside a write transaction."""
    if name_keys_current(db):  # checked again inside the transaction: another process
        return 0
    changed = _changed(db)
    token = uuid.uuid4().hex
    for project, old, new in changed:
        _rekey(db, project, old, new, token, mark_vectors)
    db.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('name_keys', ?)", (NAME_KEYS_VERSION,)
    )
    return len(changed)
