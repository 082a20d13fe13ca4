"""The real `taisce` command: credentials create/list/revoke, and `serve --demo`."""

from __future__ import annotations

import contextlib
import hashlib
import os
import queue
import re
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.draining import lines_into
from tests.server import ROOT, LocalServer, start_server

CREDENTIAL = re.compile(r"^tsk_[A-Za-z0-9_-]{40,}$")
LIST_HEADER = "id\tproject\tkind\tuser\tcreated_at\tlast_used_at\tstate\tlabel"


def _environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("TAISCE_")}


def taisce(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taisce.cli", *args],
        cwd=ROOT,
        env=_environ(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def create(data: Path, project: str, *extra: str) -> tuple[str, str]:
    """Create a credential with the CLI: (id, secret)."""
    done = taisce("credentials", "create", "--project", project, *extra, "--data", str(data))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    secret = lines[-1]
    assert CREDENTIAL.match(secret), done.stdout
    ids = [w for line in lines[:-1] for w in line.split() if w.startswith("cred_")]
    assert len(ids) == 1, done.stdout
    return ids[0], secret


def assert_one_clear_line(done: subprocess.CompletedProcess[str]) -> str:
    output = (done.stdout + done.stderr).strip()
    assert "Traceback" not in output and 'File "' not in output, output
    lines = output.splitlines()
    assert len(lines) == 1, output
    return lines[0]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def running(data: Path) -> Iterator[LocalServer]:
    data.mkdir(parents=True, exist_ok=True)
    server = start_server(data)
    yield server
    server.stop()


def recall_status(server: LocalServer, secret: str) -> int:
    with server.client(secret) as http:
        return http.post("/v1/recalls", json={"question": "Where does Atlas work?"}).status_code


# -- create ---------------------------------------------------------------------------------


def test_create_prints_a_credential_that_a_server_on_the_same_data_accepts(data: Path) -> None:
    _, made_before = create(data, "cli-project", "--label", "laptop")
    server = start_server(data)
    try:
        _, made_while_serving = create(data, "cli-project")
        assert made_before != made_while_serving
        # Two facts, not one said twice (an identical fact is stored once).
        for secret, employer in ((made_before, "Acme Corp"), (made_while_serving, "Globex")):
            with server.client(secret) as http:
                stored = http.post(
                    "/v1/facts",
                    json={
                        "facts": [
                            {
                                "subject": "Atlas",
                                "predicate": "works at",
                                "object": employer,
                                "source_role": "user",
                            }
                        ]
                    },
                )
                assert stored.status_code == 201, stored.text
        # Both credentials are the same project: each sees both facts.
        with server.client(made_before) as http:
            assert len(http.get("/v1/facts", params={"subject": "atlas"}).json()["facts"]) == 2
        with server.client("tsk_not-" + made_before[8:]) as http:
            assert http.post("/v1/recalls", json={"question": "x"}).status_code == 401
    finally:
        server.stop()


def test_the_data_files_never_hold_the_credential_in_plain_text(data: Path) -> None:
    secrets = [create(data, f"plain-{i}")[1] for i in range(3)]
    files = [p for p in data.iterdir() if p.is_file()]
    assert any(p.name == "taisce.sqlite3" for p in files)
    content = b"".join(p.read_bytes() for p in files)
    for secret in secrets:
        assert secret.encode() not in content
        assert secret.removeprefix("tsk_").encode() not in content
        assert secret.encode("utf-16-le") not in content
    # What is kept is the SHA-256 hash, which is all a server needs.
    stored_hashes = [hashlib.sha256(s.encode()).hexdigest().encode() for s in secrets]
    assert all(h in content for h in stored_hashes)


def test_create_refuses_an_empty_project(data: Path) -> None:
    done = taisce("credentials", "create", "--project", "   ", "--data", str(data))
    assert done.returncode != 0
    line = assert_one_clear_line(done)
    assert "project" in line


def test_create_refuses_a_project_with_a_control_character(data: Path) -> None:
    # "a\x1fb" would name the partition of user "b" of project "a".
    done = taisce("credentials", "create", "--project", "a\x1fb", "--data", str(data))
    assert done.returncode != 0
    assert "control characters" in assert_one_clear_line(done)
    assert taisce("credentials", "list", "--data", str(data)).stdout.splitlines() == [LIST_HEADER]


def test_create_refuses_a_bad_user_and_both_kinds_at_once(data: Path) -> None:
    done = taisce("credentials", "create", "--project", "p", "--user", "a b", "--data", str(data))
    assert done.returncode == 2
    assert "--user" in assert_one_clear_line(done)
    both = ("--admin", "--user", "ana")
    done = taisce("credentials", "create", "--project", "p", *both, "--data", str(data))
    assert done.returncode == 2 and "not allowed with" in done.stderr
    assert taisce("credentials", "list", "--data", str(data)).stdout.splitlines() == [LIST_HEADER]


# -- list -------------------------------------------------------------------------------------


def test_list_shows_ids_and_projects_but_never_secrets(data: Path) -> None:
    id_a, secret_a = create(data, "list-alpha", "--label", "alpha laptop")
    id_b, secret_b = create(data, "list-beta", "--user", "ana@example.com")
    id_c, secret_c = create(data, "list-beta", "--admin")
    done = taisce("credentials", "list", "--data", str(data))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    header, *lines = out.splitlines()
    assert header == LIST_HEADER
    assert len(lines) == 3
    # Every row has the header's eight tab-separated columns, the label last.
    assert all(len(line.split("\t")) == 8 for line in lines)
    columns = header.split("\t")
    rows = {r.split("\t")[0]: dict(zip(columns, r.split("\t"), strict=True)) for r in lines}
    # Each line has the header's columns, in its order.
    assert rows[id_a] | {"created_at": "-"} == {
        "id": id_a,
        "project": "list-alpha",
        "kind": "project",
        "user": "",
        "created_at": "-",
        "last_used_at": "",
        "state": "live",
        "label": "alpha laptop",
    }
    assert (rows[id_b]["kind"], rows[id_b]["user"]) == ("user", "ana@example.com")
    assert (rows[id_c]["kind"], rows[id_c]["user"]) == ("admin", "")
    line_a = next(line for line in lines if id_a in line)
    line_b = next(line for line in lines if id_b in line)
    assert "list-alpha" in line_a and "alpha laptop" in line_a
    assert "list-beta" in line_b
    for secret in (secret_a, secret_b, secret_c):
        assert secret not in out
        assert secret.removeprefix("tsk_") not in out
        assert hashlib.sha256(secret.encode()).hexdigest() not in out
    assert "tsk_" not in out

    only_beta = taisce("credentials", "list", "--project", "list-beta", "--data", str(data))
    assert only_beta.returncode == 0
    assert id_b in only_beta.stdout and id_a not in only_beta.stdout


def test_list_on_a_fresh_data_dir_is_its_header_alone(data: Path) -> None:
    done = taisce("credentials", "list", "--data", str(data))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [LIST_HEADER]


# -- revoke -----------------------------------------------------------------------------------


def test_revoke_stops_the_credential_on_the_next_request(data: Path, running: LocalServer) -> None:
    id_kept, kept = create(data, "revoke-p")
    id_gone, gone = create(data, "revoke-p")
    assert recall_status(running, gone) == 200

    done = taisce("credentials", "revoke", id_gone, "--data", str(data))
    assert done.returncode == 0, done.stderr
    assert id_gone in done.stdout

    assert recall_status(running, gone) == 401
    assert recall_status(running, kept) == 200

    listing = taisce("credentials", "list", "--data", str(data)).stdout.splitlines()
    assert "revoked" in next(line for line in listing if id_gone in line)
    assert "revoked" not in next(line for line in listing if id_kept in line)

    # Revoking it again is refused: it is no longer live.
    again = taisce("credentials", "revoke", id_gone, "--data", str(data))
    assert again.returncode != 0
    assert id_gone in assert_one_clear_line(again)
    assert recall_status(running, gone) == 401


def test_revoking_an_unknown_id_fails_with_one_clear_line(data: Path) -> None:
    create(data, "unknown-revoke")
    done = taisce("credentials", "revoke", "cred_doesnotexist", "--data", str(data))
    assert done.returncode != 0
    line = assert_one_clear_line(done)
    assert "cred_doesnotexist" in line
    assert done.stdout.strip() == ""  # the complaint goes to stderr


# -- serve --demo -------------------------------------------------------------------------------


@dataclass
class Demo:
    url: str
    secret: str
    printed: list[str]
    out: queue.Queue[str | None]


@contextlib.contextmanager
def serving_demo(data: Path, **env: str) -> Iterator[Demo]:
    """`taisce serve --demo` on `data`, up to the credential it prints last."""
    process = subprocess.Popen(
        [
            sys.executable,
            *("-m", "taisce.cli", "serve", "--port", "0", "--demo", "--data", str(data)),
            *("--processes", "2"),  # the default of four is tested by tests/packaging
        ],
        cwd=ROOT,
        env=_environ() | env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    out: queue.Queue[str | None] = queue.Queue()
    err: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=lines_into, args=(process.stdout, out), daemon=True).start()
    threading.Thread(target=lines_into, args=(process.stderr, err), daemon=True).start()
    try:
        printed: list[str] = []
        deadline = time.monotonic() + 60
        # The credential is the last line printed before serving: read up to it.
        while not (printed and CREDENTIAL.match(printed[-1])):
            line = out.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, f"serve --demo stopped: {printed}"
            printed.append(line)
        url = re.search(r"taisce serving (http://\S+)", printed[0])
        assert url, printed
        yield Demo(url.group(1), printed[-1], printed, out)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _recall(demo: Demo, secret: str) -> httpx.Response:
    with httpx.Client(
        base_url=demo.url, headers={"Authorization": f"Bearer {secret}"}, timeout=30
    ) as http:
        return http.post("/v1/recalls", json={"question": "Tell me about Atlas", "hops": 2})


def test_serve_demo_prints_a_credential_that_recalls_the_demo(tmp_path: Path) -> None:
    fresh = tmp_path / "never-made"
    with serving_demo(fresh) as demo:
        # The hint printed above it uses the same credential.
        assert any(demo.secret in line and "curl" in line for line in demo.printed[:-1])
        r = _recall(demo, demo.secret)
        assert r.status_code == 200, r.text
        body = r.json()
        statements = [f["statement"] for f in body["facts"]]
        assert "Atlas works at Acme Corp" in statements
        assert any(f.get("path", [None])[0] == "Atlas" for f in body["facts"])
        assert body["characters"] > 0
        # Nothing else is printed on stdout once serving.
        time.sleep(0.2)
        assert demo.out.empty()
    assert (fresh / "taisce.sqlite3").is_file()


def _demo_rows(data: Path) -> list[list[str]]:
    done = taisce("credentials", "list", "--project", "demo", "--data", str(data))
    assert done.returncode == 0, done.stderr
    return [line.split("\t") for line in done.stdout.splitlines()[1:]]


def test_serve_demo_reuses_its_credential_until_it_is_revoked(tmp_path: Path) -> None:
    data = tmp_path / "data"
    kept = data / "demo-credential"
    with serving_demo(data, TAISCE_EMBEDDINGS="none") as first:
        assert _recall(first, first.secret).status_code == 200
    # Kept beside the store, for its owner only; the store itself holds only a hash.
    assert kept.read_text().strip() == first.secret
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert first.secret.encode() not in (data / "taisce.sqlite3").read_bytes()

    with serving_demo(data, TAISCE_EMBEDDINGS="none") as second:
        assert second.secret == first.secret
        assert any("the one kept in" in line for line in second.printed)
        assert _recall(second, second.secret).status_code == 200
    (row,) = _demo_rows(data)  # one demo credential, made once
    assert row[6] == "live" and row[7] == "demo"

    done = taisce("credentials", "revoke", row[0], "--data", str(data))
    assert done.returncode == 0, done.stderr
    with serving_demo(data, TAISCE_EMBEDDINGS="none") as third:
        assert third.secret != first.secret
        assert kept.read_text().strip() == third.secret
        assert _recall(third, third.secret).status_code == 200
        assert _recall(third, first.secret).status_code == 401
    states = sorted(r[6].split()[0] for r in _demo_rows(data))
    assert states == ["live", "revoked"]
