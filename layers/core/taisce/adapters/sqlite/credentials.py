"""API credentials in the embedded store (domain/ports/credentials.py): a secret is kept
only as its hash, which finds the credential's project."""

from __future__ import annotations

from ...domain.model import Credential
from .base import SqlitePart


class SqliteCredentialStore(SqlitePart):
    def add_credential(self, credential: Credential, secret_hash: str) -> None:
        with self._write() as db:
            db.execute(
                "INSERT INTO credentials (hash, id, project, label, created_at, revoked_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    secret_hash,
                    credential.id,
                    credential.project,
                    credential.label,
                    credential.created_at,
                    credential.revoked_at,
                ),
            )

    def project_for(self, secret_hash: str) -> str | None:
        row = (
            self._db()
            .execute(
                "SELECT project FROM credentials WHERE hash = ? AND revoked_at IS NULL",
                (secret_hash,),
            )
            .fetchone()
        )
        return row["project"] if row else None

    def list_credentials(self, project: str | None = None) -> list[Credential]:
        query = "SELECT id, project, label, created_at, revoked_at FROM credentials"
        params: tuple[str, ...] = ()
        if project is not None:
            query += " WHERE project = ?"
            params = (project,)
        rows = self._db().execute(query + " ORDER BY created_at, id", params)
        return [Credential(**dict(r)) for r in rows]

    def revoke_credential(self, credential_id: str, revoked_at: str) -> bool:
        with self._write() as db:
            return bool(
                db.execute(
                    "UPDATE credentials SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                    (revoked_at, credential_id),
                ).rowcount
            )
