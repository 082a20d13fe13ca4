"""The HTTP edge shared by every function: resolver, errors, auth context and wiring."""

from .resolver import make_handler, make_resolver, project_of
from .scoping import UserQuery, scope_of
from .wiring import services

__all__ = ["UserQuery", "make_handler", "make_resolver", "project_of", "scope_of", "services"]
