# ruff: noqa: RUF001, RUF002, RUF003, SIM905 - endings and examples in Cyrillic and Greek
"""Case endings: a name as a language that inflects names writes it in a question.

Slavic, Baltic-Finnic, Turkic, Hungarian and Greek questions change a name's end with
its role in the sentence: "Кто брат Ивана?" asks about Иван, "Co wiesz o Annie?" about
Anna, "Kim jest brat Jana Nowaka?" about Jan Nowak, "Mehmetin evi nerede?" about
Mehmet, "Mit tudsz Péterről?" about Péter, "Πού μένει ο Γιώργος;" and "Τι ξέρεις για
τον Γιώργο;" about Γιώργος. Such a word is no whole-word match of the name, and most
are too short for a spelling match, so step 2 reads each word of a name-like span as
the name it may be a case of: the word less an ending of its script (below), as the
name wrote it, or with one of the letters a nominative ends in and a case ending
replaces ("Annie" is Ann, Anna or Anne; the project's names decide which, if any).

Many languages in Latin letters do not inflect names (English but for the genitive
"'s", a word of its own; the Romance languages; German and Dutch but for the joined
genitive "s", read apart), and their names pair like case forms ("Dan" and "Dane",
"Paolo" and "Paola"), so a question's words in Latin letters are read as case forms
only when it holds a letter or a word of a language that inflects names ("Gdzie",
"kde", "ł", "ı", "ő"). Cyrillic and Greek words always are.
A Slavic mobile vowel is read: a stem that ends in two consonants may be a name with
an "e" between them ("Pavla" of Pavel, "Marka" of Marek, "Павла" of Павел). Other stem
changes are not: Finnish consonant gradation ("Helsingissä" of Helsinki) and consonant
shifts ("Praze" of Praha).
"""

from __future__ import annotations

import functools
import re

# Case endings, normalised as names are (lower case; Latin and Greek accents dropped,
# so Polish "ą" is "a", Hungarian "ről" is "rol", Turkish "ı" is "i"; Greek "ς" is "σ").
# Latin letters: Polish, Czech, Slovak, Croatian, Slovene, Romanian; Finnish and
# Estonian; Turkish (also written without the apostrophe); Hungarian.
_LATIN = """
    a u e i o y em om ie owi ovi ego emu im ym iego iemu ej iej ou eho ho mu ei
    n an en in on un yn ta na ksi ssa sta lla lta lle han hen hin hon hun
    ia ille illa ilta ista issa iin ina iksi ga le lt st sse ni
    nin nun yi yu ye ya de da te den dan ten tan la yle yla
    nak nek t at et ot val vel ban ben ba be bol ra re rol tol nal nel hoz hez ig
    """
# Cyrillic: Russian, Ukrainian, Belarusian, Bulgarian, Serbian, Macedonian.
_CYRILLIC = """
    а я у ю о е и ы і ом ем ём ой ей ою ею ові еві ого его ому ему ым им ую юю
    """
_GREEK = "ο ου ε α η ασ ησ οσ"
# The letters a nominative ends in that an ending replaces ("Anna" → "Annie",
# "Дмитрий" → "Дмитрия", "Кузнецкий" → "Кузнецкого", "Γιώργος" → "Γιώργο").
_LATIN_FINALS = "a e o y i"
_CYRILLIC_FINALS = "а я о е ь й ий ый ой ая яя"
_GREEK_FINALS = "οσ ασ ησ α η ο"

# Names one span may be read as, at most (a span has up to 4 words).
MAX_FORMS = 256
# The endings of a feminine name of three letters (in "a", "а" or "я"), by script.
_SHORT = {
    "latin": frozenset("y i e ie u o".split()),
    "cyrillic": frozenset("ы и е у ю ой ей".split()),
    "greek": frozenset(),
}
_SHORT_FINALS = ("a", "а", "я")
_VOWELS = frozenset("aeiouyаяуюоеёиыіїєэοεαηιυω")
# The vowel a Slavic name drops before a case ending, by script (_mobile_vowel).
_MOBILE = {"latin": "e", "cyrillic": "е"}
# The stem a case form keeps of its name, at least, but for a feminine name of three
# letters (_SHORT).
STEM_LEAST = 3

# Letters and words only languages that inflect names write in Latin letters: Polish,
# Czech, Slovak, Croatian, Serbian, Slovene, Finnish, Estonian, Turkish, Hungarian,
# Latvian and Lithuanian. A question in Latin letters without one is read as written:
# English, the Romance languages, German and Dutch pair names as case forms ("Dan" and
# "Dane", "Paolo" and "Paola").
_MARKER_LETTERS = "ąęłśźżćńřěůčšžťďňľĺŕőűığşđėųūįāēīģķļņ"
_MARKER_WORDS = frozenset(
    """
    gdzie jest kto czy jak się sie dla przez który która które kiedy dlaczego co
    kde kdo jaký jaká který která kdy proč prečo gdje gde tko što šta kada koji koja
    kje kaj kdaj missä mitä kuka mikä milloin miksi kenen kenelle keneltä kenestä
    onko kanssa kus kes millal miks kellega nerede nereye kimin nedir neden nasıl
    hangi için ile bir hol hova kinek kivel hogy mikor miért melyik és kur kas
    kāds kada kodėl yra
    """.split()
)
# A marker letter in either case (but "I", the capital of both "i" and Turkish "ı"),
# and a whole word between spaces and punctuation.
_MARKER_LETTER = re.compile(
    "[" + "".join(sorted({*_MARKER_LETTERS, *(c.upper() for c in _MARKER_LETTERS)} - {"I"})) + "]"
)
# Punctuation around a word, read as a space (the apostrophe and the hyphen stay: "I've"
# and "co-worker" are one word each).
_PUNCTUATION = str.maketrans(dict.fromkeys('.,;:!?()[]"«»„“”¿¡…', " "))


@functools.cache
def _rules(script: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(endings, finals) of a script, the longest first."""
    endings, finals = {
        "latin": (_LATIN, _LATIN_FINALS),
        "cyrillic": (_CYRILLIC, _CYRILLIC_FINALS),
        "greek": (_GREEK, _GREEK_FINALS),
    }[script]
    return tuple(sorted(set(endings.split()), key=len, reverse=True)), tuple(finals.split())


def _script(word: str) -> str | None:
    """The script of a word's letters, if all are of one that inflects names."""
    if all("a" <= c <= "z" or c in "łđ" for c in word):
        return "latin"
    if all("\u0400" <= c <= "\u04ff" for c in word):
        return "cyrillic"
    if all("\u0370" <= c <= "\u03ff" for c in word):
        return "greek"
    return None


def _case_script(word: str, latin: bool) -> str | None:
    """The script of a normalised word if its words are read as case forms (Latin only
    when `latin`), else None."""
    script = _script(word)
    return script if script is not None and (script != "latin" or latin) else None


def takes_cases(word: str, latin: bool = True) -> bool:
    """Whether a normalised word is of a script whose words are read as case forms
    (Latin only when `latin`)."""
    return _case_script(word, latin) is not None


def latin_inflects(question: str) -> bool:
    """Whether a question's words in Latin letters may be case forms of names: it
    holds a letter or a word of a language that inflects them."""
    if _MARKER_LETTER.search(question) is not None:
        return True
    return not _MARKER_WORDS.isdisjoint(question.lower().translate(_PUNCTUATION).split())


@functools.lru_cache(maxsize=4096)
def base_forms(word: str, latin: bool = True) -> tuple[str, ...]:
    """The names a normalised word may be a case form of, the word itself not among
    them: the word less an ending, as is or, for an ending that opens with a vowel,
    with a final it replaced. Empty for a word of another script, of Latin letters when
    `latin` is false, or with no ending."""
    script = _case_script(word, latin)
    if script is None:
        return ()
    endings, finals = _rules(script)
    found: dict[str, None] = {}
    for ending in endings:
        stem = word[: -len(ending)]
        if not word.endswith(ending) or len(stem) < STEM_LEAST - 1:
            continue
        if len(stem) < STEM_LEAST:
            # A name of three letters ending in "a" takes the feminine endings ("Ady" of
            # Ada, "Ewie" of Ewa, "Ани" of Аня), and nothing else.
            if ending in _SHORT[script]:
                found.update((stem + final, None) for final in _SHORT_FINALS if final in finals)
            continue
        found[stem] = None
        if ending[0] in _VOWELS:  # a consonant ending follows the whole name
            found.update((stem + final, None) for final in finals if final != ending)
            found.update((mobile, None) for mobile in _mobile_vowel(stem, script))
    found.pop(word, None)
    return tuple(found)


def _mobile_vowel(stem: str, script: str) -> tuple[str, ...]:
    """The nominative a stem ending in two consonants had with an "e" between them,
    which Slavic languages drop before an ending ("Pavla" of Pavel, "Marka" of Marek,
    "Павла" of Павел)."""
    vowel = _MOBILE.get(script)
    if vowel is None or len(stem) < STEM_LEAST or stem[-1] in _VOWELS or stem[-2] in _VOWELS:
        return ()
    return (stem[:-1] + vowel + stem[-1],)


def name_forms(key: str, latin: bool = True) -> list[tuple[str, int]]:
    """The names a normalised span may be a case form of, each with the characters its
    endings change (the most of any word): every word as written or as a base form, at
    least one a base form; at most MAX_FORMS, fewest changes first."""
    options = [
        [(w, 0), *((b, max(len(w), len(b)) - _shared(w, b)) for b in base_forms(w, latin))]
        for w in key.split(" ")
    ]
    if all(len(option) == 1 for option in options):
        return []
    combos: list[tuple[str, int]] = [("", 0)]
    for option in options:
        combos = sorted(
            ((f"{name} {w}" if name else w, max(changed, c)) for name, changed in combos
             for w, c in option),
            key=lambda combo: combo[1],
        )[:MAX_FORMS]  # fmt: skip
    return [(name, changed) for name, changed in combos if changed]


def _shared(a: str, b: str) -> int:
    """The length of the prefix two words share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
