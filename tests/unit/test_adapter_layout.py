"""The stores mirror the ports: for each port of domain/ports/ (FactStore in
ports/facts.py, ...), each backend has a part named for the port (SqliteFactStore,
DynamoDbFactStore) in the module of the same name (sqlite/facts.py, dynamodb/facts.py)
that implements every method of the port itself; the store holds that part as the
attribute named for the port (`fact_store`), and no class of either backend is built
of chained mixins."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from taisce.adapters.composed_store import ComposedStore
from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.adapters.sqlite.store import SqliteStore
from taisce.domain.ports.credentials import CredentialStore
from taisce.domain.ports.store import Store

BACKENDS = {"sqlite": "Sqlite", "dynamodb": "DynamoDb"}
# A class, its one base, object: a part over its base (sqlite's SqlitePart, the shared
# table's TableClient), a store over ComposedStore. A mixin chain is longer.
MRO_BOUND = 3


def ports() -> list[type]:
    """Every port a store implements: the capabilities Store combines, and credentials."""
    combined = [
        base
        for base in Store.__mro__
        if base.__module__.startswith("taisce.domain.ports.") and base is not Store
    ]
    return [*combined, CredentialStore]


def port_methods(port: type) -> list[str]:
    return [n for n, v in vars(port).items() if inspect.isfunction(v) and not n.startswith("_")]


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def adapter_module(backend: str, port: type) -> ModuleType:
    """The backend's module named as the port's own (ports/facts.py -> facts.py)."""
    name = port.__module__.rsplit(".", 1)[1]
    return importlib.import_module(f"taisce.adapters.{backend}.{name}")


def backend_classes(backend: str) -> list[type]:
    package = importlib.import_module(f"taisce.adapters.{backend}")
    found: list[type] = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        found += [
            c
            for c in vars(module).values()
            if inspect.isclass(c) and c.__module__ == module.__name__
        ]
    return found


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    # Neither opens a connection to anything but its own file: the DynamoDB client is
    # built on first use, and nothing here uses it.
    sqlite = SqliteStore(tmp_path_factory.mktemp("layout") / "s.sqlite3")
    dynamodb = DynamoDbStore("layout", endpoint_url="http://127.0.0.1:9")
    yield {"sqlite": sqlite, "dynamodb": dynamodb}
    sqlite.close()
    dynamodb.close()


def test_the_ports_are_the_ones_the_layout_names() -> None:
    names = {p.__name__ for p in ports()}
    assert names == {
        "FactStore",
        "NameLookup",
        "AliasStore",
        "MessageStore",
        "ListingStore",
        "WorkMarks",
        "ReportStore",
        "ProjectReads",
        "ErasureStore",
        "CredentialStore",
    }
    assert sum(len(port_methods(p)) for p in ports()) >= 57


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("port", ports(), ids=lambda p: p.__name__)
def test_each_port_method_is_implemented_in_the_module_named_for_its_port(
    backend: str, port: type, stores: dict[str, Any]
) -> None:
    module = adapter_module(backend, port)
    part = getattr(module, f"{BACKENDS[backend]}{port.__name__}", None)
    assert part is not None, f"{module.__name__} has no {BACKENDS[backend]}{port.__name__}"
    for name in port_methods(port):
        # On the part itself, written in that module: not inherited from elsewhere.
        assert name in vars(part), f"{part.__name__} does not implement {port.__name__}.{name}"
        assert getattr(part, name).__module__ == module.__name__
        # The port's parameters, in order (a part may take more, with defaults).
        wanted = list(inspect.signature(getattr(port, name)).parameters)
        given = list(inspect.signature(getattr(part, name)).parameters)
        assert given[: len(wanted)] == wanted, f"{part.__name__}.{name}"
    held = getattr(stores[backend], snake(port.__name__))
    assert type(held) is part


@pytest.mark.parametrize("port", ports(), ids=lambda p: p.__name__)
def test_the_store_delegates_every_port_method_to_its_part(port: type) -> None:
    for name in port_methods(port):
        method = vars(ComposedStore).get(name)
        assert method is not None, f"ComposedStore does not delegate {name}"
        source = inspect.getsource(method)
        assert f"self.{snake(port.__name__)}.{name}(" in source, name
    assert ComposedStore.__annotations__[snake(port.__name__)] == port.__name__


def test_no_class_of_either_backend_chains_mixins() -> None:
    classes = [c for b in BACKENDS for c in backend_classes(b)] + [ComposedStore]
    classes = [c for c in classes if not issubclass(c, BaseException)]
    assert SqliteStore.__mro__[1] is DynamoDbStore.__mro__[1] is ComposedStore
    long = {c.__qualname__: [k.__name__ for k in c.__mro__] for c in classes}
    long = {name: mro for name, mro in long.items() if len(mro) > MRO_BOUND}
    assert long == {}


def test_reindexing_sits_in_the_same_module_in_both_backends() -> None:
    for backend, prefix in BACKENDS.items():
        module = importlib.import_module(f"taisce.adapters.{backend}.reindex")
        assert "mark_everything" in vars(getattr(module, f"{prefix}Reindex"))
