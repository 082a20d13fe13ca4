"""`taisce credentials ... --store dynamodb --table T`: the first credential of a
deployed stack, written to the table (here moto's, over HTTP) as a hash only."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

from taisce.credentials import secret_hash
from tests.integration.test_cli_credentials import CREDENTIAL
from tests.moto_server import ROOT, shared_moto


def taisce(*args: str) -> subprocess.CompletedProcess[str]:
    moto = shared_moto()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAISCE_")}
    # Only the endpoint comes from the environment (the tests' moto); the CLI's flags
    # pick the store and table. TAISCE_EMBEDDINGS is left at its default ("local"):
    # managing credentials must not need the vector index.
    env.update({**moto.env, "TAISCE_STORE": "embedded", "TAISCE_DYNAMODB_TABLE": "wrong"})
    return subprocess.run(
        [sys.executable, "-m", "taisce.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_create_list_and_revoke_a_credential_in_the_table() -> None:
    moto = shared_moto()
    project = f"deployed-{uuid.uuid4().hex[:8]}"
    flags = ("--store", "dynamodb", "--table", moto.table)
    created = taisce("credentials", "create", "--project", project, "--label", "ci", *flags)
    assert created.returncode == 0, created.stderr
    secret = created.stdout.strip().splitlines()[-1]
    assert CREDENTIAL.match(secret)
    store = moto.store()
    assert store.project_for(secret_hash(secret)) == project
    listed = taisce("credentials", "list", "--project", project, *flags)
    assert listed.returncode == 0, listed.stderr
    (credential_id,) = [c.id for c in store.list_credentials(project) if c.label == "ci"]
    assert credential_id in listed.stdout and secret not in listed.stdout
    revoked = taisce("credentials", "revoke", credential_id, *flags)
    assert revoked.returncode == 0, revoked.stderr
    assert store.project_for(secret_hash(secret)) is None
