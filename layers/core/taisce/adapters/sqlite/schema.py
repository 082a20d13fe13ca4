"""The embedded store's tables: the schema a new file is made with (every statement
idempotent, run at each open), and the columns added since, which an older file gains
when opened (file.add_columns)."""

from __future__ import annotations

SCHEMA_VERSION = 6

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS facts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    project TEXT NOT NULL,
    id TEXT NOT NULL,
    subject TEXT NOT NULL,
    subject_key TEXT NOT NULL,
    predicate TEXT NOT NULL,
    object TEXT NOT NULL,
    object_kind TEXT NOT NULL,
    object_key TEXT,
    statement TEXT NOT NULL,
    source_role TEXT NOT NULL,
    quote TEXT,
    context TEXT,
    message_id TEXT,
    valid_from TEXT,
    valid_to TEXT,
    recorded_at TEXT NOT NULL,
    quote_start INTEGER,
    quote_end INTEGER,
    UNIQUE (project, id)
);
CREATE INDEX IF NOT EXISTS facts_by_subject ON facts (project, subject_key, seq);
CREATE INDEX IF NOT EXISTS facts_by_object ON facts (project, object_key, seq)
    WHERE object_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS entities (
    project TEXT NOT NULL,
    key TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (project, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entity_roles (
    project TEXT NOT NULL,
    key TEXT NOT NULL,
    role TEXT NOT NULL,
    -- How many facts of this role name the entity: a name is found in a question
    -- only for the roles asked for, so what was not asked for cannot shape it.
    facts INTEGER NOT NULL,
    PRIMARY KEY (project, key, role)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pending_vectors (
    project TEXT NOT NULL,
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    text TEXT NOT NULL,
    role TEXT,
    -- Written with the record it indexes, cleared once its vector is stored: storing
    -- never waits on the model, and a failed embedding is retried, never lost.
    PRIMARY KEY (project, kind, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    project TEXT NOT NULL,
    id TEXT NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    source TEXT,
    occurred_at TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    UNIQUE (project, id)
);
-- The next storing position of each project's messages (messages.position): one
-- row, updated once per storing request, inside its transaction.
CREATE TABLE IF NOT EXISTS message_positions (
    project TEXT PRIMARY KEY,
    next INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS passages (
    project TEXT NOT NULL,
    id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    role TEXT NOT NULL,
    source TEXT,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    quote TEXT NOT NULL,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS passages_by_message ON passages (project, message_id, start);
-- The explorer's message listing: newest first, a page at a time.
CREATE INDEX IF NOT EXISTS messages_by_recorded ON messages (project, recorded_at, id);
CREATE TABLE IF NOT EXISTS dirty_entities (
    project TEXT NOT NULL,
    role TEXT NOT NULL,
    key TEXT NOT NULL,
    -- A new token on every write: a rebuild clears only the marks it read, so a
    -- write that lands during the rebuild stays marked.
    token TEXT NOT NULL,
    PRIMARY KEY (project, role, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS reports (
    project TEXT NOT NULL,
    id TEXT NOT NULL,
    role TEXT NOT NULL,
    level INTEGER NOT NULL,
    parent_id TEXT,
    title TEXT NOT NULL,
    summary TEXT NOT NULL,
    path TEXT NOT NULL,
    source_messages TEXT NOT NULL,
    entity_keys TEXT NOT NULL,
    component TEXT NOT NULL,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS reports_by_component ON reports (project, role, component);
CREATE TABLE IF NOT EXISTS report_members (
    project TEXT NOT NULL,
    role TEXT NOT NULL,
    key TEXT NOT NULL,
    report_id TEXT NOT NULL,
    PRIMARY KEY (project, role, key, report_id)
) WITHOUT ROWID;
-- Extraction: a mark per message waiting for it, written with the message; a
-- failure record replaces the mark after the last failed attempt, until replayed.
CREATE TABLE IF NOT EXISTS pending_extractions (
    project TEXT NOT NULL,
    message_id TEXT NOT NULL,
    PRIMARY KEY (project, message_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS failed_extractions (
    project TEXT NOT NULL,
    message_id TEXT NOT NULL,
    error TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    failed_at TEXT NOT NULL,
    PRIMARY KEY (project, message_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS credentials (
    hash TEXT PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL,
    label TEXT,
    created_at TEXT NOT NULL,
    revoked_at TEXT,
    kind TEXT,
    user TEXT,
    last_used_at TEXT
) WITHOUT ROWID;
-- The API lists a project's credentials by id.
CREATE INDEX IF NOT EXISTS credentials_by_project ON credentials (project, id);
"""

# Entity aliases (domain/aliases.py): `key` is another name of the entity `target`,
# which is never itself an alias; `name` is the alias as first written.
_ALIAS_SCHEMA = """
CREATE TABLE IF NOT EXISTS aliases (
    project TEXT NOT NULL,
    key TEXT NOT NULL,
    name TEXT NOT NULL,
    target TEXT NOT NULL,
    PRIMARY KEY (project, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS aliases_by_target ON aliases (project, target);
"""

# Erasure (domain/erasure.py): tombstones, the audit record. Neither holds a name:
# subjects are hashes of the project and the normalised name. `erased_vectors` is no
# longer written (the vectors go in the erasure's transaction: they are in this file);
# rows an older version left there (entity ids hold names) are drained by erase().
_ERASURE_SCHEMA = """
CREATE TABLE IF NOT EXISTS erased_subjects (
    project TEXT NOT NULL,
    hash TEXT NOT NULL,
    PRIMARY KEY (project, hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS erased_vectors (
    project TEXT NOT NULL,
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    PRIMARY KEY (project, kind, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS erasures (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL,
    subject_hash TEXT NOT NULL,
    erased_at TEXT NOT NULL,
    facts INTEGER NOT NULL,
    entities INTEGER NOT NULL,
    messages INTEGER NOT NULL,
    passages INTEGER NOT NULL,
    reports INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS erasure_requests (
    project TEXT NOT NULL,
    id TEXT NOT NULL,
    subject_hash TEXT NOT NULL,
    names TEXT NOT NULL,
    requested_at TEXT NOT NULL,
    facts INTEGER NOT NULL DEFAULT 0,
    entities INTEGER NOT NULL DEFAULT 0,
    messages INTEGER NOT NULL DEFAULT 0,
    passages INTEGER NOT NULL DEFAULT 0,
    reports INTEGER NOT NULL DEFAULT 0,
    holder TEXT,
    held_until REAL,
    cursor TEXT,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
"""

SCHEMA = (
    _SCHEMA
    + _ALIAS_SCHEMA
    + _ERASURE_SCHEMA
    + f"INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', '{SCHEMA_VERSION}');"
)

# Columns added after a file may have been created, in the order they are added:
# (table, ((column, type), ...)).
ADDED_COLUMNS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("facts", (("quote_start", "INTEGER"), ("quote_end", "INTEGER"))),  # schema 6
    ("erasures", (("requested_at", "TEXT"),)),
    # A message's place in its project's storing order, copied to its passages'
    # vector marks (MessageStore.put_messages); older rows have none.
    ("messages", (("position", "INTEGER"),)),
    # And its time (model.PendingVector.occurred_at): NULL on older marks, not known.
    ("pending_vectors", (("position", "INTEGER"), ("occurred_at", "TEXT"))),
    ("erasure_requests", (("holder", "TEXT"), ("held_until", "REAL"), ("cursor", "TEXT"))),
    # Credential kinds: an older credential (kind NULL) is a project credential.
    ("credentials", (("kind", "TEXT"), ("user", "TEXT"), ("last_used_at", "TEXT"))),
    # A live, unclosed fact's content digest (domain/fact_identity.py); NULL once a
    # later fact closed it, and on facts stored before the rule.
    ("facts", (("identity", "TEXT"),)),
)

# Made after ADDED_COLUMNS (an older file gains the column first): one live fact per
# content in a project, whatever the writer.
INDEXES = """
CREATE UNIQUE INDEX IF NOT EXISTS facts_by_identity ON facts (project, identity)
    WHERE identity IS NOT NULL;
"""
