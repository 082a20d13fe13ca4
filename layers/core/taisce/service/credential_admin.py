"""What an admin credential may do through the API: mint project and user credentials
in its own project, list them a page at a time, revoke them. Nothing here reaches
another project: every call names the caller's."""

from __future__ import annotations

from ..credentials import mint, now_text, secret_hash
from ..domain.credential_requests import CredentialPage, CredentialRequest
from ..domain.errors import NotFound
from ..domain.listing import check_page, decode_cursor, encode_cursor
from ..domain.model import Credential, CredentialKind
from ..domain.ports.credentials import CredentialStore

_CURSOR = "credentials"


def mint_credential(
    store: CredentialStore, project: str, request: CredentialRequest
) -> tuple[Credential, str]:
    """A new project credential, or a user credential when the request names a user;
    the secret is returned for the caller to show once."""
    kind: CredentialKind = "user" if request.user is not None else "project"
    credential, secret = mint(project, kind, request.user, request.label)
    store.add_credential(credential, secret_hash(secret))
    return credential, secret


def list_credentials(
    store: CredentialStore, project: str, limit: int | None, cursor: str | None
) -> CredentialPage:
    size = check_page(limit)
    after = decode_cursor(_CURSOR, project, cursor, 1)[0] if cursor else None
    found = store.credential_page(project, size + 1, after)
    if len(found) <= size:
        return CredentialPage(found, None)
    shown = found[:size]
    return CredentialPage(shown, encode_cursor(_CURSOR, project, [shown[-1].id]))


def revoke(store: CredentialStore, project: str, credential_id: str) -> None:
    if not store.revoke_credential(credential_id, now_text(), project):
        raise NotFound("no live credential with this id in this project")
