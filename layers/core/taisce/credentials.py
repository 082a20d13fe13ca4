"""Bearer credentials: made at random, kept only as a SHA-256 hash.

A credential carries 256 random bits, so a fast hash is safe here (no password
stretching is needed) and lookup by hash is a single indexed read.
"""

from __future__ import annotations

import hashlib
import secrets

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
