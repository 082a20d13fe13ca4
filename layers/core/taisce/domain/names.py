"""Entity names: how they are normalised and found in a question.

Names match after Unicode NFKC normalisation and case folding, with runs of white
space collapsed, as people read them: invisible characters are dropped (format and
default-ignorable ones: soft hyphen, joiners, word joiner, byte order mark, bidi
controls, variation selectors), a zero width space counts as a space, and a hyphen,
underscore, period, slash, any dash or middle dot between two parts of a name counts
as a space too, so "Xanthe-Morrow", "Xanthe_Morrow", "Xanthe.Morrow", "Xanthe/Morrow",
"Xanthe\u2014Morrow", "Xanthe\u30fbMorrow" and "Xanthe\u200bMorrow" are all "xanthe
morrow", and "X\u00adanthe" is "xanthe". Accents on Latin and Greek letters go
("X\u00e1nthe" is "xanthe", "\u0391\u03b8\u03ae\u03bd\u03b1" is
"\u03b1\u03b8\u03b7\u03bd\u03b1"), so do the optional marks of Arabic and Hebrew (short
vowels, niqqud), and in a word with Latin letters, letters of other scripts that look
Latin read as Latin (Unicode's confusables: "\u0425anthe" with a Cyrillic ha is "xanthe";
domain/confusables.py). Erasure also finds a name of several words written with its
words run together (find_written: "Xanthe\u200dMorrow" reads "xanthemorrow"), and a
name in a case form ("Ивана" of Иван: find_case_forms, domain/inflections.py). A name
is found only as whole words, and where found names overlap the longest wins. In
scripts written without spaces between words (Han, Hiragana, Katakana, Thai, Lao,
Khmer, Myanmar) each character is a word of its own, with the marks that follow it, so
"田中" is found in "田中さんはどこに住んでいますか": such a name is found wherever its
characters stand together (there is no word boundary to check). A name is also found
where Korean particles follow it in its word ("김민수" in "김민수는 어디서 일해요?",
"Google" in "Google에서"), and one in Hebrew or Arabic letters after a one-letter
prefix ("חיפה" in "מי גר בחיפה?"; domain/affixes.py).
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass

from .affixes import name_ends, name_starts, particles_follow, prefix_before
from .confusables import latin_lookalikes
from .inflections import STEM_LEAST, base_forms, latin_inflects, takes_cases

_SPACE = re.compile(r"\s+")
# A token is a run of word characters or one other non-space character, so that
# "Dublin's" yields "dublin" and names such as "AT&T" or "Acme Corp." still match.
_TOKEN = re.compile(r"\w+|[^\w\s]")

# Names longer than this many tokens are stored and listed but never searched
# for in a question: it bounds the look-ups one recall makes.
MAX_NAME_TOKENS = 12
# Distinct candidate keys one question looks up at most (shortest runs first): bounds
# a recall's store look-ups (DynamoDB: at most 10 BatchGetItem calls of 100 keys).
# A question of 100 words has about 1,100 distinct runs of up to 12 tokens.
MAX_CANDIDATES = 1_000


@functools.lru_cache(maxsize=4096)  # a question repeats few distinct characters
def _in_word(char: str) -> bool:
    """A word character in Unicode's sense: \\w, or a combining mark, or a joiner."""
    return (
        char.isalnum()
        or char == "_"
        or char in "\u200c\u200d"
        or unicodedata.category(char).startswith("M")
    )


# Characters nobody sees: Unicode's Default_Ignorable_Code_Point and the format
# characters (Cf), but for the prepended concatenation marks (U+0600-0605 and kin),
# which are visible. U+200B, the zero width space, is a word break: it reads as a space.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]"
)
_ZERO_WIDTH_SPACE = "\u200b"
# Between two parts of a name ("Jean-Luc", "snake_case", "acme.com", "AC/DC") these
# count as a space; elsewhere ("Acme Corp.", "-5", "a - b") they stay as they are: the
# hyphen, underscore, period and slash, every dash (Unicode's dash punctuation: hyphen,
# non-breaking hyphen, figure, en and em dash, horizontal bar, the small and full-width
# forms, ...) and the minus sign, and the middle dots (middle dot, Greek ano teleia,
# hyphenation point, word separator dot, dot operator, katakana middle dot).
_DASHES = (
    "\u058a\u05be\u1400\u1806\u2010-\u2015\u2e17\u2e1a\u2e3a\u2e3b\u2e40\u2e5d"
    "\u301c\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d\U00010ead\u2212"
)
_DOTS = "\u00b7\u0387\u2027\u2e31\u22c5\u30fb\uff65"
_SEPARATORS = re.compile(f"[-_./{_DASHES}{_DOTS}]+")


def continues_cluster(char: str) -> bool:
    """An invisible character that is not a word break: it belongs with what precedes it."""
    return char != _ZERO_WIDTH_SPACE and _INVISIBLE.fullmatch(char) is not None


def _visible(text: str) -> str:
    if text.isascii():
        return text
    return _INVISIBLE.sub("", text.replace(_ZERO_WIDTH_SPACE, " "))


# Marks that writers of a script leave out as often as not, so a name reads the same
# with or without them: Arabic's short vowels, tanwin, shadda, sukun and superscript
# alef (U+064B-065F, U+0670), and Hebrew's points and cantillation (niqqud, U+0591-05C7
# but for the punctuation among them). The Arabic tatweel (U+0640) only stretches a word.
_OPTIONAL_MARKS = re.compile(
    "[\u064b-\u065f\u0670\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7]"
)
_TATWEEL = "\u0640"


def _accented(char: str) -> bool:
    """A base letter whose accents are optional: Latin (ASCII once decomposed) or Greek
    (tonos and dialytika, left out in capitals and often in writing: "ΑΘΗΝΑ", "Αθηνα")."""
    return char.isalpha() and (char.isascii() or "\u0370" <= char <= "\u03ff")


def _as_latin(text: str) -> str:
    """Latin and Greek letters without their accents ("á" is "a", "ë" is "e", "ή" is
    "η"), Arabic and Hebrew letters without their optional marks: a name reads as its
    letters. Other marks on other scripts' letters stay (they make the letter:
    Devanagari vowel signs, Thai tone marks)."""
    out: list[str] = []
    accented = False  # whether the last base character's accents are optional
    for char in unicodedata.normalize("NFD", text):
        if unicodedata.category(char) == "Mn":
            if not accented and not _OPTIONAL_MARKS.match(char):
                out.append(char)
            continue
        if char == _TATWEEL:
            continue
        accented = _accented(char)
        out.append(char)
    return unicodedata.normalize("NFC", "".join(out))


def _in_letters(char: str) -> bool:
    return char.isalpha() or unicodedata.category(char) == "Mn"


def read_lookalikes(chars: Sequence[str]) -> tuple[list[str], list[int]]:
    """A word that mixes Latin letters with letters of another script that look Latin
    ("\u0425anthe" with Cyrillic ha, "M\u03bfrrow" with Greek omicron) is read in Latin letters, by
    Unicode's confusables (domain/confusables.py), without the accents that end up on
    Latin letters. A word wholly of another script ("Москва", "ΣΊΣΥΦΟΣ") stays as it
    is. `chars` are single characters of a folded text; the answer is the characters
    read and, for each, the index in `chars` it came from (a dropped accent belongs to
    its letter)."""
    out = list(chars)
    if all(char.isascii() for char in out):
        return out, list(range(len(out)))
    table = latin_lookalikes()
    start = 0
    while start < len(out):
        if not _in_letters(out[start]):
            start += 1
            continue
        end = start
        while end < len(out) and _in_letters(out[end]):
            end += 1
        word = out[start:end]
        if any(c.isascii() for c in word) and any(c in table for c in word):
            out[start:end] = [table.get(c, c) for c in word]
        start = end
    kept: list[str] = []
    came: list[int] = []
    for i, char in enumerate(out):
        latin = bool(kept) and kept[-1].isascii() and kept[-1].isalpha()
        if latin and unicodedata.category(char) == "Mn":
            continue  # an accent now on a Latin letter: dropped, as _as_latin does
        kept.append(char)
        came.append(i)
    return kept, came


def fold_piece(text: str) -> str:
    """NFKC, case folding and NFKC again, without invisible characters, Latin letters
    without accents: what a name is made of before white space, Latin look-alikes and
    separators are counted (erasure maps each piece of a text back to where it came
    from)."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", _visible(text)).casefold())
    folded = _visible(folded)
    return folded if folded.isascii() else _as_latin(folded)


def _lookalikes_read(text: str) -> str:
    return text if text.isascii() else "".join(read_lookalikes(text)[0])


def _part(char: str) -> bool:
    """A character of a name's part: a letter, digit or mark (not a separator)."""
    return char.isalnum() or unicodedata.category(char).startswith("M")


def separator_runs(text: str) -> list[tuple[int, int]]:
    """Spans of separators that stand between two parts of a name in `text`."""
    return [
        m.span()
        for m in _SEPARATORS.finditer(text)
        if m.start() > 0
        and m.end() < len(text)
        and _part(text[m.start() - 1])
        and _part(text[m.end()])
    ]


def fold_separators(text: str) -> str:
    runs = separator_runs(text)
    if not runs:
        return text
    parts: list[str] = []
    at = 0
    for start, end in runs:
        parts += [text[at:start], " "]
        at = end
    parts.append(text[at:])
    return "".join(parts)


def normalize_name(name: str) -> str:
    return fold_separators(_lookalikes_read(_SPACE.sub(" ", fold_piece(name)).strip()))


def has_letter_or_digit(name: str) -> bool:
    """Whether a name can name an entity: "." or "\u0000" has no letter or digit, so
    it is not a name (it would match punctuation everywhere, as whole tokens)."""
    return any(char.isalnum() for char in normalize_name(name))


NOT_A_NAME = "must be a name: at least one letter or digit"


@dataclass(frozen=True, slots=True)
class Span:
    key: str
    start: int
    end: int
    # The tokens it covers, first and last (inclusive): overlap is checked on them.
    first: int = 0
    last: int = 0


# Scripts written without spaces between words: Thai, Lao, Myanmar, Khmer, Hiragana,
# Katakana (and its phonetic extensions), the CJK ideographs (with extension A, the
# iteration mark and the compatibility ideographs) and the supplementary ideographs.
_UNSPACED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3005\u3040-\u30ff\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]"
)


def unspaced(char: str) -> bool:
    """A character of a script written without spaces: a word of its own."""
    return _UNSPACED.match(char) is not None


def _split_unspaced(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """One token (start, end) of `text` cut before each character of a script without
    spaces, and after the last one, so each such character (with the marks after it)
    stands alone."""
    if text[start:end].isascii() or not _UNSPACED.search(text, start, end):
        return [(start, end)]
    pieces: list[tuple[int, int]] = []
    at = start
    for i in range(start + 1, end):
        char, before = text[i], text[i - 1]
        if unicodedata.category(char).startswith("M"):
            continue  # a mark stays with its letter
        if unspaced(char) or unspaced(before):
            pieces.append((at, i))
            at = i
    pieces.append((at, end))
    return pieces


def _tokens(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each token of a normalised text."""
    tokens: list[tuple[int, int]] = []
    for m in _TOKEN.finditer(text):
        start, end = m.span()
        # Python's \w leaves out combining marks (and joiners), which are part of the
        # word they sit in ("हिन्दी", "q\u0307"): such a piece joins the token before it.
        if (
            tokens
            and tokens[-1][1] == start
            and _in_word(text[start])
            and _in_word(text[start - 1])
        ):
            start = tokens.pop()[0]
        tokens += _split_unspaced(text, start, end)
    return tokens


class QuestionNames:
    """The runs of whole tokens of one question that could be names.

    Everything here is linear in the question's length: at most MAX_NAME_TOKENS runs
    start at each token, and no step compares found names with one another. The keys
    to look up are distinct and at most MAX_CANDIDATES (shortest runs first), so a long
    or repetitive question costs a bounded number of store look-ups."""

    def __init__(self, question: str) -> None:
        self.text = normalize_name(question)
        self.tokens = _tokens(self.text)
        self._starts = [start for start, _ in self.tokens]
        self._ends = [end for _, end in self.tokens]
        # Where a name may start or end inside a word, after a Hebrew or Arabic prefix
        # ("בחיפה") or before Korean particles ("김민수는"), by the word's token index
        # (domain/affixes.py).
        text = self.text
        self._inner_starts = {
            i: cut
            for i, (start, end) in enumerate(self.tokens)
            if (cut := name_starts(text, start, end))
        }
        self._inner_ends = {
            i: cut
            for i, (start, end) in enumerate(self.tokens)
            if (cut := name_ends(text, start, end))
        }

    def _runs(self, width: int) -> Iterator[str]:
        """The key of every run of `width` tokens, in question order."""
        starts, ends = self._starts, self._ends
        return map(
            self.text.__getitem__, map(slice, starts[: len(starts) - width + 1], ends[width - 1 :])
        )

    def _inner_runs(self, width: int) -> Iterator[tuple[int, int, int]]:
        """(first token, start, end) of every run of `width` tokens whose first word
        is cut after its prefix or whose last word is cut before its particles."""
        if not (self._inner_starts or self._inner_ends):
            return
        starts, ends = self._starts, self._ends
        for first in {*self._inner_starts, *(last + 1 - width for last in self._inner_ends)}:
            last = first + width - 1
            if first < 0 or last >= len(starts):
                continue
            for start in [starts[first], *self._inner_starts.get(first, ())]:
                for end in [ends[last], *self._inner_ends.get(last, ())]:
                    if (start, end) != (starts[first], ends[last]) and start < end:
                        yield first, start, end

    def keys(self, cap: int | None = MAX_CANDIDATES) -> list[str]:
        """The distinct candidate keys, one token long first, then two, ..., in
        question order within a length; at most `cap` (None: all)."""
        seen: dict[str, None] = {}
        for width in range(1, MAX_NAME_TOKENS + 1):
            seen.update(dict.fromkeys(self._runs(width)))
            seen.update(
                dict.fromkeys(self.text[start:end] for _, start, end in self._inner_runs(width))
            )
            if cap is not None and len(seen) >= cap:
                return list(seen)[:cap]
        return list(seen)

    def spans(self, known: Collection[str] | None = None) -> Iterator[Span]:
        """The runs (only those whose key is in `known`, if given)."""
        widths: Sequence[int] = range(1, MAX_NAME_TOKENS + 1)
        if known is not None:
            # Only run lengths some known key has (a key of n tokens spans n tokens).
            lengths = {len(_tokens(k)) for k in known}
            widths = range(1, 0) if not lengths else sorted(w for w in lengths if w in widths)
        starts, ends = self._starts, self._ends
        for width in widths:
            for i, key in enumerate(self._runs(width)):
                if known is None or key in known:
                    yield Span(key, starts[i], ends[i + width - 1], i, i + width - 1)
            for i, start, end in self._inner_runs(width):
                key = self.text[start:end]
                if known is None or key in known:
                    yield Span(key, start, end, i, i + width - 1)

    def matches(self, known: Collection[str]) -> list[str]:
        """The keys of the names found, as pick_matches chooses them."""
        return pick_matches(self.spans(known), known)


def candidate_spans(question: str) -> list[Span]:
    """Every run of whole tokens in the question that could be a name."""
    spans = list(QuestionNames(question).spans())
    spans.sort(key=lambda s: (s.start, s.end))
    return spans


def candidate_keys(question: str, cap: int | None = MAX_CANDIDATES) -> list[str]:
    """The distinct keys of candidate_spans, at most `cap` of them (shortest first)."""
    return QuestionNames(question).keys(cap)


def pick_matches(spans: Iterable[Span], known: Iterable[str]) -> list[str]:
    """The keys of the names found, longest first where they overlap, in question order.

    Linear in the spans: each found span checks only the tokens it covers (at most
    MAX_NAME_TOKENS), never the spans taken before it."""
    known_keys = known if isinstance(known, (set, frozenset, dict)) else set(known)
    found = [s for s in spans if s.key in known_keys]
    found.sort(key=lambda s: (-(s.end - s.start), s.start))
    taken_tokens: set[int] = set()
    taken: list[Span] = []
    for span in found:
        if span.first == span.last:  # one token: the common case, checked directly
            if span.first not in taken_tokens:
                taken_tokens.add(span.first)
                taken.append(span)
            continue
        covered = range(span.first, span.last + 1)
        if not any(t in taken_tokens for t in covered):
            taken_tokens.update(covered)
            taken.append(span)
    taken.sort(key=lambda s: s.start)
    return list(dict.fromkeys(span.key for span in taken))


# -- erasure: where one name occurs in a text -------------------------------------------


def _joined(before: str, after: str) -> bool:
    """Whether two neighbouring characters are one word (no token edge between them)."""
    if not (_in_word(before) and _in_word(after)):
        return False
    if unicodedata.category(after).startswith("M"):
        return True
    return not (unspaced(before) or unspaced(after))


def find_name(text: str, key: str) -> list[tuple[int, int]]:
    """The spans of `text` (already normalised) where the name `key` occurs as whole
    tokens, as candidate_spans would find it (with no limit on its length)."""
    spans: list[tuple[int, int]] = []
    if not key:
        return spans
    at = text.find(key)
    while at >= 0:
        end = at + len(key)
        if _whole(text, at, end):
            spans.append((at, end))
        at = text.find(key, at + 1)
    return spans


def find_written(text: str, key: str, written: str = "") -> list[tuple[int, int]]:
    """find_name, for a name of several words also where it is written with its words
    run together, and where it is written in a case form (find_case_forms): what
    erasure takes (it errs on the side of removing)."""
    spans = find_name(text, key)
    if " " in key:
        spans += _run_together(text, key)
    cases = find_case_forms(text, key, written)
    return sorted(set(spans + cases)) if cases or " " in key else spans


_CASE_WORD = re.compile(r"\w+")
# A name of more words is found as written only.
MAX_CASE_WORDS = 4


def case_stem(word: str) -> str:
    """The start of a word that each of its case forms keeps (an ending replaces at
    most its last two letters)."""
    return word[: max(STEM_LEAST - 1, len(word) - 2)]


def find_case_forms(text: str, key: str, written: str = "") -> list[tuple[int, int]]:
    """The spans of `text` (normalised) where the name is written in a case form, each
    word as written or a case form of the name's word and at least one a case form
    (domain/inflections.py: "ивана петрова" for иван петров, "annie" for anna); words
    in Latin letters only when `written` (the text before normalising, which would
    drop the Polish and Turkish letters) is in a language that inflects names."""
    words = key.split(" ")
    if len(words) > MAX_CASE_WORDS or not all(case_stem(w) in text for w in words):
        return []
    # A pass over the text, so only where a case form may be, and a Latin word asks.
    latin = not all(takes_cases(w, False) for w in words) and latin_inflects(written)
    if not any(takes_cases(w, latin) for w in words):
        return []
    tokens = [(m.start(), m.end(), m.group()) for m in _CASE_WORD.finditer(text)]
    found: list[tuple[int, int]] = []
    for i in range(len(tokens) - len(words) + 1):
        run = tokens[i : i + len(words)]
        if any(text[a[1] : b[0]] != " " for a, b in itertools.pairwise(run)):
            continue
        cased = False
        for (_, _, word), name in zip(run, words, strict=True):
            if word == name:
                continue
            if word[:2] != name[:2] or name not in base_forms(word, latin):
                break
            cased = True
        else:
            if cased:
                found.append((run[0][0], run[-1][1]))
    return found


def _whole(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] begins and ends at token edges: a token never straddles
    them (the characters on either side must not join into one word)."""
    if start > 0 and _joined(text[start - 1], text[start]):
        # A Hebrew or Arabic name may follow a prefix in its word ("בחיפה").
        start = prefix_before(text, start)
        if start > 0 and _joined(text[start - 1], text[start]):
            return False
    if end < len(text) and _joined(text[end - 1], text[end]):
        # A Korean name may be followed by particles in its word ("김민수는").
        end = particles_follow(text, end)
        return end == len(text) or not _joined(text[end - 1], text[end])
    return True


def _run_together(text: str, key: str) -> list[tuple[int, int]]:
    """The spans where a name of several words occurs with its words run together or
    spaced otherwise, as whole tokens: "xanthemorrow" for "xanthe morrow" (a name
    written with an invisible joiner, word joiner or soft hyphen between its words
    reads as one word once those are dropped). Erasure takes these too."""
    compact_key = key.replace(" ", "")
    kept = [i for i, char in enumerate(text) if char != " "]
    compact = "".join(text[i] for i in kept)
    found: list[tuple[int, int]] = []
    at = compact.find(compact_key)
    while at >= 0:
        start, end = kept[at], kept[at + len(compact_key) - 1] + 1
        if _whole(text, start, end):
            found.append((start, end))
        at = compact.find(compact_key, at + 1)
    return found
