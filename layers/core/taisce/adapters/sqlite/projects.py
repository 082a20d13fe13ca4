"""Reads of a whole project in the embedded store, for erasure to find what names an
entity (domain/erasure.py, plan_erasure)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ...domain.model import Fact, Message, Passage
from ..composed_store import MarkSwitches
from .base import SqlitePart
from .facts import FACT_COLUMNS, fact_from_row
from .file import SqliteFile
from .messages import SqliteMessageStore


class SqliteProjectReads(SqlitePart):
    def __init__(
        self, file: SqliteFile, switches: MarkSwitches, messages: SqliteMessageStore
    ) -> None:
        super().__init__(file, switches)
        self.messages = messages

    def project_facts(self, project: str) -> Iterator[Fact]:
        rows = self._scan(f"SELECT seq, {FACT_COLUMNS} FROM facts WHERE project = ?", (project,))
        for row in rows:
            yield fact_from_row(row)

    def project_entities(self, project: str) -> Iterator[str]:
        for row in self._scan("SELECT key FROM entities WHERE project = ?", (project,)):
            yield row[0]

    def project_messages(self, project: str) -> Iterator[Message]:
        rows = self._scan(
            "SELECT id, role, content, source, occurred_at, recorded_at FROM messages "
            "WHERE project = ? ORDER BY seq",
            (project,),
        )
        for row in rows:
            yield Message(*row)

    def entity_key_page(
        self, project: str, after: str | None, limit: int
    ) -> tuple[list[str], str | None]:
        rows = self._scan(
            "SELECT key FROM entities WHERE project = ? AND key > ? ORDER BY key LIMIT ?",
            (project, after or "", limit),
        ).fetchall()
        return [r[0] for r in rows], rows[-1][0] if len(rows) == limit else None

    def fact_page(
        self, project: str, after: str | None, limit: int
    ) -> tuple[list[Fact], str | None]:
        rows = self._scan(
            f"SELECT seq, {FACT_COLUMNS} FROM facts WHERE project = ? AND seq > ? "
            "ORDER BY seq LIMIT ?",
            (project, int(after or 0), limit),
        ).fetchall()
        return [fact_from_row(r) for r in rows], str(rows[-1][0]) if len(rows) == limit else None

    def message_page_of_project(
        self, project: str, after: str | None, limit: int
    ) -> tuple[list[Message], str | None]:
        rows = self._scan(
            "SELECT seq, id, role, content, source, occurred_at, recorded_at FROM messages "
            "WHERE project = ? AND seq > ? ORDER BY seq LIMIT ?",
            (project, int(after or 0), limit),
        ).fetchall()
        found = [Message(*r[1:]) for r in rows]
        return found, str(rows[-1][0]) if len(rows) == limit else None

    def passages_of_messages(
        self, project: str, message_ids: Sequence[str]
    ) -> dict[str, list[Passage]]:
        return {m: self.messages.passages_of(project, m) for m in dict.fromkeys(message_ids)}
