"""SQL helpers the embedded store's capability modules share: the one chunked
`IN (?, …)` read, and time columns compared in time order."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

# What a read sees (domain/scope.py): the shared partition and the request's user's,
# bound with `seen(project)`; the same value twice for the shared memory alone. Every
# table's key starts with the project column, so each is one index range.
SEEN = "project IN (?, ?)"

# SQLite allows 32,766 bound variables; stay well below it per statement.
CHUNK = 500
# Where rows_in writes each chunk's "?, ?, …" in a statement.
MARKS = "{marks}"

# A connection's execute (rows as its row factory makes them), or the store's plain
# tuple scan (base.SqlitePart._scan), which hot reads use.
Execute = Callable[[str, tuple[object, ...]], sqlite3.Cursor]


def rows_in(
    execute: Execute,
    sql: str,
    values: Sequence[object],
    before: tuple[object, ...] = (),
    after: tuple[object, ...] = (),
) -> list[Any]:
    """Every row of `sql` for `values`, run once per CHUNK of them: each run's marks
    replace MARKS in `sql` (as in `id IN ({marks})`), its parameters are `before`,
    the chunk, then `after`. No values, no statement run."""
    rows: list[Any] = []
    for start in range(0, len(values), CHUNK):
        chunk = values[start : start + CHUNK]
        marks = ",".join("?" * len(chunk))
        rows += execute(sql.replace(MARKS, marks), (*before, *chunk, *after)).fetchall()
    return rows


def sortable_sql(column: str) -> str:
    """SQL for `domain.validity.sortable` of a timestamp column: the short form
    "...:SSZ" gains ".000000" so that text order is time order."""
    return (
        f"(CASE WHEN length({column}) = 20 THEN substr({column}, 1, 19) || '.000000Z' "
        f"ELSE {column} END)"
    )
