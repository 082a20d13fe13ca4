"""The HTTP edge shared by every function: resolver, errors, auth context and wiring."""

from .resolver import make_handler, make_resolver, project_of
from .wiring import services

__all__ = ["make_handler", "make_resolver", "project_of", "services"]
