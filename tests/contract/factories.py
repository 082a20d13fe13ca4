"""Records for the contract suite, built directly (the store trusts the domain)."""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections.abc import Callable
from typing import Any

from taisce.domain.ingest import split_passages
from taisce.domain.model import Credential, Fact, Message, Passage
from taisce.domain.names import normalize_name

RECORDED_AT = "2024-05-01T12:00:00Z"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def fact(
    subject: str,
    predicate: str,
    obj: str,
    *,
    id: str | None = None,
    kind: str = "entity",
    role: str = "user",
    **fields: Any,
) -> Fact:
    made = Fact(
        id=id or unique("fact"),
        subject=subject,
        subject_key=normalize_name(subject),
        predicate=predicate,
        object=obj,
        object_kind=kind,  # type: ignore[arg-type]
        object_key=normalize_name(obj) if kind == "entity" else None,
        statement=f"{subject} {predicate} {obj}",
        source_role=role,  # type: ignore[arg-type]
        quote=None,
        context=None,
        message_id=None,
        valid_from=None,
        valid_to=None,
        recorded_at=RECORDED_AT,
    )
    return dataclasses.replace(made, **fields)


def message(content: str, *, id: str | None = None, role: str = "user", **fields: Any) -> Message:
    made = Message(
        id=id or unique("msg"),
        role=role,  # type: ignore[arg-type]
        content=content,
        source=None,
        occurred_at=RECORDED_AT,
        recorded_at=RECORDED_AT,
    )
    return dataclasses.replace(made, **fields)


def with_passages(*messages: Message, limit: int = 300) -> tuple[list[Message], list[Passage]]:
    return list(messages), [p for m in messages for p in split_passages(m, limit)]


def placed(passages: list[Passage], position: int) -> list[Passage]:
    """Passages as a store reads them back: with their message's storing position."""
    return [p._replace(position=position) for p in passages]


def credential(project: str, *, created_at: str = RECORDED_AT, label: str | None = None):
    return Credential(id=unique("cred"), project=project, label=label, created_at=created_at)


def in_threads(worker: Callable[[int], None], count: int) -> list[BaseException]:
    """worker(0) .. worker(count - 1), each in its own thread, all at once; what they
    raised (empty when every one finished)."""
    errors: list[BaseException] = []

    def run(n: int) -> None:
        try:
            worker(n)
        except BaseException as error:  # reported to the caller
            errors.append(error)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors
