"""Entity names: how they are normalised and found in a question.

Names match after Unicode NFKC normalisation and case folding, with runs of white
space collapsed. A name is found only as whole words, and where found names
overlap the longest wins.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

_SPACE = re.compile(r"\s+")
# A token is a run of word characters or one other non-space character, so that
# "Dublin's" yields "dublin" and names such as "AT&T" or "Acme Corp." still match.
_TOKEN = re.compile(r"\w+|[^\w\s]")

# Names longer than this many tokens are stored and listed but never searched
# for in a question: it bounds the look-ups one recall makes.
MAX_NAME_TOKENS = 12


def _in_word(char: str) -> bool:
    """A word character in Unicode's sense: \\w, or a combining mark, or a joiner."""
    return (
        char.isalnum()
        or char == "_"
        or char in "\u200c\u200d"
        or unicodedata.category(char).startswith("M")
    )


def normalize_name(name: str) -> str:
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    return _SPACE.sub(" ", folded).strip()


@dataclass(frozen=True, slots=True)
class Span:
    key: str
    start: int
    end: int


def candidate_spans(question: str) -> list[Span]:
    """Every run of whole tokens in the question that could be a name."""
    text = normalize_name(question)
    tokens: list[tuple[int, int]] = []
    for m in _TOKEN.finditer(text):
        start, end = m.span()
        # Python's \w leaves out combining marks (and joiners), which are part of the
        # word they sit in ("हिन्दी", "q\u0307"): such a piece joins the token before it.
        if (
            tokens
            and tokens[-1][1] == start
            and _in_word(text[start - 1])
            and _in_word(text[start])
        ):
            tokens[-1] = (tokens[-1][0], end)
        else:
            tokens.append((start, end))
    spans: list[Span] = []
    for i, (start, _) in enumerate(tokens):
        for j in range(i, min(i + MAX_NAME_TOKENS, len(tokens))):
            end = tokens[j][1]
            spans.append(Span(text[start:end], start, end))
    return spans


def pick_matches(spans: Iterable[Span], known: Iterable[str]) -> list[str]:
    """The keys of the names found, longest first where they overlap, in question order."""
    known_keys = set(known)
    found = [s for s in spans if s.key in known_keys]
    found.sort(key=lambda s: (-(s.end - s.start), s.start))
    taken: list[Span] = []
    for span in found:
        if all(span.end <= t.start or span.start >= t.end for t in taken):
            taken.append(span)
    taken.sort(key=lambda s: s.start)
    keys: list[str] = []
    for span in taken:
        if span.key not in keys:
            keys.append(span.key)
    return keys


# -- erasure: where one name occurs in a text -------------------------------------------


def find_name(text: str, key: str) -> list[tuple[int, int]]:
    """The spans of `text` (already normalised) where the name `key` occurs as whole
    tokens, as candidate_spans would find it (with no limit on its length)."""
    spans: list[tuple[int, int]] = []
    if not key:
        return spans
    at = text.find(key)
    while at >= 0:
        end = at + len(key)
        # A token never straddles the edge: the characters on either side of it must
        # not join into one word (cf. the token rule of candidate_spans).
        starts = at == 0 or not (_in_word(text[at - 1]) and _in_word(text[at]))
        ends = end == len(text) or not (_in_word(text[end - 1]) and _in_word(text[end]))
        if starts and ends:
            spans.append((at, end))
        at = text.find(key, at + 1)
    return spans
