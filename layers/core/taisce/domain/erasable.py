"""Which subjects an erasure may name: not one that would match nearly every text.

Erasure finds a name as whole words in every text the project holds (domain/erasure.py),
so a single letter ("a", "s", the "s" of "'s") or a word such as "the" or "it" would
mask every message. Such a subject is refused before anything changes.

The list is short on purpose: the articles, pronouns, prepositions, conjunctions and
auxiliaries that occur in almost every sentence of English (the API's own language),
Irish (the project's name), French, German and Spanish (the most used languages written
with spaces between words in the places the service is run), less those that are
also common names or abbreviations ("who", "will", "may", "mit", "un", "us", "elle",
"des", "go", "ar", "ag", "na", "al", "del", "don", "su", "sa" left out). A general
stop-word list, made for search, holds words that are names of people, companies and
bands, and is not used here.
"""

from __future__ import annotations

import re

from .names import normalize_name

_WORD = re.compile(r"\w+")
# White space and the punctuation of sentences.
_PLAIN = set(" .,;:!?'\u2019\"()-")

_COMMON = {
    "english": """a an the and or but nor if then than so as of at by for from in into on
        onto to with without about over under between through is am are was were be been
        being do does did done has have had having i me my mine myself you your yours he him
        his she her hers it its itself we our ours they them their theirs this that these
        those there here what which whose whom not no yes all any some each every both
        s t d m ll re ve""",
    "irish": "an agus is i le do de den ó mé tú sé sí muid sibh siad ní",
    "french": """le la les l une du de d et ou est sont en au aux il ils je j tu nous
        vous ce c qui que qu ne n pas se s sur pour dans par""",
    "german": """der die das den dem ein eine einer einen einem eines und oder ist sind
        ich du er sie es wir ihr nicht zu von im in auf für""",
    "spanish": """el la los las una unos unas y o de que en es son se no por con para
        lo sus yo tú él""",
}
COMMON_WORDS = frozenset(word for words in _COMMON.values() for word in words.split())

ONE_LETTER = (
    "must be more than one letter or digit: erasure finds the name as a whole word "
    "in every text, and one letter would match nearly all of them"
)
ONLY_COMMON_WORDS = (
    "must not be only common words such as 'the', 'it' or 's' (of English, Irish, "
    "French, German or Spanish): erasure finds the name as whole words in every text, "
    "and these would match nearly all of them"
)


def refusal(subject: str) -> str | None:
    """Why this subject cannot be erased by name, or None when it can."""
    key = normalize_name(subject)
    if len(re.sub(r"[\s.'\u2019]", "", key)) == 1:
        return ONE_LETTER
    words = _WORD.findall(key)
    # A sign such as "&" or "+" makes a name of common words ("AT&T", "C++").
    plain = set(_WORD.sub("", key)) <= _PLAIN
    if words and plain and all(word in COMMON_WORDS for word in words):
        return ONLY_COMMON_WORDS
    return None
