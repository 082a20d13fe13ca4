"""The character budget: what counts, and how whole items fill a bundle.

`characters` is the number of Unicode code points in exactly these values —
facts: subject, predicate, object, statement, source_role, quote, context and each
name in path; reports: title, summary and each name in path; passages: role,
source and quote. Python's len() of a str counts code points.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .model import Fact, Passage, Report, Surface
from .recalled import RecalledFact, RecalledPassage, RecalledReport

COUNTED_FIELDS: Mapping[str, tuple[str, ...]] = {
    "facts": ("subject", "predicate", "object", "statement", "source_role", "quote", "context"),
    "reports": ("title", "summary"),
    "passages": ("role", "source", "quote"),
}


def _text_length(values: Iterable[object]) -> int:
    return sum(len(v) for v in values if isinstance(v, str))


def item_characters(kind: str, item: Mapping[str, object]) -> int:
    """Code points one returned item adds to the bundle, counted from its body: the
    rule as the API states it (the functions below count the same from the records)."""
    total = _text_length(item.get(name) for name in COUNTED_FIELDS[kind])
    path = item.get("path")
    if isinstance(path, list):
        total += _text_length(path)
    return total


def fact_characters(fact: Fact, path: Sequence[str] = ()) -> int:
    """item_characters("facts", ...) straight from a Fact: recall's hot path."""
    return (
        len(fact.subject)
        + len(fact.predicate)
        + len(fact.object)
        + len(fact.statement)
        + len(fact.source_role)
        + len(fact.quote or "")
        + len(fact.context or "")
        + sum(len(name) for name in path)
    )


def report_characters(report: Report) -> int:
    """item_characters("reports", ...) straight from a Report."""
    return len(report.title) + len(report.summary) + sum(len(name) for name in report.path)


def passage_characters(passage: Passage) -> int:
    """item_characters("passages", ...) straight from a Passage: recall's hot path."""
    return len(passage.role) + len(passage.source or "") + len(passage.quote)


Recalled = RecalledFact | RecalledReport | RecalledPassage


def _same_text(text: str) -> str:
    """What two texts share when they are the same text: words, whatever the case and
    the white space between them."""
    return " ".join(text.split()).casefold()


def item_texts(item: Recalled) -> tuple[str, ...]:
    """The texts an item shows a reader: a fact's statement and quote, a report's
    summary, a passage's quote."""
    if isinstance(item, RecalledFact):
        quote = item.fact.quote
        return (item.fact.statement,) if quote is None else (item.fact.statement, quote)
    if isinstance(item, RecalledReport):
        return (item.report.summary,)
    return (item.passage.quote,)


@dataclass
class Bundle:
    """Items go in whole and in order; the first that does not fit closes the bundle."""

    max_characters: int
    max_rows: int
    characters: int = 0
    rows: int = 0
    truncated: bool = False
    facts: list[RecalledFact] = field(default_factory=list)
    reports: list[RecalledReport] = field(default_factory=list)
    passages: list[RecalledPassage] = field(default_factory=list)
    # The texts in the bundle (_same_text): an item showing one again is left out.
    texts: set[str] = field(default_factory=set)

    def add(self, kind: Surface, item: Recalled, size: int) -> bool:
        """Add a whole item of `size` code points (fact_characters, report_characters,
        passage_characters), or close the bundle if it does not fit or the row limit is
        reached. True if added, or left out at no cost because its text (a fact's
        statement, a report's summary, a passage's quote) is in the bundle already."""
        if self.truncated:
            return False
        texts = [_same_text(t) for t in item_texts(item)]
        if texts[0] in self.texts:
            return True
        if self.rows >= self.max_rows or self.characters + size > self.max_characters:
            self.truncated = True
            return False
        items: list[Recalled] = getattr(self, kind)
        items.append(item)
        self.texts.update(texts)
        self.characters += size
        self.rows += 1
        return True
