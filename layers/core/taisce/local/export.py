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

_MESSAGES = (
    "SELECT id, role, content, source, occurred_at, recorded_at FROM messages "
    "WHERE project = ? ORDER BY seq"
)
_FACTS = f"SELECT seq, {FACT_COLUMNS} FROM facts WHERE project = ? ORDER BY seq"


class ExportError(Exception):
    """Nothing to export from (no store at the path)."""


def _masked(record: dict[str, Any]) -> bool:
    """Whether a record holds text an erasure masked."""
    return any(isinstance(v, str) and (MASK in v or ALT_MASK in v) for v in record.values())


def export_records(path: Path, project: str) -> Iterator[dict[str, Any]]:
    """Messages, then facts, of `project`, each in storing order; None fields left out,
    and records holding masked (erased) text left out whole."""
    for record in _records(path, project):
        if not _masked(record):
            yield record


def _records(path: Path, project: str) -> Iterator[dict[str, Any]]:
    if not path.is_file():
        raise ExportError(f"no embedded store at {path} (see --data)")
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        db.row_factory = sqlite3.Row
        for row in db.execute(_MESSAGES, (project,)):
            yield {"kind": "message", **{k: v for k, v in dict(row).items() if v is not None}}
        for row in db.execute(_FACTS, (project,)):
            wire = fact(fact_from_row(tuple(row)))
            yield {"kind": "fact", **{k: v for k, v in wire.items() if v is not None}}
    finally:
        db.close()
