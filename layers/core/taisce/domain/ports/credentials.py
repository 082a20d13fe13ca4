"""Bearer credentials (taisce/credentials.py makes and checks them)."""

from __future__ import annotations

from typing import Protocol

from ..model import Credential


class CredentialStore(Protocol):
    """Bearer credentials, kept only as hashes."""

    def add_credential(self, credential: Credential, secret_hash: str) -> None: ...

    def project_for(self, secret_hash: str) -> str | None:
        """The project of a live credential with this hash, or None."""
        ...

    def credential_for(self, secret_hash: str) -> Credential | None:
        """The live credential with this hash (its kind, user and last use), or None."""
        ...

    def record_use(self, secret_hash: str, used_at: str, unless_after: str) -> None:
        """Set the credential's last use to `used_at`, unless one later than
        `unless_after` is already recorded (so a busy credential is written rarely)."""
        ...

    def list_credentials(self, project: str | None = None) -> list[Credential]:
        """Every credential (of the project), revoked ones too, by creation time then id."""
        ...

    def credential_page(self, project: str, limit: int, after: str | None) -> list[Credential]:
        """Up to `limit` of the project's credentials (revoked ones too) by id, those
        with an id after `after` when it is given."""
        ...

    def revoke_credential(
        self, credential_id: str, revoked_at: str, project: str | None = None
    ) -> bool:
        """Revoke a live credential (only one of `project` when it is given); False
        when there is no such live credential."""
        ...
