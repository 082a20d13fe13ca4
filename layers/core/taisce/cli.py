"""The `taisce` command: serve locally, manage credentials, load the demo."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import sys
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING

from . import demo
from .client_commands import add_client_parsers, client_errors
from .credentials import mint, now_text, secret_hash
from .domain.errors import TaisceError
from .domain.ingest import ID_PATTERN
from .domain.model import CredentialKind
from .local.connections import PER_CLIENT
from .local.throttle import REFUSED_PER_MINUTE
from .settings import SettingsError

if TYPE_CHECKING:
    from .local.gateway import Gateway
    from .local.sandboxes import Sandboxes


def _use_data(args: argparse.Namespace) -> None:
    if getattr(args, "data", None):
        os.environ["TAISCE_DATA_DIR"] = str(args.data)


def _create_credential(
    project: str, label: str | None, kind: CredentialKind = "project", user: str | None = None
) -> str:
    from .api.wiring import services

    credential, secret = mint(project, kind, user, label)
    services().credentials.add_credential(credential, secret_hash(secret))
    bound = f" for user {user!r}" if user else ""
    print(
        f"{kind} credential {credential.id} for project {project!r}{bound} "
        "(shown once; only a hash is kept)"
    )
    return secret


def _creation_problem(args: argparse.Namespace) -> str | None:
    if not args.project.strip():
        return "--project must not be empty"
    # A user's memory is kept under the project's name, a control character and the
    # user's id (domain/scope.py): a project name holding one could meet another's.
    if any(unicodedata.category(c) == "Cc" for c in args.project):
        return "--project must not hold control characters"
    if args.user is not None and not re.fullmatch(ID_PATTERN, args.user):
        return "--user must be 1-128 of A-Z a-z 0-9 . _ : @ -"
    return None


def _use_store(args: argparse.Namespace) -> None:
    """--store dynamodb --table T: manage the credentials of a deployed stack (AWS
    credentials and region from the usual places). Credentials need no model."""
    if getattr(args, "store", None) == "dynamodb":
        os.environ["TAISCE_STORE"] = "dynamodb"
        os.environ["TAISCE_EMBEDDINGS"] = "none"
        if args.table:
            os.environ["TAISCE_DYNAMODB_TABLE"] = args.table


def cmd_credentials(args: argparse.Namespace) -> int:
    from .api.wiring import services

    _use_data(args)
    _use_store(args)
    store = services().credentials
    if args.action == "create":
        problem = _creation_problem(args)
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
        kind: CredentialKind = "admin" if args.admin else "user" if args.user else "project"
        print(_create_credential(args.project, args.label, kind, args.user))
    elif args.action == "list":
        # Read first, so a store that cannot be read prints its error and nothing else;
        # then tab-separated, one credential a line, under a header naming the columns.
        credentials = store.list_credentials(args.project)
        print("id\tproject\tkind\tuser\tcreated_at\tlast_used_at\tstate\tlabel")
        for c in credentials:
            state = f"revoked {c.revoked_at}" if c.revoked_at else "live"
            print(
                f"{c.id}\t{c.project}\t{c.kind}\t{c.user or ''}\t{c.created_at}\t"
                f"{c.last_used_at or ''}\t{state}\t{c.label or ''}"
            )
    else:
        if not store.revoke_credential(args.id, now_text()):
            print(f"error: no live credential {args.id}", file=sys.stderr)
            return 1
        print(f"revoked {args.id}")
    return 0


async def _load_demo(gateway: Gateway, sandboxes: Sandboxes, secret: str) -> None:
    from .local.gateway import Reply

    headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    for route, body in (
        ("/v1/messages", {"messages": demo.MESSAGES}),
        ("/v1/facts", {"facts": demo.FACTS}),
    ):
        prepared = gateway.prepare("POST", route, headers, json.dumps(body).encode(), "127.0.0.1")
        reply = prepared if isinstance(prepared, Reply) else await sandboxes.invoke("", prepared)
        if reply.status >= 300:
            raise RuntimeError(f"demo load failed at {route}: {reply.body.decode()}")


def _demo_secret(data_dir: Path) -> str:
    from .api.wiring import services
    from .local.demo_credential import demo_credential

    demo_key = demo_credential(services().credentials, data_dir)
    if demo_key.made is None:
        print(f"demo credential: the one kept in {demo_key.path} (owner-only)")
    else:
        print(f"demo credential {demo_key.made} made, kept in {demo_key.path} (owner-only)")
    for credential_id in demo_key.revoked:
        print(f"revoked the earlier demo credential {credential_id}")
    return demo_key.secret


async def _serve(args: argparse.Namespace) -> bool:
    """Serve until stopped; whether this process's handler thread was left in a
    request (the caller then exits without waiting for it)."""
    from .api.wiring import services
    from .local.connections import ConnectionLimits, total_limit
    from .local.fairness import ProjectShares
    from .local.gateway import Gateway
    from .local.routes import find_template, read_api
    from .local.sandboxes import STOP_GRACE_SECONDS, BackgroundWorker, Sandboxes
    from .local.server import App, bind, make_server, quiet_loop_errors
    from .local.throttle import CredentialThrottle

    settings = services().settings  # a bad setting stops the start here; makes the schema
    _release_request_holds()
    template = find_template(args.template).resolve()
    gateway = Gateway(read_api(template))
    gateway.warm()  # this process is the first handler slot (local/sandboxes.py)
    sock = bind(args.host, args.port)
    sandboxes = Sandboxes(template, args.processes, gateway)
    worker: BackgroundWorker | None = None
    try:
        # The worker (once per server, whatever the process count) and the handler
        # processes (each imports every handler: a broken one stops us here) start side
        # by side, as each takes a second or more to import.
        worker = BackgroundWorker()
        starting = await asyncio.gather(sandboxes.start(), worker.started(), return_exceptions=True)
        if failed := [r for r in starting if isinstance(r, BaseException)]:
            raise failed[0]
        throttle = CredentialThrottle.per_minute(args.refused_credentials)
        # Below the descriptor limit: accepting never fails for want of descriptors.
        most = total_limit(args.processes)
        limits = ConnectionLimits(args.client_connections, min(args.connections or most, most))
        quiet_loop_errors(asyncio.get_running_loop())
        shares = ProjectShares(services().credentials.project_for)
        server = make_server(App(gateway, sandboxes, throttle, shares), limits)
        # uvicorn stops gracefully on SIGINT and SIGTERM once serve() has put its own
        # handlers in, then raises the signal again with the handlers it found. Ours
        # ask the server to stop: a signal sent after the line below is printed but
        # before serve() took the signals stops it as soon as it starts (it was lost,
        # and the server ran on), and the processes below stop in order either way.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: setattr(server, "should_exit", True))
        host, port = sock.getsockname()[:2]
        url = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
        print(f"taisce serving {url} (data in {settings.data_dir.resolve()})", flush=True)
        print(f"memory explorer: {url}/ui (paste a credential of the project there)", flush=True)
        if args.demo:
            secret = _demo_secret(settings.data_dir)
            await _load_demo(gateway, sandboxes, secret)
            print("demo memory loaded into project 'demo'. Try:")
            print(
                f"  curl -s {url}/v1/recalls -H 'Authorization: Bearer {secret}' "
                f"-H 'Content-Type: application/json' -d '{json.dumps(demo.FIRST_RECALL)}'"
            )
            print(f"  or open {url}/ui in a browser and paste the credential on the next line.")
            print(secret, flush=True)
        await server.serve(sockets=[sock])
    finally:
        # Within seconds whatever runs (sandboxes.py): the worker and the handler
        # slots stop side by side.
        stopping = [sandboxes.close()]
        if worker is not None:
            stopping.append(asyncio.to_thread(worker.stop, STOP_GRACE_SECONDS))
        left_running = bool((await asyncio.gather(*stopping))[0])
        sock.close()
    return left_running


def _release_request_holds() -> None:
    """Erasures a stopped server's requests left part-way are taken up by this
    server's worker at once (their hold was the stopped request's)."""
    from .adapters.sqlite.store import SqliteStore
    from .api.wiring import services

    store = services().memory.store
    if isinstance(store, SqliteStore):
        try:
            released = store.release_request_holds()
        except TaisceError as exc:  # a full disk: left for a later start
            print(f"pending erasures not taken up: {exc.message}", file=sys.stderr)
            return
        if released:
            print(f"{released} erasure(s) left part-way by a stopped server: resuming")


def _not_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number, 0 or more: {text!r}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def cmd_serve(args: argparse.Namespace) -> int:
    _use_data(args)
    # The HTTP front waits on handler processes' pipes; a short switch interval lets
    # it take the interpreter back at once when a reply arrives.
    sys.setswitchinterval(0.0005)
    with contextlib.suppress(KeyboardInterrupt):
        if asyncio.run(_serve(args)):
            # A request still ran on this process's handler thread (a long erasure):
            # not waited for. Its write rolls back; an erasure's pending record stays,
            # and the next start takes it up.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    """Index what was stored while no model was configured, with the model now set."""
    from .adapters.dynamodb.store import DynamoDbStore
    from .adapters.sqlite.store import SqliteStore
    from .api.wiring import services
    from .local.worker import Worker

    _use_data(args)
    memory = services().memory
    store = memory.store
    if memory.semantic is None or not isinstance(store, SqliteStore | DynamoDbStore):
        print(
            "error: reindex needs TAISCE_EMBEDDINGS set to a model and the embedded or "
            "the DynamoDB store",
            file=sys.stderr,
        )
        return 2
    marked = store.mark_everything(args.project)
    model = services().settings.embeddings
    print(f"marked {marked} passages, facts and names; indexing with {model}")
    worker = Worker.all_in_a_pass(memory)
    for _ in range(100):
        if worker.run_once() and not memory.work_pending():
            print("done")
            return 0
    print("error: work is still pending; see the log for the failure", file=sys.stderr)
    return 1


def cmd_extractions(args: argparse.Namespace) -> int:
    """List failed extractions, or put them back in the queue and run them now."""
    from .api.wiring import services
    from .local.worker import Worker

    _use_data(args)
    memory = services().memory
    if args.action == "list":
        failures = memory.store.failed_extractions(args.project)
        for f in failures:
            print(f"{f.project}\t{f.message_id}\t{f.failed_at}\t{f.attempts}\t{f.error}")
        print(f"{len(failures)} failed extractions", file=sys.stderr)
        return 0
    if memory.extractor is None:
        print("error: replay needs TAISCE_EXTRACTOR set to a model", file=sys.stderr)
        return 2
    replayed = memory.replay_extractions(args.project, args.message or None)
    print(f"replaying {len(replayed)} extractions with {services().settings.extractor}")
    for project in sorted({f.project for f in replayed}):
        memory.extract_pending(project)
    # The reports of what was extracted.
    Worker.all_in_a_pass(memory).run_once()
    keys = {(f.project, f.message_id) for f in replayed}
    still = [
        f
        for f in memory.store.failed_extractions(args.project)
        if (f.project, f.message_id) in keys
    ]
    for f in still:
        print(f"failed again: {f.project}\t{f.message_id}\t{f.error}", file=sys.stderr)
    print(f"done: {len(replayed) - len(still)} extracted, {len(still)} failed again")
    return 1 if still else 0


def cmd_erasures(args: argparse.Namespace) -> int:
    """The audit records of erasures: a hash of the name, counts and time, no name."""
    from .api.wiring import services

    _use_data(args)
    records = services().memory.store.erasures(args.project)
    print("id\tproject\terased_at\tsubject_hash\tfacts\tentities\tmessages\tpassages\treports")
    for r in records:
        counts = "\t".join(str(n) for n in r.counts().values())
        print(f"{r.id}\t{r.project}\t{r.erased_at}\t{r.subject_hash}\t{counts}")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="taisce", description="Memory for AI agents.")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the API locally on the embedded store")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--data", help="data folder (default: $TAISCE_DATA_DIR or ./taisce-data)")
    serve.add_argument("--template", help="SAM template with the routes (default: found)")
    serve.add_argument("--demo", action="store_true", help="load the demo and print a credential")
    serve.add_argument(
        "--processes",
        type=_positive,
        default=4,
        help="handler processes, each running one request at a time like a Lambda "
        "sandbox; the server's own process is the first (default 4)",
    )
    serve.add_argument(
        "--refused-credentials",
        type=_not_negative,
        default=REFUSED_PER_MINUTE,
        help="refused credentials an address may send per minute before it is answered "
        f"429 (all at once, then one every 60/N s; 0: no limit; default {REFUSED_PER_MINUTE})",
    )
    serve.add_argument(
        "--client-connections",
        type=_positive,
        default=PER_CLIENT,
        help="connections one client address may hold open; more are answered 503 "
        f"(default {PER_CLIENT})",
    )
    serve.add_argument(
        "--connections",
        type=_not_negative,
        default=0,
        help="connections held open in all; more are answered 503 (default and most: the "
        "descriptor limit less what the server needs for its files)",
    )
    serve.set_defaults(run=cmd_serve)

    creds = sub.add_parser("credentials", help="create, list and revoke bearer credentials")
    actions = creds.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="print a new credential on the last line")
    create.add_argument("--project", required=True)
    create.add_argument("--label")
    kinds = create.add_mutually_exclusive_group()
    kinds.add_argument(
        "--admin", action="store_true", help="may also mint and revoke credentials (the API's)"
    )
    kinds.add_argument("--user", help="bound to this end user: acts only as this user")
    create.add_argument("--data")
    listing = actions.add_parser("list", help="list credentials (never their secrets)")
    listing.add_argument("--project")
    listing.add_argument("--data")
    revoke = actions.add_parser("revoke", help="revoke a credential by id")
    revoke.add_argument("id")
    revoke.add_argument("--data")
    for action in (create, listing, revoke):
        action.add_argument(
            "--store", choices=["embedded", "dynamodb"], help="default: $TAISCE_STORE or embedded"
        )
        action.add_argument(
            "--table", help="the stack's table (output TableName), with --store dynamodb"
        )
    creds.set_defaults(run=cmd_credentials)

    reindex = sub.add_parser("reindex", help="index what was stored without a model")
    reindex.add_argument("--project", help="only this project (default: all)")
    reindex.add_argument("--data")
    reindex.set_defaults(run=cmd_reindex)

    extractions = sub.add_parser("extractions", help="list or replay failed extractions")
    extraction_actions = extractions.add_subparsers(dest="action", required=True)
    failed = extraction_actions.add_parser("list", help="failed extractions, one a line")
    failed.add_argument("--project")
    failed.add_argument("--data")
    replay = extraction_actions.add_parser("replay", help="extract failed messages again")
    replay.add_argument("--project", help="only this project (default: all)")
    replay.add_argument("--message", action="append", help="only this message id (repeatable)")
    replay.add_argument("--data")
    extractions.set_defaults(run=cmd_extractions)

    add_client_parsers(sub)

    erasures = sub.add_parser("erasures", help="list the audit records of erasures")
    erasure_actions = erasures.add_subparsers(dest="action", required=True)
    erasure_list = erasure_actions.add_parser("list", help="one line per erasure, oldest first")
    erasure_list.add_argument("--project", help="only this project (default: all)")
    erasure_list.add_argument("--data")
    erasures.set_defaults(run=cmd_erasures)

    from .evaluation.cli import add_bench_parser

    add_bench_parser(sub)
    return parser


# The [aws] extra's modules: the local server never imports them (docs/packages.md).
_AWS_MODULES = frozenset({"boto3", "botocore", "opensearchpy", "urllib3"})


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return int(args.run(args))
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in _AWS_MODULES:
            raise
        print(
            f"error: {exc.name} is not installed; the DynamoDB store, Bedrock and OpenSearch "
            "need the AWS libraries: pip install 'taisce-server[aws]'",
            file=sys.stderr,
        )
        return 2
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except TaisceError as exc:  # the store refused (a full disk): one line, no trace
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    except client_errors() as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: {exc.strerror or exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
