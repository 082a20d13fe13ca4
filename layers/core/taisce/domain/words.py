"""Words of a text as recall compares them: NFKC-folded, lower-cased word tokens of two or more
characters, less common English function words, with a light plural/possessive strip
so that "paintings" meets "painting" and "Melanie's" meets "Melanie"."""

from __future__ import annotations

import functools
import re

from .names import fold_piece, fold_separators

_TOKEN = re.compile(r"\w\w+")

# Function words and question words: they say nothing about what is asked.
_STOPWORDS = """a about after again all also am an and any are as at be because been before being
    both but by can could did do does doing done during each else ever few for from get
    got had has have having he her here hers herself him himself his how i if in into is
    it its itself just like me might more most much must my myself no nor not now of off
    on once only or other our ours ourselves out over own same shall she should so some
    such than that the their theirs them themselves then there these they this those
    through to too under until up upon very was we were what when where whether which
    while who whom whose why will with would you your yours yourself yourselves
    ll re ve"""
STOPWORDS = frozenset(_STOPWORDS.split())


def stem(token: str) -> str:
    """A light suffix strip: possessive "'s" is split by the tokenizer, plural "s" here
    (not "ss", "us", "is"), so singular and plural meet."""
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        if token.endswith("ies") and len(token) > 4:
            return token[:-3] + "y"
        if token.endswith(("sses", "xes", "ches", "shes")):
            return token[:-2]
        return token[:-1]
    return token


# Texts whose words are kept for the next recall: a hub's facts are read and compared
# by every question that names it, and folding and splitting them is most of a
# recall's CPU (docs/measured-choices.md). Bounded in count and in length (a
# question of 10,000 code points is not kept): about 5 MB of typical texts, at most
# ~16 MB of ASCII. An erasure empties the cache of the process that runs it
# (forget_words); another process's cache loses an erased text as newer ones push it
# out.
WORDS_CACHED = 16_384
WORDS_CACHED_LENGTH = 500


def words(text: str) -> list[str]:
    """The compared words of `text`, in order, repeats kept."""
    if len(text) > WORDS_CACHED_LENGTH:
        return list(_words.__wrapped__(text))
    return list(_words(text))


def forget_words() -> None:
    """Drop every cached text (an erasure: no erased text stays in this process)."""
    _words.cache_clear()


@functools.lru_cache(maxsize=WORDS_CACHED)
def _words(text: str) -> tuple[str, ...]:
    # Folded as names are (invisible characters dropped, a separator between a name's
    # parts read as a space: domain/names.py), so that "Xanthe_Morrow" or a name with a
    # soft hyphen is the same words as the name it stands for.
    folded = fold_separators(fold_piece(text))
    # stem() leaves a token not ending in "s" as it is: most tokens skip the call.
    return tuple(
        stem(t) if t[-1] == "s" else t for t in _TOKEN.findall(folded) if t not in STOPWORDS
    )
