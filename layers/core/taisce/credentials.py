"""Bearer credentials: made at random, kept only as a SHA-256 hash.

A credential carries 256 random bits, so a fast hash is safe here (no password
stretching is needed) and lookup by hash is a single indexed read.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta

from .domain.model import Credential, CredentialKind

PREFIX = "tsk_"


def new_secret() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def new_credential_id() -> str:
    return "cred_" + secrets.token_hex(6)


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def bearer_secret(authorization: str | None) -> str | None:
    """The credential in an `Authorization: Bearer ...` header, if well formed."""
    if not authorization:
        return None
    scheme, _, secret = authorization.strip().partition(" ")
    secret = secret.strip()
    if scheme.lower() != "bearer" or not secret or len(secret) > 512:
        return None
    return secret


# A credential's last use is written at most this often (seconds): a busy credential
# would otherwise write on every request.
USE_RECORDED_EVERY = 60


def now_text(now: datetime | None = None) -> str:
    """A moment as the credentials keep it: RFC 3339 in UTC with a Z."""
    moment = now or datetime.now(UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def mint(
    project: str, kind: CredentialKind, user: str | None = None, label: str | None = None
) -> tuple[Credential, str]:
    """A new credential and its secret (which only its hash is kept of): a user
    credential is bound to `user`; the other kinds take none."""
    if (kind == "user") != (user is not None):
        raise ValueError("a user credential names its user, and only a user credential does")
    credential = Credential(
        id=new_credential_id(),
        project=project,
        label=label,
        created_at=now_text(),
        kind=kind,
        user=user,
    )
    return credential, new_secret()


def use_is_stale(credential: Credential, now: datetime) -> str | None:
    """The moment before which a recorded use is too old to keep (so `now` is to be
    written), or None when the recorded one is recent enough."""
    cutoff = now_text(now - timedelta(seconds=USE_RECORDED_EVERY))
    last = credential.last_used_at
    return cutoff if last is None or last <= cutoff else None
