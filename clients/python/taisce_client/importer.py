"""`taisce import`: JSON lines of messages (and facts, as `taisce export` writes them)
sent in batches of 100, safe to run again.

A line is a message object (`role`, `content`, optional `id`, `source`, `occurred_at`), or
any record with `"kind": "message"` or `"kind": "fact"`; `recorded_at` is dropped (the
server sets it). A record's `user` (as an export writes it on an end user's own records)
stores it as that user's, and a record without one goes to the shared memory, unless
`as_user` names one user for every record. A line without an `id` gets one made from its
content, so a rerun sends the same ids and the API, which keeps an id once, stores nothing twice.

The rule for errors: a bad line (not JSON, not UTF-8 or a lone surrogate, NaN or
Infinity, nested too deeply, holding erased text, or refused by the API) is reported
with its number and
reason and skipped, and the import goes on. An error that is not about one line (the
credential refused, the server unreachable, or failing or throttling after the
client's retries) stops it: the lines not yet confirmed are counted, and a rerun of the
same file finishes the job. Either way the summary is printed.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .client import Client
from .errors import InvalidRequest, PayloadTooLarge, TaisceError

BATCH = 100


@dataclass
class ImportSummary:
    stored: dict[str, int] = field(default_factory=lambda: {"message": 0, "fact": 0})
    # Lines whose id an earlier line of the file already had: not sent again.
    repeated: list[int] = field(default_factory=list)
    refused: list[tuple[int, str]] = field(default_factory=list)
    # Why the import stopped before the end, and how many lines read were not confirmed.
    stopped: str | None = None
    unconfirmed: int = 0

    def lines(self, name: str) -> list[str]:
        """The summary for a person, one fact per line."""
        out = [
            f"{name}: {self.stored['message']} messages and {self.stored['fact']} facts stored, "
            f"{len(self.refused)} lines refused "
            "(an id stored before is kept as it was, so a rerun adds nothing twice)"
        ]
        if self.repeated:
            out.append(
                f"{len(self.repeated)} lines repeat an earlier line's id and were skipped: "
                + ", ".join(map(str, self.repeated))
            )
        if self.refused:
            out.append(f"{len(self.refused)} lines refused:")
            out += [f"  line {number}: {_one_line(reason)}" for number, reason in self.refused]
        if self.stopped:
            out.append(
                f"stopped before the end: {_one_line(self.stopped)}; {self.unconfirmed} lines "
                "read were not confirmed and the rest were not read (run the same file "
                "again to finish: nothing is stored twice)"
            )
        return out


# The marks an erasure leaves in place of an erased name (a run of one of them).
_MASKS = ("\u2588", "\u2592")


def _masked(record: dict[str, Any]) -> bool:
    """Whether any text of the record (at any depth) holds an erasure's mask."""
    text = json.dumps(record, ensure_ascii=False)
    return any(mask in text for mask in _MASKS)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _not_json_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON (write a number or null)")


def _record(line: str) -> tuple[str, dict[str, Any]]:
    """(kind, record) of one line; raises ValueError saying what is wrong with it."""
    try:
        record = json.loads(line, parse_constant=_not_json_constant)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON ({error.msg})") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except ValueError as error:  # NaN or Infinity; an integer of over 4,300 digits
        raise ValueError(_one_line(str(error))) from None
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    try:
        # What will be sent: no lone surrogate (or byte that was not UTF-8), no number
        # too large for a float (1e999 reads as infinity).
        json.dumps(record, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            "holds text that is not Unicode (a byte that is not UTF-8, or a lone "
            "surrogate such as \\ud800)"
        ) from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except ValueError:
        raise ValueError("holds a number too large to send (JSON has no infinity)") from None
    if _masked(record):
        raise ValueError(
            "holds erased text (the mask \u2588 or \u2592 an erasure leaves): remove the "
            "erased parts, or the line, before importing"
        )
    kind = record.pop("kind", "message")
    if kind not in ("message", "fact"):
        raise ValueError(f"unknown kind {kind!r} (message or fact)")
    record.pop("recorded_at", None)
    return kind, record


def _owner(record: dict[str, Any], as_user: str | None) -> str | None:
    """Whose memory the record goes to (None: the shared memory); takes `user` off it,
    since a request, not an item, names the user."""
    user = record.pop("user", None)
    if user is not None and not isinstance(user, str):
        raise ValueError("user must be a string (an end user's id)")
    return as_user if as_user is not None else user


class _Stopped(Exception):
    """An error not about one line: the import stops."""

    def __init__(self, error: TaisceError, unconfirmed: int) -> None:
        super().__init__(str(error))
        self.unconfirmed = unconfirmed


class _Sender:
    def __init__(self, client: Client, summary: ImportSummary, progress: Callable[[int], None]):
        self.client = client
        self.summary = summary
        self.progress = progress
        # A batch per kind and owner: a request acts for one user (None: the shared memory).
        self.pending: dict[tuple[str, str | None], list[tuple[int, dict[str, Any]]]] = {}

    def add(self, kind: str, user: str | None, number: int, record: dict[str, Any]) -> None:
        batch = self.pending.setdefault((kind, user), [])
        batch.append((number, record))
        if len(batch) >= BATCH:
            self.flush((kind, user))

    def _store(self, key: tuple[str, str | None], records: list[dict[str, Any]]) -> None:
        kind, user = key
        if kind == "message":
            self.client.store_messages(records, user=user)
        else:
            self.client.store_facts(records, user=user)

    def flush_all(self) -> None:
        for key in list(self.pending):
            self.flush(key)

    def flush(self, key: tuple[str, str | None]) -> None:
        kind = key[0]
        batch = self.pending.pop(key, [])
        if not batch:
            return
        try:
            self._store(key, [record for _, record in batch])
            self.summary.stored[kind] += len(batch)
        except (InvalidRequest, PayloadTooLarge):
            # A batch is all or nothing: send its lines one by one to find the bad ones.
            for at, (number, record) in enumerate(batch):
                try:
                    self._store(key, [record])
                    self.summary.stored[kind] += 1
                except (InvalidRequest, PayloadTooLarge) as error:
                    self.summary.refused.append((number, str(error)))
                except TaisceError as error:
                    raise self._stopped(error, len(batch) - at) from None
        except TaisceError as error:
            raise self._stopped(error, len(batch)) from None
        self.progress(len(batch))

    def _stopped(self, error: TaisceError, unsent: int) -> _Stopped:
        waiting = sum(len(batch) for batch in self.pending.values())
        return _Stopped(error, unsent + waiting)


def import_lines(
    client: Client,
    lines: Iterable[str],
    progress: Callable[[int], None] = lambda n: None,
    *,
    as_user: str | None = None,
) -> ImportSummary:
    """Send every line, each record to its own `user`'s memory (or the shared memory),
    or every one to `as_user`'s; `progress(n)` is told as each n lines are done."""
    summary = ImportSummary()
    sender = _Sender(client, summary, progress)
    try:
        _read(lines, summary, sender, progress, as_user)
    except _Stopped as stop:
        summary.stopped = str(stop)
        summary.unconfirmed = stop.unconfirmed
    summary.refused.sort()
    return summary


def _read(
    lines: Iterable[str],
    summary: ImportSummary,
    sender: _Sender,
    progress: Callable[[int], None],
    as_user: str | None,
) -> None:
    seen: dict[str, int] = {}
    made: Counter[str] = Counter()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            progress(1)
            continue
        try:
            kind, record = _record(line)
            user = _owner(record, as_user)
        except ValueError as error:
            summary.refused.append((number, str(error)))
            progress(1)
            continue
        if record.get("id") is None:
            digest = hashlib.sha256(f"{kind}\n{line.strip()}".encode()).hexdigest()[:32]
            # The n-th copy of the same line is its own record ("ok" said twice).
            copies = made[digest]
            made[digest] += 1
            record["id"] = f"imp_{digest}" + (f"-{copies}" if copies else "")
        key = f"{kind}:{user or ''}:{record['id']}"
        if key in seen:
            summary.repeated.append(number)
            progress(1)
            continue
        seen[key] = number
        sender.add(kind, user, number, record)
    sender.flush_all()
