"""Store: every capability of a store in one protocol, for what needs them all
(Memory, the worker, the API wiring). A function that needs one capability types its
store with that capability's protocol instead."""

from __future__ import annotations

from typing import Protocol

from ..model import StoreCapabilities
from .aliases import AliasStore
from .erasure import ErasureStore
from .facts import FactStore
from .listing import ListingStore
from .messages import MessageStore
from .names import NameLookup
from .projects import ProjectReads
from .reports import ReportStore
from .work import WorkMarks


class Store(
    FactStore,
    NameLookup,
    AliasStore,
    MessageStore,
    ListingStore,
    WorkMarks,
    ReportStore,
    ProjectReads,
    ErasureStore,
    Protocol,
):
    """Where one project's facts, entities, messages and passages live.

    Every method is scoped to one project; nothing crosses projects. Writes of a
    batch are all or nothing, and a record whose id is already stored is kept
    as it was (so a retried request stores once).
    """

    # What it does beyond these methods (set by each adapter's store class).
    capabilities: StoreCapabilities
