"""What may be written joined to a name inside one word, by the scripts that do so.

A name is found only as whole words. Some languages write small words joined to the
name they go with, so a question naming someone exactly would never find them, and an
erasure would leave their name in such a text:

- Korean writes its particles (case markers, postpositions, the copula, the honorifics
  씨 and 님) after the noun: 김민수 is "김민수는" as a topic, "김민수에게" as "to 김민수",
  "김민수씨도" as "Mr 김민수 too".
- Hebrew writes the one-letter words and, the, in, as, to, from and that (vav, he, bet,
  kaf, lamed, mem, shin) before it, up to three of them: "בחיפה" is "in Haifa",
  "ולדני" "and to Dani".
- Arabic writes the conjunctions و and ف, then the prepositions ب, ل and ك, before it:
  "وعلي" is "and Ali", "بالقاهرة" "in Cairo" (the name is "القاهرة").

Korean text writes the particles after a name in Latin letters too ("Google에서",
"Alice는"). So a name also counts as found where the rest of its word is one or more
particles, and a name in Hebrew or Arabic letters where the start of its word is such a
prefix, and nothing else. A name of one letter or syllable takes no affix.
"""

from __future__ import annotations

import functools
import re

# Korean particles written joined to a noun. Chains of them are read too ("에게" + "는",
# "씨" + "도"), so combined forms need no entry of their own.
_PARTICLES = """
    은 는 이 가 께서 을 를 의 에 에게 에게서 한테 한테서 께 더러 에서 서 로 으로 와 과
    하고 랑 이랑 도 만 까지 부터 조차 마저 처럼 보다 같이 마다 밖에 뿐 이나 나 이든 든
    이라도 라도 이라면 라면 이란 란 이라고 라고 야 아 이여 여 요 이다 다 이에요 예요
    이야 입니다 이었다 였다 이었어요 였어요 이지 지 이고 고 이며 며 씨 님 군 양 들 네
    """
PARTICLES = frozenset(_PARTICLES.split())
_LONGEST = max(map(len, PARTICLES))
# A rest of a word longer than this is no chain of particles (bounds the parse).
_MOST = 8

# Prefixes: one to three Hebrew ones; Arabic: a conjunction, a preposition, or both.
_PREFIX = re.compile(
    "[\u05d5\u05d4\u05d1\u05db\u05dc\u05de\u05e9]{1,3}|[\u0648\u0641]?[\u0628\u0644\u0643]|[\u0648\u0641]"
)
_MOST_PREFIX = 3


def hangul(char: str) -> bool:
    """A precomposed Hangul syllable (NFKC composes conjoining jamo into these)."""
    return "\uac00" <= char <= "\ud7a3"


def _prefixed(char: str) -> str | None:
    """The script of a letter that takes prefixes: "he" (Hebrew), "ar" (Arabic), or None."""
    if "\u05d0" <= char <= "\u05ea":
        return "he"
    if "\u0620" <= char <= "\u064a" or "\u066e" <= char <= "\u06d3":
        return "ar"
    return None


@functools.lru_cache(maxsize=4096)
def only_particles(rest: str) -> bool:
    """Whether `rest` (Hangul, not empty) is a chain of one or more particles."""
    if not rest or len(rest) > _MOST:
        return False
    return any(
        rest[:n] in PARTICLES and (n == len(rest) or only_particles(rest[n:]))
        for n in range(1, min(_LONGEST, len(rest)) + 1)
    )


def name_ends(text: str, start: int, end: int) -> list[int]:
    """Where a name may end inside the word text[start:end]: each offset after which
    the rest of the word is Korean particles, leaving a name of at least two letters
    (syllables, in Hangul), longest name first. Empty unless the word ends in Hangul."""
    if end - start < 3 or not hangul(text[end - 1]):
        return []
    return [
        at
        for at in range(end - 1, max(start + 2, end - _MOST) - 1, -1)
        if text[at - 2].isalpha()
        and text[at - 1].isalpha()
        and all(map(hangul, text[at:end]))
        and only_particles(text[at:end])
    ]


def name_starts(text: str, start: int, end: int) -> list[int]:
    """Where a name may start inside the word text[start:end]: each offset before
    which the word is a Hebrew or Arabic prefix of its name's script, leaving a name
    of at least two letters, longest name first."""
    script = _prefixed(text[start]) if end - start >= 3 else None
    if script is None:
        return []
    return [
        at
        for at in range(start + 1, min(start + _MOST_PREFIX, end - 2) + 1)
        if _prefixed(text[at]) == _prefixed(text[at + 1]) == script
        and _PREFIX.fullmatch(text, start, at)
    ]


def particles_follow(text: str, at: int) -> int:
    """The end of the Korean particles that follow a name ending at `at` within its
    word, or `at` itself when none do (the word goes on with something else)."""
    if at < 2 or at >= len(text) or not (text[at - 2].isalpha() and text[at - 1].isalpha()):
        return at  # a name of two letters or more
    if not hangul(text[at]):
        return at
    end = at
    while end < len(text) and hangul(text[end]):
        if end - at == _MOST:
            return at  # longer than any chain of particles
        end += 1
    return end if only_particles(text[at:end]) else at


def prefix_before(text: str, at: int) -> int:
    """The start of the Hebrew or Arabic prefix before a name starting at `at` within
    its word, or `at` itself when there is none."""
    script = _prefixed(text[at]) if at + 1 < len(text) else None
    if script is None or _prefixed(text[at + 1]) != script:
        return at  # a name of two letters or more, after a letter
    start = at
    while start > 0 and _prefixed(text[start - 1]) == script:
        if at - start == _MOST_PREFIX:
            return at  # longer than any prefix
        start -= 1
    return start if start < at and _PREFIX.fullmatch(text, start, at) else at
