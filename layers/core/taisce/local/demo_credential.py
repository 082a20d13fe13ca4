"""The demo's credential: made once per data folder and reused by every later
`taisce serve --demo`, so a credential pasted into the explorer or a script keeps working
across restarts.

The credential store keeps only a hash of each secret, so the demo's secret is also kept
in the data folder, in `demo-credential`, readable and writable by its owner only (0600).
Whoever can read the data folder can read the whole memory already; the file gives them
nothing more. When the file is missing or its secret is no longer live (revoked, or the
store was replaced), a new credential is made and written there, and any other live
credential labelled `demo` in the project `demo` (earlier versions made one on every
start) is revoked: one demo credential is live at a time.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..credentials import new_credential_id, new_secret, secret_hash
from ..domain.model import Credential
from ..domain.ports.credentials import CredentialStore

FILE_NAME = "demo-credential"
PROJECT = "demo"
LABEL = "demo"


@dataclass(frozen=True)
class DemoCredential:
    secret: str
    path: Path
    made: str | None  # the new credential's id when made now; None when reused
    revoked: tuple[str, ...] = ()  # earlier live demo credentials revoked now


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


def _write_private(path: Path, secret: str) -> None:
    """Write the secret to a new 0600 file, then put it in place in one rename."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(secret + "\n")
    os.replace(temporary, path)


def demo_credential(store: CredentialStore, data_dir: Path) -> DemoCredential:
    """The demo's live credential: the one kept in the data folder, else a new one."""
    path = data_dir / FILE_NAME
    kept = _read(path)
    if kept is not None and store.project_for(secret_hash(kept)) == PROJECT:
        os.chmod(path, 0o600)  # kept private even if its mode was loosened since
        return DemoCredential(secret=kept, path=path, made=None)
    secret = new_secret()
    credential = Credential(id=new_credential_id(), project=PROJECT, label=LABEL, created_at=_now())
    store.add_credential(credential, secret_hash(secret))
    _write_private(path, secret)
    earlier = [
        c.id
        for c in store.list_credentials(PROJECT)
        if c.label == LABEL and c.revoked_at is None and c.id != credential.id
    ]
    now = _now()
    revoked = tuple(i for i in earlier if store.revoke_credential(i, now))
    return DemoCredential(secret=secret, path=path, made=credential.id, revoked=revoked)
