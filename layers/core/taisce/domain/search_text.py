# ruff: noqa: RUF001
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

- Other languages in Latin letters inflect too ("gatos", "gato"; "Katzen", "Katze";
  "kissaa", "kissansa"). A text is taken to be in one of them by its function words
  (the stop-words package's lists, with the question words they leave out), as
  `text_languages` weighs them: several languages if they tie (Spanish and Portuguese
  share many), none where English's weigh as much. Each word of such a text adds its
  stem by that language's Snowball stemmer, where Snowball has one.

An added stem is added once, and not when the text holds it as a word already. Any
other text is its own form, unchanged, so what the word ranking does for it is the same
as before. Forming applies to a text as written, once: an index written before the
form is formed again in place, once (adapters/sqlite/vectors.py).

A question is asked in that form less the function words of the language it is taken
to be in (`asked_form`): in a new memory "mi", "con" and "el" would otherwise match
every Spanish note, and the indexes drop only English ones.
"""

from __future__ import annotations

import functools
import re
import threading
from collections import Counter
from collections.abc import Iterable

import snowballstemmer
from stop_words import get_stop_words

from .affixes import only_particles
from .languages import ENGLISH_ONLY
from .names import fold_piece
from .words import STOPWORDS

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
# Languages in Latin letters told apart by their function words, each with its
# Snowball stemmer (None: Snowball has none; its function words still leave questions).
_LATIN = {
    "catalan": "catalan",
    "czech": None,
    "danish": "danish",
    "dutch": "dutch",
    "finnish": "finnish",
    "french": "french",
    "german": "german",
    "hungarian": "hungarian",
    "indonesian": "indonesian",
    "italian": "italian",
    "norwegian": "norwegian",
    "polish": None,
    "portuguese": "portuguese",
    "romanian": "romanian",
    "slovak": None,
    "spanish": "spanish",
    "swedish": "swedish",
    "turkish": "turkish",
}
# A word in Latin letters, lower case (other scripts have their own rules above).
_LATIN_WORD = re.compile("[a-z\u00df-\u00f6\u00f8-\u00ff\u0100-\u024f\u1e00-\u1eff]+")
# A Snowball stemmer keeps state while it stems a word: one at a time per language.
_STEMMERS = {
    language: snowballstemmer.stemmer(language)
    for language in [*(lang for _, lang in _STEMMED), *filter(None, _LATIN.values())]
}
_STEMMING = threading.Lock()


# Question words the stop-words lists leave out (they were made for documents, and a
# question to a memory is mostly made of them): added to each language's list.
_ASKING = {
    "catalan": "que qui quan on quant quants com quin quina",
    "czech": "kdo co kdy kde kolik jak",
    "danish": "hvem hvad hvornår hvor hvordan hvilken",
    "dutch": "wie wat wanneer waar hoeveel hoe welke waarom",
    "finnish": "kuka mikä mitä milloin missä mistä mihin montako kuinka miten miksi",
    "french": "qui quoi quand où combien comment quel quelle pourquoi",
    "german": "wer was wann wo wie welche welcher warum wieviel",
    "hungarian": "ki mi mikor hol hány mennyi hogyan melyik miért",
    "indonesian": "apa siapa kapan mana berapa bagaimana mengapa",
    "italian": "che chi quando dove quanto quanti quante come quale perché",
    "norwegian": "hvem hva når hvor hvordan hvilken",
    "polish": "kto co kiedy gdzie ile jak który która dlaczego",
    "portuguese": "que quem quando onde quanto quantos quantas como qual porque",
    "romanian": "cine ce când unde cât câte cum care",
    "slovak": "kto čo kedy kde koľko ako",
    "spanish": "qué quién cuándo dónde cuánto cuántos cuántas cómo cuál porqué",
    "swedish": "vem vad när var hur vilken varför",
    "turkish": "kim ne neden nerede nereye kaç nasıl hangi",
}


def _function_words() -> dict[str, tuple[str, ...]]:
    """Each function word of two letters or more, folded as names are ("dónde" is
    "donde"): the languages other than English whose list holds it (whole words only:
    a list's "l'" or "por qué" is no word of an index; one letter says nothing of a
    language)."""
    lists = {lang: [*get_stop_words(lang), *_ASKING[lang].split()] for lang in _LATIN}
    languages: dict[str, list[str]] = {}
    for language, words in lists.items():
        for word in words:
            folded = fold_piece(word)
            if len(folded) < 2 or not _LATIN_WORD.fullmatch(folded):
                continue
            if language not in languages.setdefault(folded, []):
                languages[folded].append(language)
    return {word: tuple(found) for word, found in languages.items()}


_FUNCTION = _function_words()
# English's function words (the word ranking's own list): each weighs 1 for English,
# or 1/2 if it is also an everyday word of French, German, Spanish, Italian, Portuguese
# or Dutch ("on", "in", "me"; domain/languages.py), whichever other lists hold it too.
_ENGLISH = {
    folded: 1.0 if word in ENGLISH_ONLY else 0.5
    for word in STOPWORDS
    if len(folded := fold_piece(word)) > 1
}
# A text is taken to be in a language only with at least this many of its function
# words: one alone may be a word of another language ("hat", "care", "total").
LEAST_HELD = 2
# ...and weighing at least this much (a word shared by two languages weighs 1/2 for each).
LEAST_WEIGHT = 0.5


def text_languages(words: Iterable[str]) -> tuple[str, ...]:
    """The languages other than English the words are taken to be in. Each function
    word of another language weighs 1, shared among the languages that list it ("de"
    is a function word of twelve, "tengo" of Spanish alone); each of English's weighs 1
    for English (1/2 if other languages use it every day). The languages weighing most
    are taken if they hold LEAST_HELD of their function words or more and weigh
    LEAST_WEIGHT more than English or more. () for English, and for any text without
    such words."""
    weights: dict[str, float] = {}
    held: Counter[str] = Counter()
    english = 0.0
    for word in words:
        # Most words are ASCII: folding them is lowering them.
        folded = word.lower() if word.isascii() else fold_piece(word)
        english += _ENGLISH.get(folded, 0.0)
        languages = _FUNCTION.get(folded, ())
        for language in languages:
            weights[language] = weights.get(language, 0.0) + 1 / len(languages)
            held[language] += 1
    best = round(max(weights.values(), default=0.0), 9)
    # A text holding English function words needs a lead over them ("one", "us" and
    # "per" are function words of other languages and words of English too).
    if best < max(LEAST_WEIGHT, english + LEAST_WEIGHT):
        return ()
    top = [lang for lang, weight in weights.items() if round(weight, 9) == best]
    if min(held[lang] for lang in top) < LEAST_HELD:
        return ()
    return tuple(sorted(top))


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


def _stems(text: str, latin: tuple[str, ...] | None = None) -> list[str]:
    """The stems the text's words add: Korean words less their particles, Snowball's
    stems of Russian, Greek, Arabic, Hindi and Tamil words, and of words in Latin
    letters by the stemmers of the `latin` languages (by default those the text is
    taken to be in); each once, none that is a word of the text."""
    found: set[str] = set()
    lowered = text.lower()
    if _NEEDS_FORM.search(text):  # the scripts above, searched for only if present
        for word in _HANGUL_WORD.findall(text):
            stem = _particles_off(word)
            if stem is not None:
                found.add(stem)
        for pattern, language in _STEMMED:
            for word in pattern.findall(lowered):
                found.add(_stem(language, word))
    words_in_latin = _LATIN_WORD.findall(lowered)
    for language in text_languages(words_in_latin) if latin is None else latin:
        stemmer = _LATIN[language]
        if stemmer is not None:
            found.update(_stem(stemmer, word) for word in words_in_latin)
    if not found:
        return []
    return sorted(found - set(re.findall(r"\w+", lowered)))


def search_form(text: str, latin: tuple[str, ...] | None = None) -> str:
    """The text as the word indexes read it, stored and asked (this module's rules);
    `latin`: the languages its words in Latin letters are stemmed as, if not those it
    is taken to be in."""
    if _NEEDS_FORM.search(text):
        text = _SPACES.sub(" ", _APART.sub(lambda m: f" {m.group()} ", text))
    stems = _stems(text, latin)
    return f"{text} {' '.join(stems)}" if stems else text


def asked_form(question: str) -> str:
    """A question as the word indexes are asked it: without the function words of the
    language other than English it is taken to be in, then formed as that language
    (its words' stems added). As search_form forms it if it has no such language or
    nothing else would be left."""
    # Told once: search_form is given the languages rather than telling them again.
    languages = text_languages(_LATIN_WORD.findall(question.lower()))
    if not languages:
        return search_form(question, languages)
    kept = [
        word
        for word in re.findall(r"\w+", question)
        if not set(languages).intersection(_FUNCTION.get(fold_piece(word), ()))
    ]
    return search_form(" ".join(kept) if kept else question, languages)
