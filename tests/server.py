"""A real `taisce serve` process for tests: real HTTP, real SQLite file."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx

from taisce.adapters.sqlite.store import SqliteStore
from taisce.credentials import new_credential_id, new_secret, secret_hash
from taisce.domain.model import Credential, CredentialKind

ROOT = Path(__file__).resolve().parents[1]
_READY = re.compile(r"taisce serving (http://\S+)")


@dataclass
class LocalServer:
    process: subprocess.Popen[str]
    url: str
    data_dir: Path
    _store: SqliteStore | None = field(default=None, repr=False)

    def new_credential(
        self, project: str, kind: CredentialKind = "project", user: str | None = None
    ) -> str:
        """A live credential for `project` (of `kind`, bound to `user` for a user
        credential), written straight into the server's store."""
        if self._store is None:
            self._store = SqliteStore(self.data_dir / "taisce.sqlite3")
        secret = new_secret()
        now = datetime.now(UTC).isoformat()
        made = Credential(new_credential_id(), project, "test", now, kind=kind, user=user)
        self._store.add_credential(made, secret_hash(secret))
        return secret

    def client(self, secret: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {secret}"} if secret else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def stop(self) -> str:
        """Stop the server; returns what it wrote to stderr."""
        if self._store is not None:
            self._store.close()
        self.process.terminate()
        try:
            _, err = self.process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        return err or ""


def start_server(
    data_dir: Path,
    env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
    open_files: int | None = None,
) -> LocalServer:
    """Start `taisce serve` on a free port with these TAISCE_* settings (and `args`);
    with `open_files`, its descriptor limit (RLIMIT_NOFILE) set that low."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TAISCE_")}
    # Embeddings are off unless a test asks for them: the model is slow to load.
    environ.update({"TAISCE_EMBEDDINGS": "none", **(env or {})})
    if "--processes" not in args:
        # Two handler slots (this process and one more) unless a test asks for more:
        # each handler process imports every handler and loads the model where one is
        # set, and the suite starts many servers; the default of four doubled that CPU.
        args = (*args, "--processes", "2")
    if "--refused-credentials" not in args:
        # The suite sends many refused credentials from one address on purpose; the
        # throttle's own tests (test_http_throttle.py) start servers with it on.
        args = (*args, "--refused-credentials", "0")
    process = subprocess.Popen(
        [
            sys.executable,
            *("-m", "taisce.cli", "serve", "--port", "0", "--data", str(data_dir)),
            *args,
        ],
        cwd=ROOT,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=None if open_files is None else lambda: _limit_files(open_files),
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 30
    line = ""
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line and process.poll() is not None:
            raise RuntimeError(f"server did not start: {process.stderr.read()}")  # type: ignore[union-attr]
        match = _READY.search(line)
        if match:
            return LocalServer(process, match.group(1), data_dir)
    process.kill()
    raise RuntimeError(f"server did not start in time; last output: {line!r}")


def _limit_files(count: int) -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (count, count))


def wait_for_worker(
    http: httpx.Client,
    seconds: float = 60,
    message: str = "the worker did not finish in time",
    poll: float = 0.1,
) -> None:
    """Wait until the server's background worker has nothing pending for the project of
    `http`'s credential (`/v1/status`), failing with `message` after `seconds`."""
    deadline = time.monotonic() + seconds
    while work_pending(http):
        assert time.monotonic() < deadline, message
        time.sleep(poll)


def work_pending(http: httpx.Client) -> bool:
    """Whether the worker has work for the project of `http`'s credential."""
    r = http.get("/v1/status")
    assert r.status_code == 200, r.text
    return bool(r.json()["work_pending"])
