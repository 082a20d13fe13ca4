"""API credentials in the embedded store (domain/ports/credentials.py): a secret is kept
only as its hash, which finds the credential's project."""

from __future__ import annotations

import sqlite3

from ...domain.model import Credential
from .base import SqlitePart

_COLUMNS = "id, project, label, created_at, revoked_at, kind, user, last_used_at"


def _credential(row: sqlite3.Row) -> Credential:
    found = dict(row)
    # A credential stored before kinds existed is a project credential.
    found["kind"] = found["kind"] or "project"
    return Credential(**found)


class SqliteCredentialStore(SqlitePart):
    def add_credential(self, credential: Credential, secret_hash: str) -> None:
        with self._write() as db:
            db.execute(
                f"INSERT INTO credentials (hash, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    secret_hash,
                    credential.id,
                    credential.project,
                    credential.label,
                    credential.created_at,
                    credential.revoked_at,
                    credential.kind,
                    credential.user,
                    credential.last_used_at,
                ),
            )

    def project_for(self, secret_hash: str) -> str | None:
        found = self.credential_for(secret_hash)
        return found.project if found else None

    def credential_for(self, secret_hash: str) -> Credential | None:
        row = (
            self._db()
            .execute(
                f"SELECT {_COLUMNS} FROM credentials WHERE hash = ? AND revoked_at IS NULL",
                (secret_hash,),
            )
            .fetchone()
        )
        return _credential(row) if row else None

    def record_use(self, secret_hash: str, used_at: str, unless_after: str) -> None:
        with self._write() as db:
            db.execute(
                "UPDATE credentials SET last_used_at = ? WHERE hash = ? "
                "AND (last_used_at IS NULL OR last_used_at <= ?)",
                (used_at, secret_hash, unless_after),
            )

    def list_credentials(self, project: str | None = None) -> list[Credential]:
        query = f"SELECT {_COLUMNS} FROM credentials"
        params: tuple[str, ...] = ()
        if project is not None:
            query += " WHERE project = ?"
            params = (project,)
        rows = self._db().execute(query + " ORDER BY created_at, id", params)
        return [_credential(r) for r in rows]

    def credential_page(self, project: str, limit: int, after: str | None) -> list[Credential]:
        rows = self._db().execute(
            f"SELECT {_COLUMNS} FROM credentials WHERE project = ? AND id > ? ORDER BY id LIMIT ?",
            (project, after or "", limit),
        )
        return [_credential(r) for r in rows]

    def revoke_credential(
        self, credential_id: str, revoked_at: str, project: str | None = None
    ) -> bool:
        query = "UPDATE credentials SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL"
        params: tuple[str, ...] = (revoked_at, credential_id)
        if project is not None:
            query += " AND project = ?"
            params += (project,)
        with self._write() as db:
            return bool(db.execute(query, params).rowcount)
