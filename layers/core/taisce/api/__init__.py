"""The HTTP edge shared by every function: resolver, errors, auth context and wiring.

Its names are imported when first used (PEP 562): the worker takes the wiring and
never the HTTP resolver (Powertools' event handler and its OpenAPI models, ~100 ms of
a cold start)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .resolver import make_handler, make_resolver, project_of
    from .scoping import UserQuery, scope_of
    from .wiring import services

_MODULE_OF = {
    "make_handler": "resolver",
    "make_resolver": "resolver",
    "project_of": "resolver",
    "UserQuery": "scoping",
    "scope_of": "scoping",
    "services": "wiring",
}

__all__ = ["UserQuery", "make_handler", "make_resolver", "project_of", "scope_of", "services"]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{module}", __name__), name)
