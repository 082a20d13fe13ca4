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
ranked by that model's cosines (domain/fact_ranking.py, `rank_facts`).
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


def reads_as_english(question: str, names: Iterable[str] = ()) -> bool:
    """Whether the question, its matched names set aside, reads as English (see the module)."""
    name_words = {w for name in names for w in _tokens(name)}
    asked = [w for w in _tokens(question) if w not in name_words]
    foreign = sum(1 for w in asked if any(_foreign_letter(c) for c in w))
    return 2 * foreign <= len(asked) and any(w in ENGLISH_ONLY for w in asked)
