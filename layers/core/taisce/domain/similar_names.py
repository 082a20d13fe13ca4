"""Similar names: the entities a question means when it names none exactly (recall step 2).

Only the question's own name-like spans are compared, never the whole question: a
span is a run of capitalised words ("Where is Atlas Moren employed?" gives "Atlas
Moren", "Atlas" and "Moren"; "Where" alone is a function word, not a name). Three signals
find an entity for a span:

- spelling: the span and the entity's name (both normalised) differ by at most a few
  edits (insert, delete, substitute, swap two neighbours; rapidfuzz's OSA distance):
  none under 5 characters, 1 under 10, 2 from 10 on, so "Atlas Moren" finds
  "Atlas Moran" while "Bob" does not find "Rob";
- meaning: the span's vector is near the entity name's vector (the worker's entity
  vectors, per role), at cosine SPAN_VECTOR_FLOOR or more ("Bob Smith" finds
  "Robert Smith");
- part: a whole run of capitalised words (less the function words opening it) is the
  first or last words of a longer name, as people name someone by given or family
  name ("Picard" and "Jean-Luc" find "Jean-Luc Picard"; "Project" in "Project Cobalt"
  finds no "Project Basalt"); in scripts without capitals, a run of 2-4 Han or
  Katakana characters, or a Hangul word less its particles, that begins or ends a
  longer name of one word ("田中" of "田中さんはどこ" finds 田中太郎, "小明" finds 王小明,
  "민수는" finds 김민수). A span less a joined genitive "s" counts as written ("Annas
  Bruder" finds Anna, "Picards Schiff" Jean-Luc Picard). Its similarity is the share
  of the name's words (or characters) the part holds, under any spelling or meaning
  match's, so those come first.

A span read as a case form counts as written too, in languages that inflect names
(domain/inflections.py): "Ивана Петрова" finds Иван Петров as spelling does, "Nowaku"
finds Jan Nowak as a part.

Each match says which span found it, how similar it is and by which signal, so a
recall can explain itself. Names a question does not capitalise are found only by
step 1, exactly, but for the parts of names in scripts without capitals.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rapidfuzz import process
from rapidfuzz.distance import OSA

from .affixes import name_ends
from .floors import MINILM_FLOORS
from .inflections import base_forms, latin_inflects, name_forms
from .model import Role
from .names import normalize_name
from .recalled import NameSignal
from .words import STOPWORDS

if TYPE_CHECKING:
    from .ports.names import NameLookup
    from .ports.vectors import Embedder, VectorIndex

logger = logging.getLogger(__name__)

# Matches returned at most (the entities whose facts step 2 adds).
SIMILAR_NAMES = 3
# Entity names compared by spelling, at most (the store's listing, by key).
NAME_POOL = 20_000
# Name-like spans of one question, at most, and words in one span.
MAX_SPANS = 12
MAX_SPAN_WORDS = 4
# Cosine a span's vector must reach with an entity name's vector. all-MiniLM-L6-v2:
# "Bob Smith"/"Robert Smith" 0.86, "Maya Okafour"/"Maya Okafor" 0.95, but
# "London"/"Dublin" 0.58 and "Acme"/"Acme Corp" 0.83 (a shorter name is not the name).
# Another model brings its own (domain/floors.py).
SPAN_VECTOR_FLOOR = MINILM_FLOORS.span
SPAN_NEIGHBOURS = 3

# A word token, and the characters that may join two capitalised words of one name
# ("Jean-Luc", "O'Brien", "St. John") besides white space.
_WORD = re.compile(r"\w+")
_JOINERS = frozenset("-'\u2019.&_/ \t\u00a0")


@dataclass(frozen=True, slots=True)
class SimilarName:
    """An entity (its key) a span of the question is similar to."""

    key: str
    span: str  # the span as the question wrote it
    similarity: float  # 0-1: 1 - edits / length for spelling, the cosine for meaning
    signal: NameSignal


@dataclass(frozen=True, slots=True)
class SimilarNames:
    matches: list[SimilarName]
    # The meaning signal could not run (model or index failed): spelling still did.
    failed: bool = False


def allowed_edits(length: int) -> int:
    """Edits a name of this many characters may differ by and still be similar."""
    return 0 if length < 5 else 1 if length < 10 else 2


def _capitalised(word: str) -> bool:
    first = word[0]
    return (
        first.isupper() or first.istitle() or (first.isdigit() and any(c.isupper() for c in word))
    )


def _runs(text: str) -> list[list[tuple[int, int]]]:
    """The (start, end) of each word of each run of capitalised words of `text`."""
    runs: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    last_end = 0
    for m in _WORD.finditer(text):
        start, end = m.span()
        between = text[last_end:start]
        joined = bool(current) and all(c in _JOINERS for c in between) and len(between) <= 3
        if _capitalised(m.group()):
            if not joined and current:
                runs.append(current)
                current = []
            current.append((start, end))
        elif current:
            runs.append(current)
            current = []
        last_end = end
    if current:
        runs.append(current)
    return runs


def name_runs(question: str) -> list[str]:
    """The whole runs of capitalised words, less the function words that open them
    ("What Picard" is "Picard"), in question order: a name as the question wrote it."""
    text = unicodedata.normalize("NFKC", question)
    found: list[str] = []
    for run in _runs(text):
        while run and normalize_name(text[slice(*run[0])]) in STOPWORDS:
            run = run[1:]
        if run and len(run) <= MAX_SPAN_WORDS and len(found) < MAX_SPANS:
            found.append(text[run[0][0] : run[-1][1]])
    return found


def name_like_spans(question: str) -> list[str]:
    """Runs of capitalised words and their sub-runs (at most MAX_SPAN_WORDS words),
    longest first, then in question order; distinct by normalised form."""
    text = unicodedata.normalize("NFKC", question)
    spans: list[tuple[int, int, int]] = []  # (words, start, end)
    for run in _runs(text):
        for i in range(len(run)):
            for j in range(i, min(i + MAX_SPAN_WORDS, len(run))):
                spans.append((j - i + 1, run[i][0], run[j][1]))
    spans.sort(key=lambda s: (-s[0], s[1]))
    found: dict[str, str] = {}
    for words, start, end in spans:
        key = normalize_name(text[start:end])
        # One function word is grammar, not a name: "What", "Who", "Is" open questions
        # capitalised. Skipped, it costs no model call (a question naming nobody
        # otherwise paid one for "What" alone) and can match no entity.
        if words == 1 and key in STOPWORDS:
            continue
        found.setdefault(key, text[start:end])
        if len(found) >= MAX_SPANS:
            break
    return list(found.values())


def genitive(key: str) -> str | None:
    """The name a span ending in a joined genitive "s" is of ("annas" of Annas Bruder,
    "picards" of Picards Schiff: German, Dutch and the Scandinavian languages write it
    without an apostrophe), if it is one: a Latin letter, at least three, then "s"."""
    if len(key) >= 4 and key.endswith("s") and key[-2].isascii() and key[-2].isalpha():
        return key[:-1]
    return None


def _genitives(spans: Sequence[str], keys: Sequence[str]) -> list[SimilarName]:
    """Entities named exactly by a span less its genitive "s" (a name of any length:
    one edit that is always grammar)."""
    asked = [(span, key, genitive(key)) for span in spans if (key := normalize_name(span))]
    asked = [(span, key, name) for span, key, name in asked if name is not None]
    if not asked:
        return []
    held = set(keys)
    return [
        SimilarName(name, span, 1 - 1 / len(key), "spelling")
        for span, key, name in asked
        if name in held
    ]


def by_spelling(spans: Sequence[str], keys: Sequence[str]) -> list[SimilarName]:
    """Entities (of `keys`, normalised names) within allowed_edits of a span, or named
    by it less a genitive "s": one distance matrix, spans by names, computed in C++
    (rapidfuzz.process.cdist)."""
    if not keys:
        return []
    genitives = _genitives(spans, keys)
    wanted = [(span, normalize_name(span)) for span in spans]
    wanted = [(span, key) for span, key in wanted if allowed_edits(len(key))]
    if not wanted:
        return genitives
    import numpy as np  # here: a handler's cold start does without it until a recall needs it

    distances = process.cdist(
        [key for _, key in wanted], keys, scorer=OSA.distance, score_cutoff=2, dtype=np.int32
    )
    found: list[SimilarName] = []
    for row, col in zip(*np.nonzero(distances <= 2), strict=True):
        span, key = wanted[row]
        name, edits = keys[col], int(distances[row, col])
        if edits <= min(allowed_edits(len(key)), allowed_edits(len(name))):
            found.append(SimilarName(name, span, 1 - edits / max(len(key), len(name)), "spelling"))
    return found + genitives


def by_case(spans: Sequence[str], keys: Sequence[str], latin: bool) -> list[SimilarName]:
    """Entities named exactly by a span read as a case form (domain/inflections.py:
    "Ивана Петрова" finds Иван Петров, "Jana Nowaka" Jan Nowak); its words in Latin
    letters only when `latin` (the question is in a language that inflects names).
    Similarity 1 - the characters its endings change / its length."""
    asked = [(span, key, forms) for span in spans
             if (forms := name_forms(key := normalize_name(span), latin))]  # fmt: skip
    if not asked:
        return []
    held = set(keys)
    return [
        SimilarName(name, span, 1 - changed / max(len(key), len(name)), "case")
        for span, key, forms in asked
        for name, changed in forms
        if name in held
    ]


# A span shorter than this is no part of a name ("Mr", "St", "Dr" would find many).
PART_LEAST = 3


def _unambiguous(found: dict[str, list[SimilarName]]) -> dict[str, list[SimilarName]]:
    """The parts that found a name, less those many names share: such a part names none
    of them ("Project" of Project Basalt, Project Heron, ...; a common family name):
    more than SIMILAR_NAMES, and it finds nothing."""
    return {part: names for part, names in found.items() if 0 < len(names) <= SIMILAR_NAMES}


def _wanted_parts(
    spans: Sequence[str], words: Sequence[str], latin: bool = False
) -> dict[str, tuple[str, bool]]:
    """part -> (the span that asks for it, whether read less an ending): each span, and
    it or each word less a genitive "s", then each word read as a case form (`latin`:
    by_case)."""
    asked = [(span, normalize_name(span)) for span in spans]
    wanted: dict[str, tuple[str, bool]] = {}
    for span, key in asked:
        if len(key) >= PART_LEAST:
            wanted.setdefault(key, (span, False))
    asked += [(word, normalize_name(word)) for word in words]
    for span, key in asked:
        part = genitive(key)
        if part is not None and len(part) >= PART_LEAST:
            wanted.setdefault(part, (span, True))
    for span, key in asked[len(spans) :]:
        for part in base_forms(key, latin):
            wanted.setdefault(part, (span, True))
    return wanted


def by_part(
    spans: Sequence[str], keys: Sequence[str], words: Sequence[str] = (), latin: bool = False
) -> list[SimilarName]:
    """Entities (of `keys`) whose name's first or last words are a span (a whole run,
    name_runs: "Project" of "Project Cobalt" is no part of "Project Basalt"), or one of
    `words` less its genitive "s" (any capitalised word: German capitalises the noun
    after it, "Picards Schiff") or read as a case form ("Ивана" finds Иван Петров):
    one pass over the names, two C-level tests each."""
    wanted = _wanted_parts(spans, words, latin)
    if not wanted:
        return []
    starts = tuple(f"{key} " for key in wanted)
    ends = tuple(f" {key}" for key in wanted)
    found: dict[str, list[SimilarName]] = {key: [] for key in wanted}
    for name in keys:
        if not (name.startswith(starts) or name.endswith(ends)):
            continue
        length = name.count(" ") + 1
        for key, (span, _) in wanted.items():
            if name.startswith(f"{key} ") or name.endswith(f" {key}"):
                found[key].append(SimilarName(name, span, (key.count(" ") + 1) / length, "part"))
    kept = _unambiguous(found)
    # A span read as written comes before it read less an "s": "Mars" that is a part
    # of a name is no genitive of "Mar".
    plain = {wanted[k][0] for k in kept if not wanted[k][1]}
    return [m for k, v in kept.items() if not (wanted[k][1] and wanted[k][0] in plain) for m in v]


# Scripts without capitals: a part of a name is a run of 2-4 Han or Katakana characters
# of the question (they are written without spaces, so any run may be the name: "田中"
# in "田中さんはどこ"), or a Hangul word of 2 syllables or more, less its particles.
_HAN_KATAKANA = re.compile(
    "[\u3005\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\U00020000-\U0003134f]{2,}"
)
_HANGUL_WORD = re.compile("[\uac00-\ud7a3]{2,}")
UNSPACED_PART = (2, 4)
MAX_UNSPACED_PARTS = 200


def unspaced_parts(question: str) -> list[str]:
    """The question's runs that may be a given or family name in a script without
    capitals, in question order, distinct, at most MAX_UNSPACED_PARTS."""
    text = unicodedata.normalize("NFKC", question)
    found: dict[str, None] = {}
    least, most = UNSPACED_PART
    for m in _HAN_KATAKANA.finditer(text):
        run = m.group()
        for width in range(least, min(most, len(run)) + 1):
            found.update(dict.fromkeys(run[i : i + width] for i in range(len(run) - width + 1)))
    for m in _HANGUL_WORD.finditer(text):
        start, end = m.span()
        found[m.group()] = None
        found.update(dict.fromkeys(text[start:cut] for cut in name_ends(text, start, end)))
    return list(found)[:MAX_UNSPACED_PARTS]


def by_unspaced_part(parts: Sequence[str], keys: Sequence[str]) -> list[SimilarName]:
    """Entities (of `keys`) whose name begins or ends with a part: written as one word,
    without a space between given and family name ("田中太郎", "王小明", "김민수"), or
    with one ("田中 太郎"), the part then a whole word of it."""
    if not parts:
        return []
    wanted = tuple(parts)
    found: dict[str, list[SimilarName]] = {part: [] for part in parts}
    for name in keys:
        if not (name.startswith(wanted) or name.endswith(wanted)):
            continue
        spaced = " " in name
        for part in parts:
            if (
                name.startswith(f"{part} ") or name.endswith(f" {part}")
                if spaced
                else len(name) > len(part) and (name.startswith(part) or name.endswith(part))
            ):
                similarity = len(part) / len(name.replace(" ", ""))
                found[part].append(SimilarName(name, part, similarity, "part"))
    return [m for matches in _unambiguous(found).values() for m in matches]


def by_parts(
    question: str,
    spans: Sequence[str],
    parts: Sequence[str],
    keys: Sequence[str],
    latin: bool | None = None,
) -> list[SimilarName]:
    """The part signal: the question's whole runs, its one-word spans less a genitive
    "s" or read as case forms (Latin words when `latin`: latin_inflects of the
    question, read here unless given), and its `parts` in scripts without capitals
    (unspaced_parts)."""
    words = [span for span in spans if " " not in span]
    if latin is None:
        latin = latin_inflects(question)
    return by_part(name_runs(question), keys, words, latin) + by_unspaced_part(parts, keys)


def by_meaning(
    spans: Sequence[str],
    project: str,
    roles: Collection[Role],
    embedder: Embedder,
    index: VectorIndex,
    floor: float = SPAN_VECTOR_FLOOR,
) -> list[SimilarName]:
    """Entities whose name vectors reach `floor` (the model's) with a span's vector (one
    model call)."""
    found: list[SimilarName] = []
    vectors = embedder.embed(list(spans))
    for span, vector in zip(spans, vectors, strict=True):
        for hit in index.search(project, "entity", vector, SPAN_NEIGHBOURS, roles):
            if hit.score >= floor:
                # Entity vectors are kept per role: "<role>:<key>".
                found.append(SimilarName(hit.id.partition(":")[2], span, hit.score, "meaning"))
    return found


def best(matches: Sequence[SimilarName]) -> list[SimilarName]:
    """One match per entity (its most similar), most similar first, ties by key."""
    top: dict[str, SimilarName] = {}
    for m in matches:
        held = top.get(m.key)
        if held is None or (round(m.similarity, 6), m.signal) > (
            round(held.similarity, 6),
            held.signal,
        ):
            top[m.key] = m
    return sorted(top.values(), key=lambda m: (-round(m.similarity, 6), m.key, m.signal))


def similar_names(
    store: NameLookup,
    project: str,
    question: str,
    roles: Collection[Role],
    *,
    embedder: Embedder,
    index: VectorIndex,
    floor: float = SPAN_VECTOR_FLOOR,
) -> SimilarNames:
    """The entities (at most SIMILAR_NAMES, named by live facts of `roles`) the
    question's name-like spans are similar to, most similar first."""
    spans = name_like_spans(question)
    parts = unspaced_parts(question)
    if not spans and not parts:
        return SimilarNames([])
    keys = store.entity_keys(project, NAME_POOL)
    if not keys:
        # No entity name is held (a memory of messages only): no span can match one,
        # so neither the spans' model call nor the entity index search runs (the
        # same answer, and nothing lost, without the model's call).
        return SimilarNames([])
    latin = latin_inflects(question)
    matches = (
        by_spelling(spans, keys)
        + by_case(spans, keys, latin)
        + by_parts(question, spans, parts, keys, latin)
    )
    failed = False
    try:
        if spans:
            matches += by_meaning(spans, project, roles, embedder, index, floor)
    except Exception:  # a model or index failure degrades the recall, never fails it
        logger.exception("similar names by meaning failed during a recall")
        failed = True
    ordered = best(matches)
    # The store confirms each name for the asked roles, and resolves an alias (an
    # alias's vector) to its entity.
    live = store.resolve_names(project, [m.key for m in ordered], roles)
    chosen: list[SimilarName] = []
    seen: set[str] = set()
    for m in ordered:
        entity = live.get(m.key)
        if entity is not None and entity not in seen:
            seen.add(entity)
            chosen.append(SimilarName(entity, m.span, m.similarity, m.signal))
            if len(chosen) == SIMILAR_NAMES:
                break
    return SimilarNames(chosen, failed)
