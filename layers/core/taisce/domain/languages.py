"""Whether a question reads as English, which is the language the default model (and
the words' stop list) was made for.

A question is read as English when, beside the names it matched, it holds at least one
English function or question word that is not also a common word of French, German,
Spanish, Italian, Portuguese or Dutch ("what", "does", "the", "where": not "was",
"in", "a", "me"), and at most half its words are in a script other than Latin (a name
in another script the store does not know is one such word). "Que commande
Jean-Luc Picard ?", "Was kommandiert Jean-Luc Picard?", "¿Dónde vive Siobhán Ní
Bhriain?" and "田中さんはどこに住んでいますか" are not; "Where was Picard born?" is.
Recall uses it for one thing: a question an English-only model cannot read is not
ranked by that model's cosines (domain/fact_ranking.py, `rank_facts`). Where the model's
cosines alone would let a report in, a narrower test stands (domain/report_step.py): a
question mostly in another script than Latin is one an English model reads as pieces it
does not know, while a terse English question without function words ("weekend
plans?") still reads.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from .names import fold_piece
from .words import STOPWORDS

# English stop words that are also everyday words of French, German, Spanish, Italian,
# Portuguese or Dutch: they say nothing about the language.
_SHARED = frozenset(
    [
        "a",
        "am",
        "an",
        "as",
        "come",
        "die",
        "do",
        "hat",
        "her",
        "i",
        "in",
        "is",
        "ll",
        "me",
        "no",
        "on",
        "or",
        "over",
        "re",
        "so",
        "ve",
        "was",
        "will",
    ]
)
ENGLISH_ONLY = STOPWORDS - _SHARED
_WORD = re.compile(r"\w+")


def _foreign_letter(char: str) -> bool:
    """A letter of a script other than Latin (Greek, Cyrillic, Arabic, Han, Kana, Thai...)."""
    if not char.isalpha() or char.isascii():
        return False
    return not unicodedata.name(char, "").startswith("LATIN")


def _tokens(text: str) -> list[str]:
    """Every word of the text, case folded (stop words kept: they are the signal)."""
    return _WORD.findall(fold_piece(text))


def _asked(question: str, names: Iterable[str]) -> list[str]:
    name_words = {w for name in names for w in _tokens(name)}
    return [w for w in _tokens(question) if w not in name_words]


def _mostly_other_script(asked: list[str]) -> bool:
    foreign = sum(1 for w in asked if any(_foreign_letter(c) for c in w))
    return 2 * foreign > len(asked)


def reads_as_english(question: str, names: Iterable[str] = ()) -> bool:
    """Whether the question, its matched names set aside, reads as English (see the module)."""
    asked = _asked(question, names)
    return not _mostly_other_script(asked) and any(w in ENGLISH_ONLY for w in asked)


def written_in_other_script(question: str) -> bool:
    """Whether more than half the question's words are in a script other than Latin:
    an English model reads such text as pieces it does not know, and puts it near any
    other such text ("박지훈은 어디에 살아요?" near a report "삼성전자, 김민수 and 수원")."""
    return _mostly_other_script(_asked(question, ()))
