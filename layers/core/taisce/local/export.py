"""`taisce export`: one project's memory from the embedded store, as JSON lines.

No API route lists a whole project, so this reads the SQLite file directly (read-only,
safe beside a running server). Each line is one record with `kind` ("message" or
"fact") and the fields the API returns; `taisce import` takes the file back.

An export holds nothing an erasure removed: a message or fact whose text holds the
erasure's mask (a run of U+2588, or U+2592 where the erased name held U+2588) is left
out whole, so no masked text, and no text around an erased name, leaves the store.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..adapters.sqlite.facts import FACT_COLUMNS, fact_from_row
from ..api.bodies import fact
from ..domain.erasure import ALT_MASK, MASK
from ..domain.scope import scope, seen

# What a request with the user sees (domain/scope.py): the shared memory and the user's.
_MESSAGES = (
    "SELECT id, role, content, source, occurred_at, recorded_at, project FROM messages "
    "WHERE project IN (?, ?) ORDER BY seq"
)
_FACTS = f"SELECT seq, {FACT_COLUMNS}, project FROM facts WHERE project IN (?, ?) ORDER BY seq"


def _owner(partition: str, shared: str, user: str | None) -> dict[str, str]:
    return {} if partition == shared or user is None else {"user": user}


class ExportError(Exception):
    """Nothing to export from (no store at the path)."""


def _masked(record: dict[str, Any]) -> bool:
    """Whether a record holds text an erasure masked."""
    return any(isinstance(v, str) and (MASK in v or ALT_MASK in v) for v in record.values())


def export_records(path: Path, project: str, user: str | None = None) -> Iterator[dict[str, Any]]:
    """Messages, then facts, of `project` as a request with `user` (or without) sees
    them, each in storing order; None fields left out, `user` on the user's own records
    (the shared ones carry none), so an import stores each where it was; and records
    holding masked (erased) text left out whole."""
    for record in _records(path, project, user):
        if not _masked(record):
            yield record


def _records(path: Path, project: str, user: str | None) -> Iterator[dict[str, Any]]:
    if not path.is_file():
        raise ExportError(f"no embedded store at {path} (see --data)")
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        db.row_factory = sqlite3.Row
        shared = project
        parts = seen(scope(project, user))
        for row in db.execute(_MESSAGES, parts):
            fields = dict(row)
            owner = _owner(fields.pop("project"), shared, user)
            yield {"kind": "message", **{k: v for k, v in fields.items() if v is not None}, **owner}
        for row in db.execute(_FACTS, parts):
            wire = fact(fact_from_row(tuple(row)[:-1]))
            owner = _owner(row["project"], shared, user)
            yield {"kind": "fact", **{k: v for k, v in wire.items() if v is not None}, **owner}
    finally:
        db.close()
