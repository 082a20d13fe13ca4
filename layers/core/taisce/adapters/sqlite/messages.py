"""Messages and their passages in the embedded store: storing a batch (each new
message placed in its project's storing order, its passages marked for indexing and
extraction), and the passages recall reads."""

from __future__ import annotations

from collections.abc import Sequence

from ...domain.filters import MessageFilter
from ...domain.message_batch import batch_to_store
from ...domain.model import Message, Passage
from ...domain.scope import seen
from ...domain.validity import sortable
from .base import SqlitePart
from .sql import MARKS, SEEN, rows_in, sortable_sql
from .work import MARK_PASSAGE


def _message_filter_sql(messages: MessageFilter | None) -> tuple[str, list[object]]:
    """The recall's time filters as extra WHERE conditions on messages `m`."""
    if messages is None:
        return "", []
    where: list[str] = []
    params: list[object] = []
    if messages.occurred_by is not None:
        where.append(f"{sortable_sql('m.occurred_at')} <= ?")
        params.append(sortable(messages.occurred_by))
    if messages.recorded_after is not None:
        where.append(f"{sortable_sql('m.recorded_at')} >= ?")
        params.append(sortable(messages.recorded_after))
    if messages.recorded_before is not None:
        where.append(f"{sortable_sql('m.recorded_at')} < ?")
        params.append(sortable(messages.recorded_before))
    return "".join(f" AND {w}" for w in where), params


class SqliteMessageStore(SqlitePart):
    def put_messages(
        self, project: str, messages: Sequence[Message], passages: Sequence[Passage]
    ) -> set[str]:
        with self._write() as db:
            # Positions follow on from the project's last, given to new messages only
            # (inside this transaction: no gaps, none given twice).
            row = db.execute(
                "SELECT next FROM message_positions WHERE project = ?", (project,)
            ).fetchone()
            first = int(row[0]) if row else 1
            new: dict[str, Message] = {}
            positions: dict[str, int] = {}
            batch = batch_to_store(messages, passages)
            for m in batch.messages:
                position = first + len(new)
                if not db.execute(
                    "INSERT INTO messages "
                    "(project, id, role, content, source, occurred_at, recorded_at, position) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project, id) DO NOTHING",
                    (
                        project,
                        m.id,
                        m.role,
                        m.content,
                        m.source,
                        m.occurred_at,
                        m.recorded_at,
                        position,
                    ),
                ).rowcount:
                    continue  # stored already: it keeps its passages
                new[m.id] = m
                positions[m.id] = position
            rows = [
                (project, p.id, p.message_id, p.role, p.source, p.start, p.end, p.quote)
                for p in batch.passages
                if p.message_id in new
            ]
            if new:
                db.execute(
                    "INSERT INTO message_positions (project, next) VALUES (?, ?) "
                    "ON CONFLICT (project) DO UPDATE SET next = excluded.next",
                    (project, first + len(new)),
                )
            db.executemany(
                'INSERT INTO passages (project, id, message_id, role, source, start, "end", '
                "quote) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            if self.switches.vectors:
                db.executemany(
                    MARK_PASSAGE,
                    [
                        (
                            project,
                            row[1],
                            row[7],
                            row[3],
                            positions[str(row[2])],
                            new[str(row[2])].occurred_at or "",
                        )
                        for row in rows
                    ],
                )
            if self.switches.extractions:
                db.executemany(
                    "INSERT OR IGNORE INTO pending_extractions (project, message_id) VALUES (?, ?)",
                    [(project, message_id) for message_id in new],
                )
        return set(new)

    def message(self, project: str, message_id: str) -> Message | None:
        row = (
            self._db()
            .execute(
                # The user's own message first where the shared memory holds the id too.
                "SELECT id, role, content, source, occurred_at, recorded_at FROM messages "
                f"WHERE {SEEN} AND id = ? ORDER BY project DESC LIMIT 1",
                (*seen(project), message_id),
            )
            .fetchone()
        )
        return Message(**dict(row)) if row else None

    def messages_by_ids(self, project: str, ids: Sequence[str]) -> list[Message]:
        # By project ascending, so the user's own row (its partition sorts after the
        # shared one's name) is the one kept.
        rows = rows_in(
            self._scan,
            "SELECT id, role, content, source, occurred_at, recorded_at, project FROM messages "
            f"WHERE {SEEN} AND id IN ({MARKS}) ORDER BY project",
            ids,
            seen(project),
        )
        found = {r[0]: Message(*r[:6]) for r in rows}
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def passages_by_ids(
        self,
        project: str,
        ids: Sequence[str],
        messages: MessageFilter | None = None,
        times: bool = False,
    ) -> list[Passage]:
        # The message's times come with the join the message filter needs anyway, so a
        # recall need not read its passages' messages again for them.
        where, params = _message_filter_sql(messages)
        rows = rows_in(
            self._scan,
            'SELECT p.id, p.message_id, p.role, p.source, p.start, p."end", p.quote, '
            "m.occurred_at, m.position, m.recorded_at FROM passages p "
            "JOIN messages m ON m.project = p.project AND m.id = p.message_id "
            f"WHERE p.project IN (?, ?) AND p.id IN ({MARKS}){where} ORDER BY p.project",
            ids,
            seen(project),
            tuple(params),
        )
        # Plain tuples in Passage's field order: recall reads hundreds per question.
        found = {r[0]: Passage(*r) for r in rows}
        return [found[i] for i in ids if i in found]

    def passages_of(self, project: str, message_id: str) -> list[Passage]:
        rows = self._db().execute(
            'SELECT id, message_id, role, source, start, "end", quote, '
            "(SELECT position FROM messages m WHERE m.project = passages.project "
            "AND m.id = passages.message_id) AS position FROM passages "
            "WHERE project = (SELECT project FROM messages WHERE project IN (?, ?) AND id = ? "
            "ORDER BY project DESC LIMIT 1) AND message_id = ? ORDER BY start",
            (*seen(project), message_id, message_id),
        )
        return [Passage(**dict(r)) for r in rows]
