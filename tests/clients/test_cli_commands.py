"""The real `taisce` command: recall, import and export against a real `taisce serve`."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest
from taisce_client import Client
from taisce_client.importer import import_lines

from tests.integration.test_cli_credentials import _environ, assert_one_clear_line
from tests.server import ROOT, LocalServer

FACTS = [
    {"id": "c1", "subject": "Atlas", "predicate": "works at", "object": "Acme Corp",
     "source_role": "user", "quote": "Atlas works at Acme", "context": "since 2021"},
    {"id": "c2", "subject": "Acme Corp", "predicate": "is based in", "object": "Dublin",
     "source_role": "tool"},
]  # fmt: skip


def taisce(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taisce.cli", *args],
        cwd=ROOT,
        env={**_environ(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


def connection(server: LocalServer, secret: str) -> dict[str, str]:
    return {"TAISCE_URL": server.url, "TAISCE_API_KEY": secret}


# -- recall -----------------------------------------------------------------------------------


def test_recall_prints_facts_with_roles_and_paths_and_the_budget(server: LocalServer) -> None:
    secret = server.new_credential("cli-recall")
    with Client(server.url, secret) as client:
        client.store_facts(FACTS)
    env = connection(server, secret)
    done = taisce("recall", "What about Atlas?", "--hops", "2", "--roles", "user,tool", env=env)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "[user] Atlas works at Acme Corp" in out
    assert "context: since 2021" in out and "“Atlas works at Acme”" in out
    assert "[tool] Acme Corp is based in Dublin" in out
    assert "via Atlas → Acme Corp" in out
    assert "of 16,000 characters" in out and "hops 2" in out and "roles user, tool" in out
    assert "could not run: reports, passages" in out

    as_json = taisce("recall", "What about Atlas?", "--json", "--max-characters", "60",
                     env=env)  # fmt: skip
    body = json.loads(as_json.stdout)
    assert [f["id"] for f in body["facts"]] == [] and body["truncated"] is True
    assert body["controls"]["max_characters"] == 60

    nothing = taisce("recall", "Who is Zed?", "--surfaces", "facts", env=env)
    assert nothing.stdout.startswith("Nothing found.")


def test_recall_errors_are_one_clear_line(server: LocalServer) -> None:
    env = connection(server, server.new_credential("cli-recall-errors"))
    refused = taisce("recall", "Atlas", "--max-characters", "0", env=env)
    assert refused.returncode == 1
    line = assert_one_clear_line(refused)
    assert line.startswith("error: invalid_recall_controls (max_characters): ")

    wrong_key = taisce("recall", "Atlas", "--api-key", "tsk_nope", "--url", server.url)
    assert assert_one_clear_line(wrong_key).startswith("error: unauthorized")

    no_key = taisce("recall", "Atlas", "--url", server.url)
    assert "TAISCE_API_KEY" in assert_one_clear_line(no_key)

    nobody = taisce("recall", "Atlas", "--url", "http://127.0.0.1:9", "--api-key", "tsk_x")
    assert nobody.returncode == 1
    assert "http://127.0.0.1:9" in assert_one_clear_line(nobody)


# -- import and export --------------------------------------------------------------------


def _conversation(path: Path) -> list[str]:
    """250 messages, one line a problem of each kind, one repeated id."""
    lines = [
        json.dumps(
            {"role": "user" if i % 2 else "assistant", "content": f"Message {i} about Orla."}
        )
        for i in range(250)
    ]
    lines[10] = "{not json"
    lines[20] = json.dumps({"content": "no role"})
    lines[30] = json.dumps({"id": "dup", "role": "user", "content": "first"})
    lines[31] = json.dumps({"id": "dup", "role": "user", "content": "second"})
    lines.append("")
    lines.append(json.dumps({"kind": "fact", **FACTS[0]}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lines


def test_import_sends_batches_reports_refused_lines_and_is_idempotent(
    server: LocalServer, tmp_path: Path
) -> None:
    project = "cli-import"
    env = connection(server, server.new_credential(project))
    source = tmp_path / "conversation.jsonl"
    _conversation(source)

    done = taisce("import", str(source), env=env)
    assert done.returncode == 1  # some lines were refused
    assert "Traceback" not in done.stderr
    summary = done.stdout.splitlines()
    # 250 lines: one not JSON, one without a role, one repeating an id.
    assert summary[0] == (
        f"{source}: 247 messages and 1 facts stored, 2 lines refused "
        "(an id stored before is kept as it was, so a rerun adds nothing twice)"
    )
    assert summary[1] == "1 lines repeat an earlier line's id and were skipped: 32"
    assert summary[2] == "2 lines refused:"
    assert summary[3].startswith("  line 11: not JSON")
    assert summary[4].startswith("  line 21: invalid_request: ")

    exported = tmp_path / "export.jsonl"
    dump = ["export", "--project", project, "--data", str(server.data_dir), "-o", str(exported)]
    assert taisce(*dump).returncode == 0
    first = exported.read_text(encoding="utf-8")
    assert len(first.splitlines()) == 248

    # A rerun sends the same ids: nothing is stored twice.
    again = taisce("import", str(source), env=env)
    assert again.stdout.splitlines()[0] == summary[0]
    assert taisce(*dump).returncode == 0
    assert exported.read_text(encoding="utf-8") == first


def test_import_reports_each_bad_line_goes_on_and_prints_a_summary(
    server: LocalServer, tmp_path: Path
) -> None:
    """500 lines, the bad ones spread through them (one at line 251): each is one line of
    the summary, every good line is stored, no traceback."""
    bad: dict[int, tuple[bytes, str]] = {
        3: (b'{"role": "user", "content": "\\ud800 alone"}', "not Unicode"),
        40: (b'{"role": "user", "content": "raw \xff byte"}', "not Unicode"),
        77: (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        120: (b'{"role": "user", "content": "x", "occurred_at": NaN}', "NaN is not JSON"),
        121: (b'{"role": "user", "content": Infinity}', "Infinity is not JSON"),
        122: (b'{"role": "user", "content": "x", "n": 1e999}', "too large"),
        251: (b'{"role": "robot", "content": "who am I?"}', "invalid_request: "),
        400: (b'{"role": "user", "content": "' + b'{"a":' * 3000 + b'"}', "not JSON"),
    }
    lines = [
        json.dumps({"role": "user", "content": f"Line {n} about Orla."}).encode()
        for n in range(1, 501)
    ]
    for number, (line, _) in bad.items():
        lines[number - 1] = line
    source = tmp_path / "bad-lines.jsonl"
    source.write_bytes(b"\n".join(lines) + b"\n")
    env = connection(server, server.new_credential("cli-import-bad-lines"))

    done = taisce("import", str(source), env=env)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr + done.stdout
    summary = done.stdout.splitlines()
    assert summary[0].startswith(f"{source}: 492 messages and 0 facts stored, 8 lines refused ")
    assert summary[1] == "8 lines refused:"
    for row, (number, (_, reason)) in zip(summary[2:], sorted(bad.items()), strict=True):
        assert row.startswith(f"  line {number}: ") and reason in row, row
    assert len(summary) == 10


def test_import_stops_on_an_error_not_about_a_line_and_still_prints_a_summary(
    server: LocalServer, tmp_path: Path
) -> None:
    source = tmp_path / "refused.jsonl"
    source.write_text(
        "".join(json.dumps({"role": "user", "content": f"m{n}"}) + "\n" for n in range(150)),
        encoding="utf-8",
    )
    env = connection(server, "tsk_" + "0" * 64)  # a credential the server does not know
    done = taisce("import", str(source), env=env)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr + done.stdout
    summary = done.stdout.splitlines()
    assert summary[0].startswith(f"{source}: 0 messages and 0 facts stored, 0 lines refused ")
    assert summary[1].startswith("stopped before the end: unauthorized: ")
    assert "100 lines read were not confirmed" in summary[1]


def test_export_writes_messages_and_facts_that_import_takes_back(
    server: LocalServer, tmp_path: Path
) -> None:
    secret = server.new_credential("cli-export")
    with Client(server.url, secret) as client:
        at = "2026-01-02T03:04:05Z"
        client.store_messages(
            [
                {"id": "e1", "role": "user", "content": "Zoë lives in 東京.", "source": "chat:1"},
                {"id": "e2", "role": "tool", "content": "A document.", "occurred_at": at},
            ]
        )
        client.store_facts(FACTS)
    done = taisce("export", "--project", "cli-export", "--data", str(server.data_dir))
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "exported 2 messages and 2 facts of project 'cli-export'"
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["kind"], r["id"]) for r in records] == [
        ("message", "e1"), ("message", "e2"), ("fact", "c1"), ("fact", "c2"),
    ]  # fmt: skip
    assert records[0]["content"] == "Zoë lives in 東京." and records[0]["source"] == "chat:1"
    assert records[1]["occurred_at"] == "2026-01-02T03:04:05Z"
    assert records[2]["context"] == "since 2021" and records[2]["statement"]
    assert all(r["recorded_at"] for r in records)

    # Into another project, and out again: the same records.
    copy = tmp_path / "copy.jsonl"
    copy.write_text(done.stdout, encoding="utf-8")
    env = connection(server, server.new_credential("cli-export-copy"))
    restored = taisce("import", str(copy), env=env)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    again = taisce("export", "--project", "cli-export-copy", "--data", str(server.data_dir))
    moved = [json.loads(line) for line in again.stdout.splitlines()]

    def without_times(rows: list[dict[str, str]]) -> list[dict[str, str]]:
        return [{k: v for k, v in r.items() if k != "recorded_at"} for r in rows]

    assert without_times(moved) == without_times(records)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["import", "/nowhere/file.jsonl"], "cannot read /nowhere/file.jsonl"),
        (["export", "--project", "p", "--data", "/nowhere"], "no embedded store at /nowhere"),
    ],
)
def test_import_and_export_errors_are_one_clear_line(args: list[str], says: str) -> None:
    done = taisce(*args, env={"TAISCE_API_KEY": "tsk_x"})
    assert done.returncode != 0
    assert says in assert_one_clear_line(done)


def test_import_sends_100_lines_a_request(server: LocalServer) -> None:
    lines = [json.dumps({"role": "user", "content": f"Line {i}."}) for i in range(230)]
    done: list[int] = []
    with Client(server.url, server.new_credential("cli-import-batches")) as client:
        summary = import_lines(client, lines, done.append)
    assert done == [100, 100, 30]
    assert summary.stored == {"message": 230, "fact": 0} and not summary.refused


def test_import_draws_a_progress_bar_on_a_terminal(server: LocalServer, tmp_path: Path) -> None:
    source = tmp_path / "few.jsonl"
    source.write_text(json.dumps({"role": "user", "content": "Hello."}) + "\n", encoding="utf-8")
    main, terminal = pty.openpty()
    # A new terminal is 0 columns wide, which leaves tqdm no room to draw in.
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    env = {**_environ(), **connection(server, server.new_credential("cli-import-bar"))}
    drawn: list[bytes] = []

    def read_terminal() -> None:
        with contextlib.suppress(OSError):  # the terminal closes with the process
            while chunk := os.read(main, 4096):
                drawn.append(chunk)

    # Read as it is drawn: a terminal's unread output may be lost when it closes.
    reader = threading.Thread(target=read_terminal, daemon=True)
    reader.start()
    with subprocess.Popen(
        [sys.executable, "-m", "taisce.cli", "import", str(source)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=terminal,
        text=True,
    ) as process:
        os.close(terminal)
        out, _ = process.communicate(timeout=120)
    reader.join(timeout=10)
    os.close(main)
    assert process.returncode == 0, out
    assert b"importing" in b"".join(drawn) and b"1/1" in b"".join(drawn)
    assert out.startswith(f"{source}: 1 messages and 0 facts stored")


def test_export_and_import_carry_a_user(server: LocalServer, tmp_path: Path) -> None:
    secret = server.new_credential("cli-users")
    with Client(server.url, secret) as shared_client:
        shared_client.store_facts(FACTS[1:])
    with Client(server.url, secret, user="ana") as ana:
        ana.store_facts(FACTS[:1])
        ana.store_messages([{"id": "m1", "role": "user", "content": "I started at Acme."}])
    mine = taisce(
        "export", "--project", "cli-users", "--user", "ana", "--data", str(server.data_dir)
    )
    assert mine.returncode == 0, mine.stderr
    assert mine.stderr.strip().endswith("for user 'ana'")
    # What ana sees: the shared fact unmarked, her own records marked as hers.
    owners = {r["id"]: r.get("user") for r in map(json.loads, mine.stdout.splitlines())}
    assert owners == {"m1": "ana", "c1": "ana", "c2": None}
    shared = taisce("export", "--project", "cli-users", "--data", str(server.data_dir))
    assert [json.loads(line)["id"] for line in shared.stdout.splitlines()] == ["c2"]
    assert "user" not in shared.stdout

    copy = tmp_path / "ana.jsonl"
    copy.write_text(mine.stdout, encoding="utf-8")
    # Without --user, each record goes back where it was: ana's to ana, the rest shared.
    env = connection(server, server.new_credential("cli-users-moved"))
    moved = taisce("import", str(copy), env=env)
    assert moved.returncode == 0, moved.stdout + moved.stderr
    assert "1 messages and 2 facts stored, 0 lines refused" in moved.stdout
    with Client(server.url, env["TAISCE_API_KEY"]) as back:
        assert [f.id for f in back.facts_about("Atlas", user="ana")] == ["c1"]
        assert back.facts_about("Atlas") == []
        assert [f.id for f in back.facts_about("Acme Corp")] == ["c2"]
        assert back.facts_about("Atlas", user="bo") == []
    # With --user bo, every record is bo's.
    env = connection(server, server.new_credential("cli-users-copy"))
    assert taisce("import", str(copy), "--user", "bo", env=env).returncode == 0
    with Client(server.url, env["TAISCE_API_KEY"]) as copied:
        assert [f.id for f in copied.facts_about("Atlas", user="bo")] == ["c1"]
        assert [f.id for f in copied.facts_about("Acme Corp", user="bo")] == ["c2"]
        assert copied.facts_about("Atlas") == [] and copied.facts_about("Acme Corp") == []
    told = taisce("recall", "Where does Atlas work?", "--user", "bo", "--json", env=env)
    assert [f["id"] for f in json.loads(told.stdout)["facts"]] == ["c1"]


def test_import_refuses_a_user_that_is_not_a_string_or_not_an_id(
    server: LocalServer, tmp_path: Path
) -> None:
    source = tmp_path / "owners.jsonl"
    source.write_text(
        "".join(
            json.dumps(line) + "\n"
            for line in [
                {"id": "o1", "role": "user", "content": "Kept.", "user": "cara"},
                {"id": "o2", "role": "user", "content": "Refused.", "user": 7},
                {"id": "o3", "role": "user", "content": "Refused.", "user": "no spaces allowed"},
                {"id": "o4", "role": "user", "content": "Shared."},
            ]
        ),
        encoding="utf-8",
    )
    env = connection(server, server.new_credential("cli-owners"))
    done = taisce("import", str(source), env=env)
    assert done.returncode == 1
    assert "2 messages and 0 facts stored, 2 lines refused" in done.stdout
    assert "line 2: user must be a string" in done.stdout
    assert "line 3: " in done.stdout
    with Client(server.url, env["TAISCE_API_KEY"]) as client:
        assert [m.id for m in client.messages(user="cara").messages] == ["o4", "o1"]
        assert [m.id for m in client.messages().messages] == ["o4"]


def test_an_export_after_an_erasure_holds_no_masked_text_and_import_refuses_it(
    server: LocalServer, tmp_path: Path
) -> None:
    secret = server.new_credential("cli-export-erased")
    with Client(server.url, secret) as client:
        client.store_messages(
            [
                {"id": "x1", "role": "user", "content": "Quillon Vasquez moved to Cork."},
                {"id": "x2", "role": "user", "content": "The ferry leaves at noon."},
            ]
        )
    with server.client(secret) as http:
        r = http.post("/v1/erasures", json={"subject": "Quillon Vasquez"})
        assert r.status_code in (200, 202), r.text
    done = taisce("export", "--project", "cli-export-erased", "--data", str(server.data_dir))
    assert done.returncode == 0, done.stderr
    assert "\u2588" not in done.stdout
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == ["x2"]

    # A file that holds masked text anyway: that line is refused, by number.
    source = tmp_path / "masked.jsonl"
    lines = [
        {"role": "user", "content": "Fine text."},
        {"role": "user", "content": "\u2588\u2588\u2588\u2588 moved to Cork."},
    ]
    source.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    env = connection(server, server.new_credential("cli-import-masked"))
    refused = taisce("import", str(source), env=env)
    assert refused.returncode == 1
    summary = refused.stdout.splitlines()
    assert summary[0].startswith(f"{source}: 1 messages and 0 facts stored, 1 lines refused ")
    assert summary[2].startswith("  line 2: holds erased text")
