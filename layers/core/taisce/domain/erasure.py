"""Erasure: everything held about one entity, found and removed (see docs/API.md).

What counts as "about" the entity is decided here, by one rule: a text names the
entity where its normalised name occurs in the normalised text as whole words (as
a question finds names, with no limit on the name's length). Then:

- a fact is erased when any of its texts names it (subject, predicate, object,
  statement, quote, context): its subject or entity object is the entity, or it
  says something about it;
- an entity is erased when its own name names it: its name, role counts, vectors and
  marks go; but another entity whose name holds it ("Atlas Corp" when erasing Atlas)
  is spared unless the request names it (domain/erasure_preview.py): an occurrence
  inside one of a spared name's occurrences does not count;
- a message that names it keeps its id and length, but every passage that names it
  (or overlaps an occurrence) is deleted, and the text of those passages is masked
  in the content, code point for code point, so the other passages' offsets stay
  valid and nothing the deleted passages said stays stored; a source that names it
  is masked the same way;
- reports of the components the erased facts belonged to are dropped at once and
  rebuilt by the worker from the facts that remain.

The store applies a plan in one step (the embedded store in one transaction; DynamoDB
in idempotent steps, so a retry after a crash finishes the job). A tombstone (a hash
of the project and the name, never the name) is written first, so an extraction
racing the erasure cannot bring the entity back; it stays until a client stores facts
about the name on purpose. The audit record holds that hash, counts and the time.
"""

from __future__ import annotations

import bisect
import hashlib
import re
import unicodedata
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from .budget import fact_characters, passage_characters, report_characters
from .erasable import refusal
from .inflections import latin_inflects
from .model import ErasurePlan, Fact, Message, Passage, Redaction
from .names import (
    NOT_A_NAME,
    candidate_keys,
    case_stem,
    continues_cluster,
    find_written,
    fold_piece,
    has_letter_or_digit,
    normalize_name,
    read_lookalikes,
    separator_runs,
)
from .recalled import RecallAnswer
from .scope import User

if TYPE_CHECKING:
    from .ports.projects import ProjectReads

# The mask is a block character: same length in code points, never a word character,
# so masking cannot join or split the words around it.
MASK = "\u2588"
ALT_MASK = "\u2592"
# Passes of find-and-erase: a fact stored by a late writer between a pass's scan and
# its commit is caught by the next one (the tombstone stops writers that check it).
MAX_PASSES = 3


_Name = Annotated[str, StringConstraints(min_length=1, max_length=500)]


class ErasureRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    # A name to erase (within the request's scope), or with `user` alone, everything
    # in that user's scope. Neither is refused by the route (a model-level error would
    # read as a problem with the body as a whole).
    subject: Annotated[str, StringConstraints(min_length=1, max_length=500)] | None = None
    user: User | None = None
    # The preview: what it would take, nothing removed (domain/erasure_preview.py).
    dry_run: bool = False
    # Other entities whose names hold the subject, taken too (the preview lists them).
    also: Annotated[list[_Name], Field(max_length=50)] = []
    # The preview's token: needed for a subject that is no entity and masks much.
    token: Annotated[str, StringConstraints(min_length=1, max_length=2048)] | None = None

    @field_validator("also")
    @classmethod
    def _also_named(cls, value: list[str]) -> list[str]:
        for name in value:
            if not has_letter_or_digit(name):
                raise ValueError(NOT_A_NAME)
        return value

    @field_validator("subject")
    @classmethod
    def _named(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not has_letter_or_digit(value):
            raise ValueError(NOT_A_NAME)
        refused = refusal(value)
        if refused:
            raise ValueError(refused)
        return value


def subject_hash(project: str, key: str) -> str:
    """SHA-256 of the project and the normalised name: the only trace of the name that
    erasure keeps (tombstone, audit). The project salts it, so the same name erased in
    two projects leaves unrelated hashes."""
    return hashlib.sha256(f"{project}\x00{key}".encode()).hexdigest()


def user_tombstone(project: str, user: str) -> str:
    """The hash a user's erasure leaves under the project (tombstone, audit record):
    never the user id itself, and no name's hash (a name holds no NUL)."""
    return subject_hash(project, f"\x00user\x00{user}")


# One step of an erasure applies at most this many facts, or messages' redactions, so
# a step's time is bounded whatever the entity holds: the worker checks its time
# before each step, and a retry resumes from what is still held (the plan is made
# again from the store, so what a step erased is not found twice).
STEP_FACTS = 500
STEP_MESSAGES = 250


class ErasureHeld(Exception):
    """Another holder is working on this erasure; it finishes it (or, if it died, the
    sweep takes it over once its time ends)."""


ERASURE_ID = re.compile(r"era_[0-9a-f]{32}")


# -- finding the name --------------------------------------------------------------


Spared = tuple[str, ...]


def _found(
    normalised: str, key: str, spared: Spared = (), written: str = ""
) -> list[tuple[int, int]]:
    """Where the name occurs in a normalised text, but for the occurrences inside one of
    a spared name ("dana" inside "dana holdings" when Dana Holdings is not erased with
    Dana), as a question finds the longest name."""
    spans = find_written(normalised, key, written)
    cover = [c for s in spared if key in s for c in find_written(normalised, s, written)]
    if not cover or not spans:
        return spans
    return [(a, b) for a, b in spans if not any(c <= a and b <= d for c, d in cover)]


def names_it(text: str | None, key: str, spared: Spared = ()) -> bool:
    """Whether this text names the entity as whole words (not only inside a spared name)."""
    if not text:
        return False
    # For ASCII, normalising only lowers and collapses white space: a cheap test first.
    # A case form keeps the start of the name, and Latin case forms are read only in a
    # text of a language that inflects names (find_case_forms).
    first = key.partition(" ")[0]
    if (
        text.isascii()
        and key.isascii()
        and first not in (lowered := text.lower())
        and (case_stem(first) not in lowered or not latin_inflects(text))
    ):
        return False
    normalised = normalize_name(text)
    # A name of several words may be written with its words run together, and a name
    # in a case form does not hold it whole (find_written).
    return (key in normalised or " " in key or case_stem(key) in normalised) and bool(
        _found(normalised, key, spared, text)
    )


def fact_names_it(fact: Fact, key: str, spared: Spared = ()) -> bool:
    if key in (fact.subject_key, fact.object_key):
        return True
    texts = (fact.subject, fact.predicate, fact.object, fact.statement, fact.quote, fact.context)
    return any(names_it(t, key, spared) for t in texts)


def _clusters(text: str) -> Iterator[tuple[int, int]]:
    """Spans of a base character and the marks and joiners that follow it: NFKC
    composes within such a cluster, never across two."""
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or not (
            unicodedata.combining(text[i])
            or unicodedata.category(text[i]).startswith("M")
            or text[i] in "\u200c\u200d"
            or continues_cluster(text[i])
        ):
            yield start, i
            start = i


def _mapped(text: str) -> tuple[str, list[tuple[int, int]]]:
    """normalize_name(text), and for each of its characters the span of `text` it came
    from (a dropped invisible character belongs to the span of the one before it).
    Equal to normalize_name(text) except for rare compositions across clusters (Hangul
    jamo), which the caller checks for."""
    out: list[str] = []
    origin: list[tuple[int, int]] = []
    for start, end in _clusters(text):
        piece = text[start:end]
        if piece.isspace():
            if out and out[-1] != " ":
                out.append(" ")
                origin.append((start, end))
            elif out:
                origin[-1] = (origin[-1][0], end)
            continue
        folded = fold_piece(piece)  # invisible characters go; a zero width space is a space
        for ch in folded:
            if ch.isspace():  # NFKC can make spaces (e.g. from U+00A0 in a cluster)
                if out and out[-1] != " ":
                    out.append(" ")
                    origin.append((start, end))
                continue
            out.append(ch)
            origin.append((start, end))
    if out and out[-1] == " ":
        out.pop()
        origin.pop()
    # Latin look-alikes in a word with Latin letters read as Latin (names.py); an
    # accent dropped with them belongs to its letter's span.
    read, came = read_lookalikes(out)
    if len(read) != len(out) or read != out:
        spans = [origin[i] for i in came]
        for k in range(len(came)):
            last = came[k + 1] - 1 if k + 1 < len(came) else len(origin) - 1
            spans[k] = (spans[k][0], origin[last][1])
        out, origin = read, spans
    # A separator between two parts of a name counts as one space (names.py): the
    # space stands for the whole run of separators.
    text_out = "".join(out)
    runs = separator_runs(text_out)
    if not runs:
        return text_out, origin
    folded_out: list[str] = []
    folded_origin: list[tuple[int, int]] = []
    at = 0
    for start, end in runs:
        folded_out += out[at:start]
        folded_origin += origin[at:start]
        folded_out.append(" ")
        folded_origin.append((origin[start][0], origin[end - 1][1]))
        at = end
    folded_out += out[at:]
    folded_origin += origin[at:]
    return "".join(folded_out), folded_origin


_WORDS = re.compile(r"\S+")
_NOT_SPACE = re.compile(r"\S")


def _ascii_occurrences(text: str, key: str, spared: Spared) -> list[tuple[int, int]] | None:
    """occurrences() for ASCII text, without a per-character map: there normalising is
    lowering each run of non-space characters and joining the runs with one space."""
    runs = [m.span() for m in _WORDS.finditer(text)]
    starts: list[int] = []
    at = 0
    for a, b in runs:
        starts.append(at)
        at += b - a + 1
    normalised = " ".join(text[a:b].lower() for a, b in runs)
    if normalised != normalize_name(text):
        return None

    def back(i: int) -> int:  # a character of a run (never a joining space) in `text`
        k = bisect.bisect_right(starts, i) - 1
        return runs[k][0] + i - starts[k]

    found = _found(normalised, key, spared, text)
    return [(back(s), back(e - 1) + 1) for s, e in found]


def occurrences(text: str, key: str, spared: Spared = ()) -> list[tuple[int, int]] | None:
    """Spans of the original text where the name occurs as whole words; None when
    they cannot be mapped back (the caller then treats the whole text as naming it)."""
    if text.isascii():
        found = _ascii_occurrences(text, key, spared)
        if found is not None:
            return found
    normalised, origin = _mapped(text)
    if normalised != normalize_name(text):
        return None
    found = _found(normalised, key, spared, text)
    return [(origin[s][0], origin[e - 1][1]) for s, e in found]


def _union(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans merged where they overlap or touch, in order: disjoint, so their
    starts and ends both increase. A name of repeated words ("xy xy xy") occurs at
    every word of a run of them; merged, the run is one span, and masking or testing a
    passage against it costs the same whatever the repeats (not their number times
    the text's length)."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _overlaps(merged: list[tuple[int, int]], ends: list[int], start: int, end: int) -> bool:
    """Whether [start, end) overlaps one of the merged spans (`ends`: their ends)."""
    k = bisect.bisect_right(ends, start)  # the first span ending after `start`
    return k < len(merged) and merged[k][0] < end


def _mask(text: str, spans: Iterable[tuple[int, int]], mark: str) -> str:
    """Every character but white space inside the spans replaced by `mark`."""
    pieces: list[str] = []
    at = 0
    for start, end in _union(spans):
        pieces += [text[at:start], _NOT_SPACE.sub(mark, text[start:end])]
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


def _masked(text: str, key: str, spans: list[tuple[int, int]], mark: str, spared: Spared) -> str:
    masked = _mask(text, spans, mark)
    if names_it(masked, key, spared):  # cannot happen by construction; never keep the name
        masked = _mask(masked, [(0, len(masked))], mark)
    return masked


def redact(
    message: Message, passages: list[Passage], key: str, spared: Spared = ()
) -> Redaction | None:
    """The message without the name, or None if it does not name it."""
    mark = ALT_MASK if MASK in key else MASK
    found = occurrences(message.content, key, spared)
    found = _union([(0, len(message.content))] if found is None else found)
    ends = [e for _, e in found]
    dropped = [
        p
        for p in passages
        if _overlaps(found, ends, p.start, p.end) or names_it(p.quote, key, spared)
    ]
    source = message.source
    if source is not None and names_it(source, key, spared):
        where = occurrences(source, key, spared) or [(0, len(source))]
        source = _masked(source, key, where, mark, spared)
    if not found and not dropped and source == message.source:
        return None
    spans = found + [(p.start, p.end) for p in dropped]
    content = _masked(message.content, key, spans, mark, spared)
    gone = {p.id for p in dropped}
    kept: list[Passage] = []
    for p in passages:
        if p.id in gone:
            continue
        if content[p.start : p.end] != p.quote:  # a masked span reached it: drop it too
            dropped.append(p)
            continue
        kept.append(p._replace(source=source) if source != p.source else p)
    return Redaction(message.id, content, source, tuple(dropped), tuple(kept))


# -- the plan ------------------------------------------------------------------------


def plan_erasure(store: ProjectReads, project: str, key: str, spared: Spared = ()) -> ErasurePlan:
    """Everything held about the entity `key` in the project, as a plan for the store
    (but for what only `spared` names hold)."""
    fact_ids = [f.id for f in store.project_facts(project) if fact_names_it(f, key, spared)]
    entity_keys = [k for k in store.project_entities(project) if names_it(k, key, spared)]
    named = [
        m
        for m in store.project_messages(project)
        if names_it(m.content, key, spared) or names_it(m.source, key, spared)
    ]
    # The passages of every message that names it, read at once.
    passages = store.passages_of_messages(project, [m.id for m in named])
    redactions: list[Redaction] = []
    for message in named:
        found = redact(message, passages[message.id], key, spared)
        if found is not None:
            redactions.append(found)
    return ErasurePlan(
        tombstone=subject_hash(project, key),
        fact_ids=tuple(fact_ids),
        entity_keys=tuple(entity_keys),
        redactions=tuple(redactions),
    )


def plan_steps(plan: ErasurePlan) -> Iterator[ErasurePlan]:
    """The plan in bounded steps: facts, then messages, STEP_* at a time. Every step
    carries the entity keys (deleting them again is a no-op, and a fact step must know
    them so it leaves their name counts alone); only the first counts them."""
    facts = [plan.fact_ids[i : i + STEP_FACTS] for i in range(0, len(plan.fact_ids), STEP_FACTS)]
    messages = [
        plan.redactions[i : i + STEP_MESSAGES]
        for i in range(0, len(plan.redactions), STEP_MESSAGES)
    ]
    steps = [ErasurePlan(plan.tombstone, fact_ids=f, entity_keys=plan.entity_keys) for f in facts]
    steps += [
        ErasurePlan(plan.tombstone, entity_keys=plan.entity_keys, redactions=r) for r in messages
    ]
    yield from steps or [ErasurePlan(plan.tombstone, entity_keys=plan.entity_keys)]


# -- hiding what a pending erasure will remove --------------------------------------


def _names_any(texts: Iterable[str | None], keys: Collection[str], spared: Spared = ()) -> bool:
    return any(names_it(t, k, spared) for t in texts for k in keys)


def hide_pending(answer: RecallAnswer, keys: Collection[str], spared: Spared = ()) -> RecallAnswer:
    """A recall answer without any item that names an entity whose erasure is pending
    (by the erasure's own rule), `characters` counted again: until the worker has
    removed it, nothing about the entity is returned."""
    if not keys:
        return answer
    facts = [
        i
        for i in answer.facts
        if not _names_any(
            (
                i.fact.subject,
                i.fact.predicate,
                i.fact.object,
                i.fact.statement,
                i.fact.quote,
                i.fact.context,
                *i.path,
            ),
            keys,
            spared,
        )
    ]
    reports = [
        i
        for i in answer.reports
        if not _names_any((i.report.title, i.report.summary, *i.report.path), keys, spared)
    ]
    passages = [
        i
        for i in answer.passages
        if not _names_any((i.passage.quote, i.passage.source), keys, spared)
    ]
    characters = (
        sum(fact_characters(i.fact, i.path) for i in facts)
        + sum(report_characters(i.report) for i in reports)
        + sum(passage_characters(i.passage) for i in passages)
    )
    return replace(answer, facts=facts, reports=reports, passages=passages, characters=characters)


@dataclass(frozen=True, slots=True)
class PendingView:
    """What the reads (listings, a subject's facts, a neighbourhood, a message) show
    while erasures are pending: what the erasures will leave, by the plan's own rules
    (plan_erasure, redact), so nothing about the entity is shown between the request
    and the worker's last step, and nothing shown then changes when it finishes."""

    keys: tuple[str, ...] = ()
    # Names the erasures leave (entities whose names hold an erased one, not named
    # in the request's `also`).
    spared: Spared = ()
    # Set when the request's own user is being erased: everything in the user's scope
    # goes, so the read is made again as a request without the user, shown as this
    # view (the shared memory's pending erasures) leaves it.
    shared_only: PendingView | None = None

    def hides_fact(self, fact: Fact) -> bool:
        return any(fact_names_it(fact, k, self.spared) for k in self.keys)

    def hides_entity(self, key: str) -> bool:
        return any(names_it(key, k, self.spared) for k in self.keys)

    def names_message(self, message: Message) -> bool:
        return any(
            names_it(message.content, k, self.spared) or names_it(message.source, k, self.spared)
            for k in self.keys
        )

    def message(self, message: Message, passages: list[Passage]) -> tuple[Message, list[Passage]]:
        """The message and its passages as the erasures will leave them."""
        for key in self.keys:
            found = redact(message, passages, key, self.spared)
            if found is not None:
                message = replace(message, content=found.content, source=found.source)
                passages = list(found.kept)
        return message, passages


# -- tombstones: keeping a late extraction from bringing the entity back ---------------


def fact_keys(fact: Fact) -> set[str]:
    """Every name a fact could be about: its ends, and each run of words in its texts."""
    keys = {fact.subject_key, *([fact.object_key] if fact.object_key else [])}
    for text in (
        fact.subject,
        fact.predicate,
        fact.object,
        fact.statement,
        fact.quote,
        fact.context,
    ):
        if text:
            keys.update(candidate_keys(text, cap=None))
    return keys


def tombstone_keys(key: str) -> list[str]:
    """The keys a name's tombstone covers: the name, and a name of several words also
    with its words run together ("xanthemorrow": written with an invisible joiner
    between the words, which erasure takes with it; see names.find_written)."""
    return [key, key.replace(" ", "")] if " " in key else [key]


def tombstone_hashes(project: str, keys: Iterable[str]) -> dict[str, str]:
    """hash -> key, for looking keys up among tombstones."""
    return {subject_hash(project, k): k for k in keys}
