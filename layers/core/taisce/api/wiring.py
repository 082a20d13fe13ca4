"""The one place that picks adapters from settings. Built lazily on the first
request (cold start), never at import, and reused while the process lives."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..adapters.sqlite_store import SqliteStore
from ..domain.memory import Memory
from ..ports import CredentialStore
from ..settings import Settings, load_settings


@dataclass(frozen=True)
class Services:
    settings: Settings
    memory: Memory
    credentials: CredentialStore


def build_services(settings: Settings) -> Services:
    store = SqliteStore(settings.sqlite_path)
    memory = Memory(store, settings.limits, embeddings=settings.embeddings != "none")
    return Services(settings=settings, memory=memory, credentials=store)


@functools.cache
def services() -> Services:
    return build_services(load_settings())
