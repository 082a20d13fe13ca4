"""The in-process gateway that the quality run and the scripts in bench/ store and recall
through: a fresh embedded data folder, the local gateway (the Lambda authorizer, then
the Powertools handlers, as `taisce serve` runs them), a credential per project, storing
in batches the API accepts, and the local worker's passes until no work is pending."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ..domain.ports.vectors import embed_questions
from .dataset import Conversation, stored_facts, stored_messages

BATCH = 100
MAX_BODY = 900_000  # bytes of JSON per storing request; the API refuses over 1 MiB
SOURCE_IP = "127.0.0.1"


class HarnessError(RuntimeError):
    """The run cannot go on (a setting Taisce refuses, a missing embedder...)."""


def make_local_embedder(name: str) -> Any:
    """The embedder Taisce itself uses for `TAISCE_EMBEDDINGS=name`."""
    from taisce.adapters.embedders import make_embedder

    return make_embedder(name)


@dataclass
class Client:
    gateway: Any
    headers: dict[str, str]

    def post(self, target: str, payload: dict[str, Any]) -> tuple[int, Any, float]:
        body = json.dumps(payload).encode("utf-8")
        started = time.perf_counter()
        reply = self.gateway.handle("POST", target, self.headers, body, SOURCE_IP)
        elapsed = time.perf_counter() - started
        return reply.status, json.loads(reply.body or b"null"), elapsed


def _batches(items: Sequence[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    size = 0
    for item in items:
        item_size = len(json.dumps(item).encode("utf-8")) + 2
        if batch and (len(batch) >= BATCH or size + item_size > MAX_BODY):
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += item_size
    if batch:
        yield batch


def store_items(client: Client, key: str, items: Sequence[dict[str, Any]]) -> tuple[list[Any], int]:
    """Store items in batches; a refused batch is retried item by item so that one bad
    record does not lose the rest. Returns the ids (None where refused) and refusals."""
    target, expect = {"messages": ("/v1/messages", 202), "facts": ("/v1/facts", 201)}[key]
    ids: list[Any] = []
    refused = 0
    for batch in _batches(items):
        status, body, _ = client.post(target, {key: batch})
        if status == expect:
            ids.extend(entry["id"] for entry in body[key])
            continue
        if status >= 500 or len(batch) == 1:
            if status >= 500:
                raise HarnessError(f"POST {target}: {status} {json.dumps(body)[:300]}")
            ids.append(None)
            refused += 1
            continue
        for item in batch:
            status, body, _ = client.post(target, {key: [item]})
            if status == expect:
                ids.append(body[key][0]["id"])
            else:
                ids.append(None)
                refused += 1
    return ids, refused


@dataclass
class Session:
    """One run's gateway, the credentials it checks, and the worker's drain."""

    gateway: Any
    credentials: Any
    settle: Callable[[], None] | None = None

    def client(self, project: str) -> Client:
        """A client holding a new credential for `project`."""
        from taisce.credentials import new_credential_id, new_secret, secret_hash
        from taisce.domain.model import Credential

        secret = new_secret()
        created = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        self.credentials.add_credential(
            Credential(new_credential_id(), project, "quality bench", created),
            secret_hash(secret),
        )
        return Client(
            self.gateway,
            {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"},
        )


def embed_question(embedder: Any) -> Callable[[str], np.ndarray]:
    def embed(question: str) -> np.ndarray:
        return np.asarray(embed_questions(embedder, [question])[0], dtype=np.float32)

    return embed


def message_payload(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """The items of `POST /v1/messages` for a conversation's stored messages."""
    payload = []
    for m in messages:
        item: dict[str, Any] = {"id": m.client_id, "role": m.role, "content": m.text}
        if m.source:
            item["source"] = m.source
        if m.occurred_at:
            item["occurred_at"] = m.occurred_at
        payload.append(item)
    return payload


_ENV_KEYS = (
    "TAISCE_DATA_DIR",
    "TAISCE_EMBEDDINGS",
    "TAISCE_BUNDLE_CHARACTERS",
    "TAISCE_STORE",
)


@contextmanager
def embedded_run(prefix: str, embeddings: str, budget: int) -> Iterator[Path]:
    """A fresh data folder with the environment that points Taisce's wiring at it (the
    embedded store, this model, a bundle limit that admits `budget`); afterwards the
    environment is restored, the wiring forgotten and the folder removed."""
    from taisce.api.wiring import services

    saved = {k: os.environ.get(k) for k in _ENV_KEYS}
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ["TAISCE_DATA_DIR"] = str(folder)
    os.environ["TAISCE_EMBEDDINGS"] = embeddings
    os.environ["TAISCE_BUNDLE_CHARACTERS"] = str(max(16_000, budget))
    os.environ["TAISCE_STORE"] = "embedded"
    services.cache_clear()
    try:
        yield folder
    finally:
        services.cache_clear()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(folder, ignore_errors=True)


def settler(memory: Any) -> Callable[[], None]:
    """Passes of the local server's background worker until no work is pending."""
    from taisce.local.worker import Worker

    # Settled means everything embedded and extracted.
    worker = Worker.all_in_a_pass(memory)

    def settle() -> None:
        for _ in range(10):
            worker.run_once()
            if not memory.work_pending():
                return

    return settle


def gateway_run() -> tuple[Any, Session]:
    """Inside embedded_run: the wiring, and a Session over the local gateway (every
    handler imported) whose settle() drains the worker's pending work: what the scripts
    in bench/ that store conversations through the API start from."""
    from taisce.api.wiring import services
    from taisce.local.gateway import Gateway
    from taisce.local.routes import find_template, read_api

    built = services()
    gateway = Gateway(read_api(find_template()))
    gateway.warm()
    return built, Session(gateway, built.credentials, settler(built.memory))


def store_conversation(client: Client, conversation: Conversation) -> list[tuple[Any, str]]:
    """Store a conversation's messages (the speaker both ways) and facts through the API
    as run_quality does, without its notes and timings; the messages kept, each with
    the id the server gave it."""
    messages, _ = stored_messages(conversation, "both")
    ids, _ = store_items(client, "messages", message_payload(messages))
    kept = [(m, i) for m, i in zip(messages, ids, strict=True) if i is not None]
    if conversation.facts:
        store_items(client, "facts", stored_facts(conversation.facts, [m for m, _ in kept]))
    return kept
