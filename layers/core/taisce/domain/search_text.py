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
  text ("라멘집", "부산"), once, unless the text holds it already.

Any other text is its own form, unchanged, so what the word ranking does for it is the
same as before. The form is idempotent (forming a formed text changes nothing), so an
index written in an older form can be formed again in place.
"""

from __future__ import annotations

import re

from .affixes import only_particles

# Han (with the iteration mark 々) and hiragana: each character a word.
_APART = re.compile(
    "[\u3005\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]"
)
_SPACES = re.compile(" {2,}")
_HANGUL_WORD = re.compile("[\uac00-\ud7a3]+")
_NEEDS_FORM = re.compile(
    "[\u3005\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7a3\U00020000-\U0003134f]"
)


def _stem(word: str) -> str | None:
    """A Hangul word less the longest chain of particles that ends it, if one does."""
    for cut in range(1, len(word)):
        if only_particles(word[cut:]):
            return word[:cut]
    return None


def search_form(text: str) -> str:
    """The text as the word indexes read it, stored and asked (this module's rules)."""
    if not _NEEDS_FORM.search(text):
        return text
    formed = _SPACES.sub(" ", _APART.sub(lambda m: f" {m.group()} ", text))
    words = set(_HANGUL_WORD.findall(formed))
    stems = dict.fromkeys(
        stem for word in words if (stem := _stem(word)) is not None and stem not in words
    )
    if not stems:
        return formed
    return f"{formed} {' '.join(sorted(stems))}"
