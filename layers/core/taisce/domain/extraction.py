"""Facts extracted from one message by a language model: the prompt, the output schema,
validation of what the model returns, and locating each quote in the stored content.

The model is trusted with nothing it cannot be checked on: whose words they are comes
from the stored message (never from the output), and a quote counts only once it is
found in the message, where its exact text and code-point offsets are taken.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from .ingest import FactIn, make_fact
from .model import ExtractionFailure, ExtractionPrompt, Fact, Message, ObjectKind, Role
from .ports.extractor import ExtractionError

# Attempts per message (model call and validation) before it is recorded as failed.
EXTRACTION_ATTEMPTS = 3
# More facts than this from one message is taken as runaway output and refused.
MAX_FACTS_PER_MESSAGE = 500
TOOL_NAME = "record_facts"
TOOL_DESCRIPTION = "Record the facts stated in the message."

_FACT_FIELDS: dict[str, Any] = {
    "subject": {
        "type": "string",
        "description": "The entity the fact is about, named as in the message.",
    },
    "predicate": {
        "type": "string",
        "description": "A short verb phrase, e.g. 'works at', 'lives in', 'prefers'.",
    },
    "object": {"type": "string", "description": "The other entity, or the value."},
    "object_kind": {
        "type": "string",
        "enum": ["entity", "value"],
        "description": "'entity' for a named person, organisation, place, project or "
        "thing that can have facts of its own; 'value' for anything else (a date, "
        "number, amount, colour, preference, description).",
    },
    "statement": {"type": "string", "description": "The fact as one plain sentence."},
    "quote": {
        "type": "string",
        "description": "The words of the message this fact rests on, copied exactly, "
        "character for character; as short as the fact allows.",
    },
    "context": {
        "type": ["string", "null"],
        "description": "A qualifier such as 'since 2021' or 'until March', else null.",
    },
}

# Written for strict structured output: every property required, no others.
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": _FACT_FIELDS,
                "required": list(_FACT_FIELDS),
                "additionalProperties": False,
            },
        }
    },
    "required": ["facts"],
    "additionalProperties": False,
}

_AUTHORS: Mapping[Role, str] = {
    "user": "the user: the person the assistant serves. These are the user's own words.",
    "assistant": "the AI assistant. These are the assistant's words, not the user's: "
    "what it says is its own claim.",
    "system": "the system (the operator's instructions), not the user.",
    "tool": "a tool or a document (search results, a file, an API answer). This text was "
    "not said by the user or the assistant: it is what the document claims.",
}

_SYSTEM = """You extract facts from one message for an AI agent's long-term memory.

A fact is one statement about an entity: subject, predicate, object. Extract only what
the message itself states; no guesses, no general knowledge, nothing from other messages.
Skip greetings, questions and instructions that state nothing. Resolve pronouns to names
only where the message names them. If the message states no facts, return an empty list.

For each fact give the exact words of the message it rests on as `quote`, copied
character for character (same spelling, case and punctuation), as short as possible.

The author of the message is {author}
Every fact you return is recorded as a claim of that author; do not present it as
anyone else's. Return the facts with the {tool} tool, as its JSON schema describes."""


def extraction_prompt(message: Message) -> ExtractionPrompt:
    """What the model is asked about one message (the same for every provider)."""
    source = f"Source: {message.source}\n" if message.source else ""
    user = (
        f"Author role: {message.role}\n{source}Occurred at: {message.occurred_at}\n"
        f"<message>\n{message.content}\n</message>"
    )
    return ExtractionPrompt(
        system=_SYSTEM.format(author=_AUTHORS[message.role], tool=TOOL_NAME),
        user=user,
        schema=OUTPUT_SCHEMA,
        tool_name=TOOL_NAME,
        tool_description=TOOL_DESCRIPTION,
    )


# -- validation ----------------------------------------------------------------------

_Name = Annotated[str, StringConstraints(min_length=1, max_length=500, pattern=r"\S")]
_Text = Annotated[str, StringConstraints(min_length=1, max_length=4_000, pattern=r"\S")]


class ExtractedFact(BaseModel):
    """One fact as the model returns it. Keys the schema does not ask for (a
    `source_role` the model made up, say) are ignored: they decide nothing."""

    model_config = ConfigDict(extra="ignore", strict=True)

    subject: _Name
    predicate: _Name
    object: _Text
    object_kind: ObjectKind
    statement: _Text | None = None
    quote: _Text
    context: _Text | None = None


class ExtractionOutput(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    facts: Annotated[list[ExtractedFact], Field(max_length=MAX_FACTS_PER_MESSAGE)]


def parse_output(raw: str | Mapping[str, Any]) -> ExtractionOutput:
    """The model's output (JSON text, or a parsed tool input), validated whole.

    Raises ExtractionError saying what was wrong, without quoting the output (it
    holds the user's words, and error records are kept and logged)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ExtractionError(
                f"the output is not valid JSON ({exc.msg} at position {exc.pos})"
            ) from None
    if not isinstance(raw, Mapping):
        raise ExtractionError(f"the output is a JSON {type(raw).__name__}, not an object")
    try:
        return ExtractionOutput.model_validate(dict(raw))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'output'}: {e['msg']}"
            for e in exc.errors()[:3]
        )
        more = f" (and {exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
        raise ExtractionError(f"the output breaks the schema: {problems}{more}") from None


# -- quotes --------------------------------------------------------------------------

_QUOTE_MARKS = " \t\n\"'\u201c\u201d\u2018\u2019\u00ab\u00bb"


def locate_quote(content: str, quote: str) -> tuple[int, int] | None:
    """Code-point offsets of `quote` in `content`: an exact match first, then one that
    allows other runs of white space and other case, then either without quote marks
    the model may have wrapped it in. None if it is not there."""
    for candidate in dict.fromkeys((quote, quote.strip(), quote.strip(_QUOTE_MARKS))):
        if not candidate.strip():
            continue
        at = content.find(candidate)
        if at >= 0:
            return at, at + len(candidate)
    for candidate in dict.fromkeys((quote, quote.strip(_QUOTE_MARKS))):
        words = candidate.split()
        if not words:
            continue
        pattern = r"\s+".join(re.escape(w) for w in words)
        found = re.search(pattern, content, re.IGNORECASE)
        if found:
            return found.span()
    return None


# -- facts ---------------------------------------------------------------------------


def extracted_fact_id(message_id: str, fact: ExtractedFact, start: int, end: int) -> str:
    """The same message and the same fact give the same id, so a retried extraction
    stores it once."""
    parts = (message_id, fact.subject, fact.predicate, fact.object, fact.object_kind)
    digest = hashlib.sha256("\x1f".join((*parts, f"{start}:{end}")).encode("utf-8"))
    return f"xf_{digest.hexdigest()[:40]}"


def extracted_facts(
    message: Message, output: ExtractionOutput, recorded_at: str
) -> tuple[list[Fact], int]:
    """The facts to store from a validated output, and how many were dropped because
    their quote is not in the message. Each fact speaks for the message's role."""
    facts: dict[str, Fact] = {}
    dropped = 0
    for given in output.facts:
        span = locate_quote(message.content, given.quote)
        if span is None:
            dropped += 1
            continue
        start, end = span
        fact_id = extracted_fact_id(message.id, given, start, end)
        if fact_id in facts:
            continue
        try:
            fact_in = FactIn(
                id=fact_id,
                subject=given.subject,
                predicate=given.predicate,
                object=given.object,
                object_kind=given.object_kind,
                statement=given.statement,
                source_role=message.role,
                quote=message.content[start:end],
                context=given.context,
                message_id=message.id,
            )
        except ValidationError:
            dropped += 1  # e.g. a tolerant match longer than a quote may be
            continue
        fact = make_fact(fact_in, recorded_at)
        facts[fact_id] = dataclasses.replace(fact, quote_start=start, quote_end=end)
    return list(facts.values()), dropped


def failures_to_replay(
    failures: Iterable[ExtractionFailure], message_ids: Collection[str] | None
) -> Iterator[ExtractionFailure]:
    """Which recorded failures a replay takes, in the order given: every one, or only
    those of `message_ids` (the rule both stores' replay_extractions follow)."""
    wanted = set(message_ids) if message_ids is not None else None
    return (f for f in failures if wanted is None or f.message_id in wanted)
