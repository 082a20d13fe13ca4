"""`taisce recall`, `taisce import` and `taisce export`: what a person at a terminal needs.

recall and import talk to a server over HTTP through the Python client (clients/python,
imported only when they run); export reads the embedded store, since no route lists a
whole project.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any


def _use_data(args: argparse.Namespace) -> None:
    if getattr(args, "data", None):
        os.environ["TAISCE_DATA_DIR"] = str(args.data)


def _client(args: argparse.Namespace) -> Any:
    """A taisce_client.Client for --url/--api-key (else TAISCE_URL / TAISCE_API_KEY)."""
    from taisce_client import Client

    return Client(args.url, args.api_key, user=getattr(args, "user", None))


def _split(values: list[str] | None) -> list[str] | None:
    """Repeated or comma-separated options as one list ("user,tool" or twice)."""
    if not values:
        return None
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def cmd_recall(args: argparse.Namespace) -> int:
    from taisce_client.render import render_recall

    controls = {
        "max_characters": args.max_characters,
        "max_rows": args.max_rows,
        "source_roles": _split(args.roles),
        "hops": args.hops,
        "surfaces": _split(args.surfaces),
        "themes": True if args.themes else None,
        "subjects": _split(args.subjects),
        "as_of": args.as_of,
        "recorded_after": args.recorded_after,
        "recorded_before": args.recorded_before,
    }
    with _client(args) as client:
        bundle = client.recall(args.question, **controls)
    print(
        json.dumps(bundle.wire(), ensure_ascii=False, indent=2)
        if args.json
        else render_recall(bundle)
    )
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from taisce_client.importer import import_lines
    from tqdm import tqdm

    path = Path(args.file)
    # A byte that is not UTF-8 is kept as a lone surrogate: its line is refused, the
    # others are imported.
    try:
        with path.open(encoding="utf-8", errors="surrogateescape") as counting:
            total = sum(1 for _ in counting)
    except OSError as exc:
        print(f"error: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 1
    # The bar is drawn on a terminal only (disable=None), never into a pipe or a log.
    with (
        _client(args) as client,
        path.open(encoding="utf-8", errors="surrogateescape") as lines,
        tqdm(total=total, unit="line", desc="importing", disable=None, file=sys.stderr) as bar,
    ):
        summary = import_lines(client, lines, bar.update, as_user=args.user)
    print("\n".join(summary.lines(str(path))))
    return 1 if summary.refused or summary.stopped else 0


def cmd_export(args: argparse.Namespace) -> int:
    from .local.export import ExportError, export_records
    from .settings import load_settings

    _use_data(args)
    settings = load_settings()
    if settings.store != "embedded":
        print("error: export reads the embedded store (TAISCE_STORE=embedded)", file=sys.stderr)
        return 2
    counts = {"message": 0, "fact": 0}
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout  # noqa: SIM115
    try:
        for record in export_records(settings.sqlite_path, args.project, args.user):
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            counts[record["kind"]] += 1
    except ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        if out is not sys.stdout:
            out.close()
    print(
        f"exported {counts['message']} messages and {counts['fact']} facts "
        f"of project {args.project!r}" + (f" for user {args.user!r}" if args.user else ""),
        file=sys.stderr,
    )
    return 0


def add_client_parsers(sub: Any) -> None:
    def connection(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--url", help="the API (default: $TAISCE_URL or http://127.0.0.1:8080)")
        parser.add_argument("--api-key", help="credential (default: $TAISCE_API_KEY)")

    recall = sub.add_parser("recall", help="ask a server's memory a question and print the bundle")
    recall.add_argument("question")
    recall.add_argument("--max-characters", type=int, help="largest answer, in code points")
    recall.add_argument("--max-rows", type=int, help="at most this many items")
    recall.add_argument("--roles", action="append", help="source roles, e.g. user,tool")
    recall.add_argument("--hops", type=int, help="2 follows links one entity further")
    recall.add_argument("--surfaces", action="append", help="facts,reports,passages")
    recall.add_argument("--themes", action="store_true", help="add the named entities' reports")
    recall.add_argument("--subjects", action="append", help="only facts about these entities")
    recall.add_argument("--as-of", help="RFC 3339: facts valid at this time")
    recall.add_argument("--recorded-after", help="RFC 3339")
    recall.add_argument("--recorded-before", help="RFC 3339")
    recall.add_argument("--json", action="store_true", help="print the API's JSON instead")
    recall.add_argument("--user", help="recall for this end user (shared memory and theirs)")
    connection(recall)
    recall.set_defaults(run=cmd_recall)

    imports = sub.add_parser("import", help="send JSON lines of messages (or an export)")
    imports.add_argument("file")
    imports.add_argument(
        "--user",
        help="store every record as this end user's (default: a record's own `user`, "
        "as an export marks it, else the shared memory)",
    )
    connection(imports)
    imports.set_defaults(run=cmd_import)

    export = sub.add_parser("export", help="write a project's memory as JSON lines")
    export.add_argument("--project", required=True)
    export.add_argument("--data", help="data folder (default: $TAISCE_DATA_DIR or ./taisce-data)")
    export.add_argument("--output", "-o", help="file to write (default: standard output)")
    export.add_argument(
        "--user",
        help="what this end user sees: the shared memory and theirs, their records marked "
        "with `user` (default: the shared memory only)",
    )
    export.set_defaults(run=cmd_export)


def client_errors() -> tuple[type[Exception], ...]:
    """The client's errors (one line each), when the client is installed."""
    try:
        from taisce_client import TaisceError
    except ImportError:
        return ()
    return (TaisceError,)
