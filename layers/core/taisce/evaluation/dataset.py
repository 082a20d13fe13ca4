"""The retrieval-quality dataset format (docs/quality.md, "Dataset format") and how a
conversation is turned into the messages Taisce stores.

The loader is lenient where the format leaves room (ids may be numbers, categories
any JSON scalar, timestamps in a few common shapes) and strict where a guess would
change the results (an unknown role, a question without text): those stop the run
with a message naming the place in the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from taisce.domain.ingest import FactIn

ROLES = ("user", "assistant", "system", "tool")
UNCATEGORISED = "uncategorised"

# What the API accepts (see docs/API.md): client ids, content and source lengths.
_CLIENT_ID = re.compile(r"[A-Za-z0-9._:@-]{1,128}")
MAX_CONTENT = 100_000
MAX_SOURCE = 500

# How a message's speaker is stored (FORMAT.md leaves it to the harness):
#   prefix: the content starts "Speaker: ", so every retriever, lexical or dense,
#           reads who spoke;
#   source: the source becomes "<source>/<Speaker>" (or the speaker alone), so every
#           passage of the message carries it;
#   both:   the two together (the default).
SpeakerMode = Literal["both", "prefix", "source"]
SPEAKER_MODES: tuple[SpeakerMode, ...] = ("both", "prefix", "source")


class DatasetError(ValueError):
    """The file is not in the dataset format; the message says where."""


@dataclass(frozen=True, slots=True)
class Message:
    id: str
    order: int
    role: str
    content: str
    speaker: str | None = None
    source: str | None = None
    occurred_at: str | None = None


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    question: str
    evidence: tuple[str, ...]
    category: str
    answer: Any = None


@dataclass
class Conversation:
    id: str
    messages: list[Message]
    questions: list[Question]
    facts: list[dict[str, Any]] | None = None


@dataclass
class Dataset:
    name: str
    conversations: list[Conversation]
    path: str | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One message as Taisce stores it, and as the baselines see it."""

    dataset_id: str
    client_id: str
    order: int
    role: str
    text: str
    source: str | None
    occurred_at: str | None  # RFC 3339 sent to the API, or None (the server's clock)
    when: datetime | None  # for the recency baseline (carried forward when missing)

    @property
    def characters(self) -> int:
        """Counted as Taisce counts a passage: role + source + quote code points."""
        return len(self.role) + len(self.source or "") + len(self.text)


# -- loading ------------------------------------------------------------------------


def _text_id(value: Any, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise DatasetError(f"{where}: id must be a string or an integer, got {value!r}")
    text = str(value)
    if not text:
        raise DatasetError(f"{where}: id must not be empty")
    return text


def _optional_text(value: Any, where: str, name: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise DatasetError(f"{where}: {name} must be a string")
    text = str(value)
    return text if text.strip() else None


def _category(value: Any) -> str:
    if value is None or (isinstance(value, str) and not value.strip()):
        return UNCATEGORISED
    return str(value)


def _message(raw: Any, order: int, where: str) -> Message:
    if not isinstance(raw, Mapping):
        raise DatasetError(f"{where}: a message must be an object")
    role = raw.get("role")
    if role not in ROLES:
        raise DatasetError(f"{where}: role must be one of {', '.join(ROLES)}, got {role!r}")
    content = raw.get("content")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise DatasetError(f"{where}: content must be a string")
    return Message(
        id=_text_id(raw.get("id"), where),
        order=order,
        role=role,
        content=content,
        speaker=_optional_text(raw.get("speaker"), where, "speaker"),
        source=_optional_text(raw.get("source"), where, "source"),
        occurred_at=_optional_text(raw.get("occurred_at"), where, "occurred_at"),
    )


def _question(raw: Any, where: str) -> Question:
    if not isinstance(raw, Mapping):
        raise DatasetError(f"{where}: a question must be an object")
    text = raw.get("question")
    if not isinstance(text, str) or not text.strip():
        raise DatasetError(f"{where}: question must be a non-empty string")
    evidence = raw.get("evidence") or []
    if not isinstance(evidence, list):
        raise DatasetError(f"{where}: evidence must be a list of message ids")
    ids = tuple(dict.fromkeys(_text_id(e, f"{where} evidence") for e in evidence))
    return Question(
        id=_text_id(raw.get("id"), where),
        question=text,
        evidence=ids,
        category=_category(raw.get("category")),
        answer=raw.get("answer"),
    )


def parse_dataset(data: Any, path: str | None = None) -> Dataset:
    if not isinstance(data, Mapping) or not isinstance(data.get("conversations"), list):
        raise DatasetError("the file must be an object with a list of conversations")
    warnings: list[str] = []
    conversations: list[Conversation] = []
    seen_conversations: set[str] = set()
    for c, raw in enumerate(data["conversations"]):
        where = f"conversations[{c}]"
        if not isinstance(raw, Mapping):
            raise DatasetError(f"{where}: a conversation must be an object")
        cid = _text_id(raw.get("id", c + 1), where)
        if cid in seen_conversations:
            raise DatasetError(f"{where}: conversation id {cid!r} is repeated")
        seen_conversations.add(cid)
        raw_messages = raw.get("messages") or []
        raw_questions = raw.get("questions") or []
        if not isinstance(raw_messages, list) or not isinstance(raw_questions, list):
            raise DatasetError(f"{where}: messages and questions must be lists")
        messages = [_message(m, i, f"{where}.messages[{i}]") for i, m in enumerate(raw_messages)]
        ids = [m.id for m in messages]
        if len(set(ids)) != len(ids):
            repeated = sorted({i for i in ids if ids.count(i) > 1})[:5]
            raise DatasetError(f"{where}: message ids repeat: {', '.join(repeated)}")
        questions = [_question(q, f"{where}.questions[{i}]") for i, q in enumerate(raw_questions)]
        known = set(ids)
        missing = sorted({e for q in questions for e in q.evidence if e not in known})
        if missing:
            warnings.append(
                f"conversation {cid}: {len(missing)} evidence id(s) name no message "
                f"(e.g. {', '.join(missing[:3])}); no method can cover them"
            )
        facts = raw.get("facts")
        if facts is not None and (
            not isinstance(facts, list) or not all(isinstance(f, Mapping) for f in facts)
        ):
            raise DatasetError(f"{where}: facts must be a list of objects")
        conversations.append(
            Conversation(
                id=cid,
                messages=messages,
                questions=questions,
                facts=[dict(f) for f in facts] if facts else None,
            )
        )
    name = data.get("name")
    return Dataset(
        name=str(name) if name else Path(path or "dataset").stem,
        conversations=conversations,
        path=path,
        warnings=warnings,
    )


def load_dataset(path: str | Path) -> Dataset:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not JSON ({exc})") from None
    return parse_dataset(data, str(path))


# -- timestamps ---------------------------------------------------------------------

_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})")
# Shapes seen in public conversation datasets, tried after ISO 8601.
_FORMATS = (
    "%I:%M %p on %d %B, %Y",  # "1:56 pm on 8 May, 2023"
    "%I:%M %p on %d %b, %Y",
    "%Y/%m/%d (%a) %H:%M",  # "2023/05/20 (Sat) 02:21"
    "%Y/%m/%d %H:%M",
    "%Y-%m-%d %H:%M",
    "%d %B %Y",
    "%B %d, %Y",
)


def parse_when(value: str | None) -> datetime | None:
    """A moment from a timestamp in one of the common shapes (UTC when it has no
    offset), or None when it cannot be read."""
    if not value:
        return None
    text = value.strip()
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        moment = None
        for shape in _FORMATS:
            try:
                moment = datetime.strptime(text, shape)
                break
            except ValueError:
                continue
        if moment is None:
            return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except (OverflowError, ValueError):
        return None


def _api_timestamp(value: str | None, moment: datetime | None) -> str | None:
    """What to send as occurred_at: the value itself when the API takes it as it is,
    else the moment read from it in RFC 3339, else nothing."""
    if value and _RFC3339.fullmatch(value.strip()):
        return value.strip()
    if moment is None:
        return None
    return moment.isoformat().replace("+00:00", "Z")


# -- what is stored -----------------------------------------------------------------


def stored_text(message: Message, speaker_mode: SpeakerMode) -> str:
    content = message.content
    speaker = message.speaker
    if speaker and speaker_mode in ("both", "prefix") and not content.startswith(f"{speaker}:"):
        content = f"{speaker}: {content}"
    return content


def stored_source(message: Message, speaker_mode: SpeakerMode) -> str | None:
    source, speaker = message.source, message.speaker
    if speaker and speaker_mode in ("both", "source"):
        source = f"{source}/{speaker}" if source else speaker
    if source and len(source) > MAX_SOURCE:
        source = source[:MAX_SOURCE]
    return source


def stored_messages(
    conversation: Conversation, speaker_mode: SpeakerMode
) -> tuple[list[StoredMessage], list[str]]:
    """The messages to store, in order, and notes on what had to change.

    Blank messages are skipped (the API refuses them); content over the API's limit is
    cut; an id the API would refuse is replaced by a safe one (the dataset id is kept
    for scoring). A message without a readable time takes its predecessor's for the
    recency baseline, so the file's order decides among them.
    """
    notes: list[str] = []
    stored: list[StoredMessage] = []
    taken: set[str] = set()
    previous: datetime | None = None
    blank = cut = renamed = 0
    for message in conversation.messages:
        if not message.content.strip():
            blank += 1
            continue
        text = stored_text(message, speaker_mode)
        if len(text) > MAX_CONTENT:
            text = text[:MAX_CONTENT]
            cut += 1
        client_id = message.id
        if not _CLIENT_ID.fullmatch(client_id) or client_id in taken:
            client_id = f"m{message.order}"
            while client_id in taken:
                client_id += "_"
            renamed += 1
        taken.add(client_id)
        moment = parse_when(message.occurred_at)
        when = moment or previous
        previous = when
        stored.append(
            StoredMessage(
                dataset_id=message.id,
                client_id=client_id,
                order=message.order,
                role=message.role,
                text=text,
                source=stored_source(message, speaker_mode),
                occurred_at=_api_timestamp(message.occurred_at, moment),
                when=when,
            )
        )
    if blank:
        notes.append(f"{blank} blank message(s) skipped")
    if cut:
        notes.append(f"{cut} message(s) cut to {MAX_CONTENT:,} code points")
    if renamed:
        notes.append(f"{renamed} message id(s) the API would refuse stored under a safe id")
    return stored, notes


# The fields POST /v1/facts takes, read from its model so the two cannot drift.
_FACT_FIELDS = tuple(FactIn.model_fields)


def stored_facts(
    facts: Sequence[Mapping[str, Any]],
    messages: Sequence[StoredMessage],
    notes: list[str] | None = None,
) -> list[dict[str, Any]]:
    """The facts to send: the API's fields only, message ids mapped to the stored ids,
    and a missing source_role taken from the message the fact cites (else "user").
    A message_id naming no stored message is left out (and counted in `notes`)."""
    by_id = {m.dataset_id: m for m in messages}
    out: list[dict[str, Any]] = []
    uncited = 0
    for raw in facts:
        fact = {k: raw[k] for k in _FACT_FIELDS if raw.get(k) is not None}
        if "id" in fact and not _CLIENT_ID.fullmatch(str(fact["id"])):
            del fact["id"]  # the server makes one
        if "message_id" in fact:
            cited = by_id.get(str(fact["message_id"]))
            if cited is None:
                del fact["message_id"]
                uncited += 1
            else:
                fact["message_id"] = cited.client_id
                fact.setdefault("source_role", cited.role)
        fact.setdefault("source_role", "user")
        for key in ("subject", "predicate", "object", "statement", "quote", "context"):
            if key in fact and not isinstance(fact[key], str):
                fact[key] = str(fact[key])
        for key in ("valid_from", "valid_to"):
            if key in fact:
                moment = parse_when(str(fact[key]))
                if moment is None:
                    del fact[key]
                else:
                    fact[key] = _api_timestamp(str(fact[key]), moment)
        out.append(fact)
    if uncited and notes is not None:
        notes.append(f"{uncited} fact(s) cite no stored message: stored without message_id")
    return out
