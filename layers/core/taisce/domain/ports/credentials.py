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

    def list_credentials(self, project: str | None = None) -> list[Credential]: ...

    def revoke_credential(self, credential_id: str, revoked_at: str) -> bool: ...
