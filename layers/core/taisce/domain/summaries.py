"""Report summaries written by a language model (TAISCE_REPORT_SUMMARIES=llm).

The worker builds every report with its statement summary first (domain/reports.py),
then asks the model to rewrite the summary from the report's facts. The model is
trusted with nothing it cannot be checked on:

- It is given the report's statements (each with its role; a report holds one role)
  and nothing else, and `source_messages` become exactly the messages of the facts it
  was given.
- Its answer must be a non-blank summary within the same character limit; a longer
  one is trimmed to its leading whole sentences (never mid-word), and refused if not
  even its first sentence fits. A number it writes that no statement holds is taken as
  made up, and the answer is refused.
- A failure, timeout or refused answer keeps the statement summary (logged and
  counted): the report is stored either way, so the model never loses or blocks one.
- A pass makes at most `SUMMARY_CALLS` model calls, starts none after `SUMMARY_SECONDS` and
  stops calling after `SUMMARY_FAILURES` failures; the reports past that keep their
  statement summaries until their component changes again.

The model is the extraction model (the Extractor port: one call, JSON following a
schema), so both providers' adapters serve here unchanged.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .model import ExtractionPrompt, Fact, Report, Role
from .ports.extractor import ExtractionError, Extractor
from .reports import SUMMARY_CHARACTERS

logger = logging.getLogger(__name__)

# Model calls per rebuild pass: a giant component may hold hundreds of reports.
SUMMARY_CALLS = 25
# Seconds after which a pass starts no more model calls (one already started may run to
# the extractor timeout): the AWS worker has 120 s for a whole pass.
SUMMARY_SECONDS = 30.0
# Failures in one pass after which the model is not called again in that pass.
SUMMARY_FAILURES = 2
# The facts given to the model: at most this many statements and characters of them.
PROMPT_STATEMENTS = 60
PROMPT_CHARACTERS = 12_000
TOOL_NAME = "write_summary"
TOOL_DESCRIPTION = "Record the summary of the report's facts."

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {
            "type": "string",
            "description": "The summary: plain sentences stating only what the facts state.",
        }
    },
    "required": ["summary"],
    "additionalProperties": False,
}

_WHOSE: Mapping[Role, str] = {
    "user": "the user (the person the assistant serves)",
    "assistant": "the AI assistant (its own claims, not the user's)",
    "system": "the system (the operator's instructions)",
    "tool": "a tool or document (what the document claims, not what the user said)",
}

_SYSTEM = """You summarise one report of an AI agent's long-term memory.

The report groups related facts. Every fact is a claim of {whose}; keep it attributed
that way and do not present it as anyone else's. Write a short summary of these facts
only, in plain sentences: no outside knowledge, no guesses, no numbers or dates that
the facts do not give. At most {limit} characters. Return it with the {tool} tool."""

# A sentence ends at one of these marks followed by white space.
_SENTENCE = re.compile(r"(?<=[.!?\u2026\u3002\uff01\uff1f])\s+")
_NUMBER = re.compile(r"\d+")


def summary_facts(facts: Sequence[Fact]) -> list[Fact]:
    """The facts given to the model, in summary order: each statement once, while both
    bounds hold; a repeated statement's fact comes along (its message is a source too)."""
    given: list[Fact] = []
    statements: set[str] = set()
    characters = 0
    for fact in facts:
        if fact.statement in statements:
            given.append(fact)
            continue
        if len(statements) >= PROMPT_STATEMENTS:
            continue
        if characters + len(fact.statement) > PROMPT_CHARACTERS:
            continue
        statements.add(fact.statement)
        characters += len(fact.statement)
        given.append(fact)
    return given


def summary_prompt(report: Report, facts: Sequence[Fact], limit: int) -> ExtractionPrompt:
    """What the model is asked about one report (the same for every provider)."""
    lines: list[str] = []
    for fact in facts:
        line = f"- [{fact.source_role}] {fact.statement}"
        if line not in lines:
            lines.append(line)
    user = f"Report: {report.title}\nRole: {report.role}\n<facts>\n" + "\n".join(lines)
    return ExtractionPrompt(
        system=_SYSTEM.format(whose=_WHOSE[report.role], limit=limit, tool=TOOL_NAME),
        user=user + "\n</facts>",
        schema=OUTPUT_SCHEMA,
        tool_name=TOOL_NAME,
        tool_description=TOOL_DESCRIPTION,
    )


def parse_summary(raw: str | Mapping[str, Any], facts: Sequence[Fact], limit: int) -> str:
    """The model's summary, checked and fitted to the limit. Raises ExtractionError
    saying what was wrong, without quoting the answer (it holds the user's words)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ExtractionError(f"the summary is not valid JSON ({exc.msg})") from None
    if not isinstance(raw, Mapping):
        raise ExtractionError(f"the summary is a JSON {type(raw).__name__}, not an object")
    text = raw.get("summary")
    if not isinstance(text, str):
        raise ExtractionError("the answer has no summary string")
    text = " ".join(text.split())
    if not text:
        raise ExtractionError("the summary is blank")
    # Whole numbers, compared as such: "20" is not in a fact that only says "2021".
    given = {n for f in facts for n in _NUMBER.findall(f.statement)}
    made_up = set(_NUMBER.findall(text)) - given
    if made_up:
        raise ExtractionError(f"the summary has {len(made_up)} numbers no fact states")
    return fit_sentences(text, limit)


def fit_sentences(text: str, limit: int) -> str:
    """`text` if it fits, else its longest run of leading whole sentences that does."""
    if len(text) <= limit:
        return text
    kept = ""
    for sentence in _SENTENCE.split(text):
        joined = f"{kept} {sentence}" if kept else sentence
        if len(joined) > limit:
            break
        kept = joined
    if not kept:
        raise ExtractionError(f"the summary's first sentence is longer than {limit} characters")
    return kept


class SummaryWriter:
    """Has the model rewrite report summaries for one rebuild pass (a `Rewrite` for
    `build_reports`); `counts` says how each report's summary was written."""

    def __init__(
        self,
        model: Extractor,
        *,
        limit: int = SUMMARY_CHARACTERS,
        calls: int = SUMMARY_CALLS,
        seconds: float = SUMMARY_SECONDS,
        failures: int = SUMMARY_FAILURES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.model = model
        self.limit = limit
        self._calls_left = calls
        self._failures_left = failures
        self._clock = clock
        self._deadline = clock() + seconds
        # "llm": written by the model; "fallback": the model failed or its answer was
        # refused; "not_asked": past this pass's calls, time or failures.
        self.counts: Counter[str] = Counter()

    def __call__(self, report: Report, facts: Sequence[Fact]) -> Report:
        if self._calls_left <= 0 or self._failures_left <= 0 or self._clock() > self._deadline:
            self.counts["not_asked"] += 1
            return report
        self._calls_left -= 1
        given = summary_facts(facts)
        try:
            answer = self.model.extract(summary_prompt(report, given, self.limit))
            summary = parse_summary(answer, given, self.limit)
        except ExtractionError as exc:
            error = str(exc)
        except Exception as exc:  # an adapter bug must not fail the rebuild either
            error = f"the model failed: {type(exc).__name__}"
        else:
            self.counts["llm"] += 1
            messages = dict.fromkeys(f.message_id for f in given if f.message_id is not None)
            return dataclasses.replace(report, summary=summary, source_messages=tuple(messages))
        self._failures_left -= 1
        self.counts["fallback"] += 1
        logger.warning("summary of report %s kept its statements: %s", report.id, error)
        return report
