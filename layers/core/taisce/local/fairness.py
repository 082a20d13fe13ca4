"""Whose share a request counts against on `taisce serve`: its project's.

The handler slots (local/sandboxes.py) let one share hold at most all slots but one
while others wait. Counted per `Authorization` header, two credentials of one project
took every slot; counted per project, a project's credentials (project, user and admin
alike) share one share. The project of a credential is looked up in the store once
(a point read by its hash, off the event loop) and remembered; a credential the store
does not know counts with every other unknown one, so guesses share one share too.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable

from ..credentials import bearer_secret, secret_hash

# Credentials remembered at most (the oldest forgotten first).
MAX_REMEMBERED = 10_000
UNKNOWN = "unknown credentials"
NONE = "no credential"

Lookup = Callable[[str], str | None]


class ProjectShares:
    """The share key of a request from its Authorization header."""

    def __init__(self, lookup: Lookup) -> None:
        self._lookup = lookup  # secret hash -> project, or None
        self._known: OrderedDict[str, str] = OrderedDict()

    async def share_of(self, authorization: str) -> str:
        secret = bearer_secret(authorization) if authorization else None
        if secret is None:
            return NONE if not authorization else UNKNOWN
        hashed = secret_hash(secret)
        project = self._known.get(hashed)
        if project is None:
            found = await asyncio.to_thread(self._lookup, hashed)
            if found is None:
                return UNKNOWN  # not remembered: it may be minted in a moment
            project = found
            self._known[hashed] = project
            while len(self._known) > MAX_REMEMBERED:
                self._known.popitem(last=False)
        else:
            self._known.move_to_end(hashed)
        return f"project {project}"
