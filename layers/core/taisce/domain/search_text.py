"""The form of a text that the word indexes (BM25) read, stored and asked alike.

Both word indexes split text into words at spaces and punctuation (SQLite FTS5's
unicode61 tokenizer, OpenSearch's standard tokenizer under the english analyzer), which
misses two kinds of text:

- Chinese and Japanese are written without spaces. FTS5 reads a whole run of Han and
  kana as one word, so a question shares no word with a passage unless they hold the
  same run, sentence for sentence; OpenSearch reads each Han character and each
  hiragana as a word of its own. So each Han character and each hiragana is written
  apart, as OpenSearch reads them: both indexes then match on characters, BM25
  weighting them (a character of "歯医者" counts far more than the particle "の").
  A katakana run stays one word, as OpenSearch reads it ("ラーメン").
- Korean writes its particles joined to the word before them ("라멘집은", "부산에서"),
  so the same noun with two particles is two words to both indexes. Each Hangul word
  that ends in particles (domain/affixes.py) adds the word less them at the end of the
  text ("라멘집", "부산").
- Russian, Greek, Arabic, Hindi and Tamil inflect their words ("врачом", "врачу" of
  врач; "किताबें", "किताबों" of किताब), and the indexes stem only English. Each word in
  Cyrillic, Greek, Arabic, Devanagari or Tamil letters adds its stem by Snowball's
  stemmer for the language most written in that script (Russian, Greek, Arabic,
  Hindi, Tamil) at the end of the text ("врач", "γιατρ", "قاهر" of "بالقاهرة").

An added stem is added once, and not when the text holds it as a word already. Any
other text is its own form, unchanged, so what the word ranking does for it is the same
as before. Forming applies to a text as written, once: an index written before the
form is formed again in place, once (adapters/sqlite/vectors.py).
"""

from __future__ import annotations

import functools
import re
import threading

import snowballstemmer

from .affixes import only_particles

# Han (with the iteration mark 々) and hiragana: each character a word.
_APART = re.compile(
    "[\u3005\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]"
)
_SPACES = re.compile(" {2,}")
_HANGUL_WORD = re.compile("[\uac00-\ud7a3]+")
# Words of the scripts whose stems are added, each with Snowball's stemmer for the
# language most written in it.
_STEMMED = (
    (re.compile("[\u0400-\u04ff]+"), "russian"),
    (re.compile("[\u0370-\u03ff\u1f00-\u1fff]+"), "greek"),
    (re.compile("[\u0621-\u065f\u066e-\u06d3]+"), "arabic"),
    (re.compile("[\u0900-\u097f]+"), "hindi"),
    (re.compile("[\u0b80-\u0bff]+"), "tamil"),
)
_NEEDS_FORM = re.compile(
    "[\u0370-\u03ff\u0400-\u04ff\u0621-\u065f\u066e-\u06d3\u0900-\u097f\u0b80-\u0bff"
    "\u1f00-\u1fff\u3005"
    "\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7a3"
    "\U00020000-\U0003134f]"
)
# A Snowball stemmer keeps state while it stems a word: one at a time per language.
_STEMMERS = {language: snowballstemmer.stemmer(language) for _, language in _STEMMED}
_STEMMING = threading.Lock()


def _particles_off(word: str) -> str | None:
    """A Hangul word less the longest chain of particles that ends it, if one does."""
    for cut in range(1, len(word)):
        if only_particles(word[cut:]):
            return word[:cut]
    return None


@functools.lru_cache(maxsize=16_384)
def _stem(language: str, word: str) -> str:
    with _STEMMING:
        return str(_STEMMERS[language].stemWord(word))


def _stems(text: str) -> list[str]:
    """The stems the text's words add: Korean words less their particles, Russian,
    Greek and Arabic words' Snowball stems; each once, none that is a word of the text."""
    found: set[str] = set()
    for word in _HANGUL_WORD.findall(text):
        stem = _particles_off(word)
        if stem is not None:
            found.add(stem)
    lowered = text.lower()
    for pattern, language in _STEMMED:
        for word in pattern.findall(lowered):
            found.add(_stem(language, word))
    words = set(re.findall(r"\w+", lowered))
    return sorted(found - words)


def search_form(text: str) -> str:
    """The text as the word indexes read it, stored and asked (this module's rules)."""
    if not _NEEDS_FORM.search(text):
        return text
    formed = _SPACES.sub(" ", _APART.sub(lambda m: f" {m.group()} ", text))
    stems = _stems(formed)
    return f"{formed} {' '.join(stems)}" if stems else formed
