"""moto's server mode as the tests' DynamoDB: real HTTP, DynamoDB's wire protocol.

One moto server process on a free loopback port serves the whole test session
(started on first use, stopped at the end), with one table made from template.yaml's
own `Table` resource, so the tested table and the deployed one cannot drift. Tests
share the table and stay apart by project, as tenants of the deployed table do. Only
dummy credentials are used, and only against this endpoint.

The process (`python -m tests.moto_server`) serves the same WSGI app as
`python -m moto.server`, with these changes, all about moto rather than DynamoDB:

- Requests are served one at a time. DynamoDB serialises conflicting writes and its
  transactions are serialisable; moto's in-memory backend has no locking, and its
  TransactWriteItems rolls back by restoring a copy of the whole table, which loses
  or breaks the writes of concurrent requests (HTTP 500s in the concurrency test).
- A transaction's rollback copies only the items it touches. moto copies the whole
  table, once per item (a 100-item transaction copied a table of a few thousand
  items 100 times: seconds per call, growing with the table the tests share).
- A Query reads only its partition. moto walks and sorts the whole table for each
  Query, so its time grew with every test's data (and a benchmark's project).
- An item's attribute values go into a response as they are when they are plain JSON,
  rather than walked member by member against botocore's shapes (the same bytes out;
  TAISCE_MOTO_CHECK_SERIALIZER checks it on every value).

moto is the test database, not a speed reference.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import functools
import logging
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.local.routes import load_template

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "template.yaml"
TABLE_RESOURCE = "Table"
TABLE_NAME = "taisce-test"

# Never real credentials, never a real account: these go only to the moto endpoint.
AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


def table_definition(template: Path = TEMPLATE, name: str = TABLE_NAME) -> dict[str, Any]:
    """create_table arguments from the template's Table resource (keys and indexes)."""
    resource = load_template(template)["Resources"][TABLE_RESOURCE]
    assert resource["Type"] == "AWS::DynamoDB::Table"
    props = resource["Properties"]
    definition: dict[str, Any] = {
        "TableName": name,
        "AttributeDefinitions": props["AttributeDefinitions"],
        "KeySchema": props["KeySchema"],
        "BillingMode": props.get("BillingMode", "PAY_PER_REQUEST"),
    }
    for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
        if props.get(kind):
            definition[kind] = [
                {k: index[k] for k in ("IndexName", "KeySchema", "Projection")}
                for index in props[kind]
            ]
    return definition


@dataclass
class MotoDynamoDb:
    """A running moto server with the test table."""

    process: subprocess.Popen[bytes]
    endpoint: str
    table: str
    log: Path
    _clients: list[Any] = field(default_factory=list, repr=False)
    _views: dict[str, MotoDynamoDb] = field(default_factory=dict, repr=False)

    @property
    def env(self) -> dict[str, str]:
        """Environment for a `taisce serve` process that stores into this table."""
        return {
            **AWS_ENV,
            "TAISCE_STORE": "dynamodb",
            "TAISCE_DYNAMODB_TABLE": self.table,
            "TAISCE_DYNAMODB_ENDPOINT": self.endpoint,
            # A user's erasure scans again this long after it was accepted (the longest
            # a write may last): the test servers' writes take well under a second.
            "TAISCE_WRITE_SECONDS": "1",
        }

    def client(self, config: Any | None = None) -> Any:
        """A botocore DynamoDB client for this server, with the dummy credentials; by
        default botocore's timeouts (moto can be slow on a loaded machine) and a pool
        that keeps a wave's connections, or the given `config` (a benchmark passes the
        adapter's own, adapters/dynamodb/client.py, client_config)."""
        import boto3
        from botocore.config import Config

        client = boto3.session.Session(
            aws_access_key_id=AWS_ENV["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=AWS_ENV["AWS_SECRET_ACCESS_KEY"],
            aws_session_token=AWS_ENV["AWS_SESSION_TOKEN"],
            region_name=AWS_ENV["AWS_DEFAULT_REGION"],
        ).client(
            "dynamodb",
            endpoint_url=self.endpoint,
            config=config or Config(max_pool_connections=32),
        )
        self._clients.append(client)
        return client

    def observer_client(self) -> Any:
        """A client for a test's own look at the table (e.g. every item of a project,
        by Scan): its calls are recorded apart from the code's, so they do not count
        as a path that Scans (tests/conftest.py)."""
        import boto3
        from botocore.config import Config

        client = boto3.session.Session(
            aws_access_key_id=AWS_ENV["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=AWS_ENV["AWS_SECRET_ACCESS_KEY"],
            aws_session_token=AWS_ENV["AWS_SESSION_TOKEN"],
            region_name=AWS_ENV["AWS_DEFAULT_REGION"],
        ).client("dynamodb", endpoint_url=self.endpoint, config=Config(user_agent_extra=OBSERVER))
        self._clients.append(client)
        return client

    @functools.cached_property
    def shared_client(self) -> Any:
        """One client for the whole session (botocore clients are thread-safe, and a
        new session loads the service model again: about a second each)."""
        return self.client()

    def store(self) -> DynamoDbStore:
        return DynamoDbStore(self.table, client=self.shared_client)

    def table_named(self, name: str) -> MotoDynamoDb:
        """The same server with another table made from the template (created once).

        For tests whose servers poll for work across projects (the worker thread, the
        sweep): on the shared table they would also work on every other test's marks,
        and moto's Query sorts the whole table. Do not stop the view: stop the server."""
        if name not in self._views:
            client = self.shared_client
            with contextlib.suppress(client.exceptions.ResourceInUseException):
                client.create_table(**table_definition(name=name))
            view = MotoDynamoDb(self.process, self.endpoint, name, self.log, self._clients)
            view.__dict__["shared_client"] = client  # the cached_property, shared
            self._views[name] = view
        return self._views[name]

    def stop(self) -> None:
        for client in self._clients:
            client.close()
        self._clients.clear()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


_READY = "moto serving "


def launch_moto(env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str, Path]:
    """Start the moto server process on a free loopback port (with `env` added to its
    environment): the process, its endpoint and its log. Stop it with terminate()."""
    log = Path(tempfile.mkdtemp(prefix="taisce-moto-")) / "moto.log"
    with log.open("ab") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.moto_server", "--port", "0"],
            cwd=ROOT,
            env={**os.environ, **AWS_ENV, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    assert process.stdout is not None
    line = process.stdout.readline()  # the one line it prints, once it listens
    if not line.startswith(_READY):
        process.kill()
        process.wait()
        raise RuntimeError(f"moto server did not start: {line!r}; see {log}")
    return process, line[len(_READY) :].strip(), log


def start_moto(table: str = TABLE_NAME, env: dict[str, str] | None = None) -> MotoDynamoDb:
    """Start the moto server on a free loopback port (with `env` added to its
    environment) and create the table."""
    process, endpoint, log = launch_moto(env)
    running = MotoDynamoDb(process, endpoint, table, log)  # type: ignore[arg-type]
    running.shared_client.create_table(**table_definition(name=table))
    return running


_shared: MotoDynamoDb | None = None


def shared_moto() -> MotoDynamoDb:
    """The session's one moto server, started on first use and stopped at exit."""
    global _shared
    if _shared is None or _shared.process.poll() is not None:
        _shared = start_moto()
        atexit.register(_shared.stop)
    return _shared


@pytest.fixture(scope="session")
def moto_dynamodb() -> Iterator[MotoDynamoDb]:
    moto = shared_moto()
    yield moto
    moto.stop()


# -- the server process ---------------------------------------------------------------


def _snapshot_only_touched_items() -> None:
    """moto's TransactWriteItems copies the whole table (once per item) to roll back a
    cancelled transaction. Copy only the items the transaction touches instead, and put
    them back if it fails. Skipped if moto's internals are not what this expects."""
    import copy

    from moto.dynamodb import models
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.models.table import Table

    if getattr(models, "copy", None) is not copy or not hasattr(
        models.DynamoDBBackend, "transact_write_items"
    ):
        return

    class _NoTableCopy:
        """`copy` as moto's module sees it: a Table is not copied during a transaction."""

        active = False

        def deepcopy(self, obj: Any, memo: Any = None) -> Any:
            if self.active and isinstance(obj, Table):
                return obj
            return copy.deepcopy(obj, memo)

        def __getattr__(self, name: str) -> Any:
            return getattr(copy, name)

    shim = _NoTableCopy()
    original = models.DynamoDBBackend.transact_write_items

    def transact_write_items(self: Any, transact_items: Any) -> Any:
        saved: list[tuple[Any, Any, Any, Any]] = []
        for entry in transact_items:
            for kind, op in entry.items():
                table = self.tables.get(op.get("TableName"))
                attrs = op.get("Item") if kind == "Put" else op.get("Key")
                if table is None or not isinstance(attrs, dict) or not table.range_key_attr:
                    return original(self, transact_items)  # not our table shape
                h = DynamoType(attrs[table.hash_key_attr])
                r = DynamoType(attrs[table.range_key_attr])
                saved.append((table, h, r, copy.deepcopy(table.items.get(h, {}).get(r))))
        shim.active = True
        try:
            return original(self, transact_items)
        except BaseException:
            for table, h, r, item in reversed(saved):
                if item is None:
                    table.items.get(h, {}).pop(r, None)
                else:
                    table.items[h][r] = item
            raise
        finally:
            shim.active = False

    models.copy = shim  # type: ignore[assignment]
    models.DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]


# The members an item's attribute value may have in moto's JSON, each with what its value
# must be for it to go out as it is (anything else takes moto's serializer).
_PLAIN_MEMBERS = {"S": str, "N": str, "SS": list, "NS": list, "BOOL": bool, "NULL": bool}


def _plain_value(value: Any) -> bool:
    """Whether an attribute value (in moto's JSON) is plain JSON that moto's serializer
    would write out unchanged: one member, strings, booleans, lists of strings, and maps
    and lists of plain values. Binary members are not (the serializer encodes them)."""
    if not isinstance(value, dict) or len(value) != 1:
        return False
    ((member, inner),) = value.items()
    if member == "M":
        return isinstance(inner, dict) and all(_plain_value(v) for v in inner.values())
    if member == "L":
        return isinstance(inner, list) and all(_plain_value(v) for v in inner)
    kind = _PLAIN_MEMBERS.get(member)
    if kind is None or type(inner) is not kind:
        return False
    return kind is not list or all(type(v) is str for v in inner)


# Set (to anything) in the server's environment, every attribute value is serialized both
# ways and a difference fails the request: the check that the shortcut below writes what
# moto's serializer writes.
CHECK_SERIALIZER = "TAISCE_MOTO_CHECK_SERIALIZER"


def _attribute_values_as_they_are() -> None:
    """moto 5 writes each response by walking botocore's output shape member by member:
    for an item's attribute values ({"S": ...}, {"M": {...}}), already in the wire's JSON
    in moto's result, that walk was about 40% of the server's CPU time in the suite (ten
    members looked up for each value, at every depth). A plain attribute value goes out
    as it is instead; any other (binary, or holding moto's objects) takes the walk.
    Skipped if moto's internals are not what this expects."""
    from moto.core.serialize import JSONSerializer

    check = bool(os.environ.get(CHECK_SERIALIZER))
    if not hasattr(JSONSerializer, "_serialize_type_structure") or not hasattr(
        JSONSerializer, "_default_serialize"
    ):
        if check:  # asked to check a shortcut that is not there: say so, do not serve
            raise RuntimeError("moto's serializer is not what the shortcut expects")
        return
    walk = JSONSerializer._serialize_type_structure

    def serialize(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
        if key and getattr(shape, "name", None) == "AttributeValue" and _plain_value(value):
            if check:
                walked: dict[str, Any] = {}
                walk(self, walked, value, shape, key)
                mine: dict[str, Any] = {}
                self._default_serialize(mine, value, shape, key)
                if walked != mine:
                    raise AssertionError(f"serialized differently: {walked!r} != {mine!r}")
            self._default_serialize(serialized, value, shape, key)
            return
        walk(self, serialized, value, shape, key)

    JSONSerializer._serialize_type_structure = serialize  # type: ignore[method-assign]


# Where the server records the DynamoDB operations it serves (one name a line), so the
# test session can check that no request or worker path Scans the table
# (tests/conftest.py). Set by the session; unset, nothing is recorded.
OPERATIONS_LOG = "TAISCE_MOTO_OPERATIONS"
# A test's own inspection of the table (observer_client) is recorded apart.
OBSERVER = "taisce-test-observer"


def _query_reads_one_partition() -> None:
    """moto's Query walks (and sorts) the whole table to find one partition's items, so
    its time grows with every test's data and a benchmark's large project. Hand it the
    partition instead (DynamoDB reads only the partition too); the rest of moto's Query
    (key conditions, filters, paging, order) is unchanged. Skipped if moto's internals
    are not what this expects."""
    from moto.dynamodb.models.table import Table

    if not hasattr(Table, "all_items") or "all_items" in vars(Table.query):
        return
    original = Table.query

    def query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
        if index_name is not None or hash_key is None or not self.range_key_attr:
            return original(self, hash_key, *args, **kwargs)
        partition = list(self.items.get(hash_key, {}).values())
        self.all_items = lambda: sorted(partition, key=lambda item: item.range_key)
        try:
            return original(self, hash_key, *args, **kwargs)
        finally:
            del self.all_items

    Table.query = query  # type: ignore[method-assign]


# Set (to anything) in the server's environment, it serves CLONE_PATH: a benchmark's way to
# fill a table with many users without storing each through HTTP (see clone_partitions).
CLONES = "TAISCE_MOTO_CLONES"
CLONE_PATH = "/_taisce/clone-partition"


def clone_partitions(body: dict[str, Any]) -> int:
    """Copies of every item whose partition key starts with `body["prefix"]` (with
    `body["holding"]`, only those that hold the template somewhere), once for each name in
    `body["names"]`, with `body["template"]` replaced by that name in every key and value,
    put straight into moto's table `body["table"]`; the number of items put.

    For benchmarks only: moto stores about 100 items a second over HTTP, so a project of
    1.5 million items would take hours. The template must be a word that occurs nowhere
    else in its items, in lower case (keys hold names folded)."""
    import json

    from moto.dynamodb.models import dynamodb_backends
    from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict

    (table,) = [
        backend.tables[body["table"]]
        for regions in dynamodb_backends.values()
        for backend in regions.values()
        if body["table"] in backend.tables
    ]
    prefix, template = body["prefix"], body["template"]
    # Each template item as the values its copies share (those without the template:
    # one object for every copy, as nothing writes a copy again) and the JSON of those
    # that differ. Built by hand as moto's own deepcopy of an Item is (its checks ran
    # when the template was put), so that millions of copies fit in memory.
    plans = []
    for key, partition in list(table.items.items()):
        if str(key.value).startswith(prefix):
            for item in partition.values():
                texts = {name: json.dumps(value.to_json()) for name, value in item.attrs.items()}
                varying = {name: text for name, text in texts.items() if template in text}
                if varying or not body.get("holding"):
                    fixed = {name: v for name, v in item.attrs.items() if name not in varying}
                    plans.append((fixed, varying))
    hash_attr = table.hash_key_attr
    for name in body["names"]:
        partitions: dict[Any, Any] = {}
        for fixed, varying in plans:
            attrs = LimitedSizeDict.__new__(LimitedSizeDict)
            dict.__init__(attrs, fixed)
            for attr, text in varying.items():
                value = json.loads(text.replace(template, name))
                if attr == hash_attr:  # one key object for the partition's items
                    dict.__setitem__(
                        attrs, attr, partitions.setdefault(value["S"], DynamoType(value))
                    )
                else:
                    dict.__setitem__(attrs, attr, DynamoType(value))
            copy = Item.__new__(Item)
            copy.hash_key, copy.range_key, copy.attrs = (
                attrs[hash_attr],
                attrs[table.range_key_attr],
                attrs,
            )
            table.items[copy.hash_key][copy.range_key] = copy
    return len(plans) * len(body["names"])


class _OneAtATime:
    """A WSGI app that serves one request at a time (see the module docstring), and
    records each operation's name when OPERATIONS_LOG names a file."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.lock = threading.Lock()
        self.log = os.environ.get(OPERATIONS_LOG)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> list[bytes]:
        with self.lock:
            if environ.get("PATH_INFO") == CLONE_PATH and os.environ.get(CLONES):
                return self._clone(environ, start_response)
            if self.log:
                operation = environ.get("HTTP_X_AMZ_TARGET", "").rpartition(".")[2]
                if OBSERVER in environ.get("HTTP_USER_AGENT", ""):
                    operation = f"{OBSERVER}:{operation}"  # a test looking, not a path
                with open(self.log, "a", encoding="utf-8") as log:
                    log.write(operation + "\n")
            return list(self.app(environ, start_response))

    @staticmethod
    def _clone(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        import json

        length = int(environ.get("CONTENT_LENGTH") or 0)
        put = clone_partitions(json.loads(environ["wsgi.input"].read(length)))
        start_response("200 OK", [("Content-Type", "application/json")])
        return [json.dumps({"put": put}).encode()]


def operations(log: Path) -> dict[str, int]:
    """How many times each operation was served, from an operations log."""
    counts: dict[str, int] = {}
    if log.exists():
        for line in log.read_text(encoding="utf-8").split():
            counts[line] = counts.get(line, 0) + 1
    return counts


def main(argv: list[str] | None = None) -> None:
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    parser = argparse.ArgumentParser(description="moto's DynamoDB for the tests")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    _snapshot_only_touched_items()
    _query_reads_one_partition()
    _attribute_values_as_they_are()
    app = _OneAtATime(DomainDispatcherApplication(create_backend_app))
    server = make_server(
        args.host, args.port, app, threaded=True, request_handler=MotoRequestHandler
    )
    host, port = server.server_address[:2]
    print(f"{_READY}http://{host}:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
