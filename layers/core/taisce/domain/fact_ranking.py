"""Which facts of the matched entities bear on the question, and in what order.

The candidates are a bounded pool of the matched entities' facts (hop 1, and hop 2
when asked), all of which passed the recall's roles and filters. Each is scored
against the question by

- meaning: the cosine of the fact's statement vector with the question's, when the
  fact has one;
- words: BM25 (k1 1.2, b 0.75) of the question's words, less the matched names' own
  words, over the fact's subject, predicate, object, statement, quote and context,
  with document frequencies from the visible pool only; divided by the score a fact
  of average length holding each of those words once would get, and capped at 1, so
  it reads as "how much of what is asked this fact holds". It decides for a fact
  without a vector (not yet embedded by the worker, or no model configured);
- hop: a fact reached at hop 2 counts `HOP2` of its score.

score = cosine for a fact with a vector, else words; times the hop factor. On real
conversations the cosine alone chose better than any mix with words
(docs/quality.md; docs/API.md): a fact's statement is a short sentence that paraphrases what
it holds, so a question asked in other words ("employed" for "works at") still finds
it, and the words the two share add nothing the vector missed.

A fact is kept when its score reaches its floor (`FLOOR` for a cosine, `WORDS_FLOOR`
for words) and, with a model, is within `DROP` of the best one's; at most `MAX_FACTS`
are kept, best first (ties: hop, then storing order), because later steps (reports,
passages) need the budget. A fact of a matched entity that holds every asked word is
kept whatever its cosine, after those and within `MAX_FACTS` (`_worded`). `FLOOR` and
`DROP` are MiniLM's; another model brings its own (domain/floors.py). A model that
reads every language ranks a question that does not read as English without the
cosine floor (chosen on English questions), by `DROP` alone. A fact of a matched
entity that has no vector yet (stored a moment ago, the worker not yet by) is not
dropped for lack of one: after the kept facts come up to `MAX_FACTS` such facts, by
their words (read your writes). A matched entity that holds no more facts at hop 1
than `FEW_FACTS` has the rest of them come back after those, best score first
(`_few`): all that is known of it costs little of the budget. Without a model no
later step runs, so every fact over `NO_MODEL_FLOOR` comes back, then those few
facts. The pool, the scores and so the order never depend on the budget, so a
smaller budget returns a prefix.

Paths (hops 2 only). A question often asks through a link of the entity it names
("What is Sean's partner allergic to?", "whoever runs Project Halyard"): the answer is
a fact of the linked entity, and the question's cosine with it is low, since the
question names Sean and the fact Vera ("Vera is allergic to celery" 0.459 against
"Sean is allergic to kiwi fruit" 0.749 with the local model). So after the facts the
rule keeps, the links nearest the question come back, each followed by the facts of
its linked entity nearest the question with its names taken out ("What is someone's
partner allergic to?"), which compares what is asked, not who: the `PATH_LINKS`
linked entities whose best link fact scores highest, and for each that link fact
and `PATH_FACTS` of its facts (without a neutral cosine a fact's words score
stands in). Each is returned once, at its first place.

In step 4 facts also point at their messages (`cited_message_ranks`, `pointer_scores`):
the visible facts nearest the question rank the messages they cite, a third ranking
added to the passages' fused scores.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from .floors import MINILM_FLOORS, CosineFloors
from .model import Fact, FactPointer
from .words import words

K1 = 1.2
B = 0.75
# Share of its score a fact reached at hop 2 keeps.
HOP2 = 0.9
# The cosine a fact's statement vector must reach with the question's: the model's
# (domain/floors.py), MiniLM's by default.
FLOOR = MINILM_FLOORS.fact
# The words score a fact without a vector must reach, when a model is configured.
WORDS_FLOOR = 0.7
# At most this many facts are kept when a model is configured (later steps use the
# budget). Without one only step 1 runs: no cap, and this words floor.
MAX_FACTS = 3
# With a model, a fact whose score is more than this below the best kept one is left out
# (the model's, MiniLM's by default).
DROP = MINILM_FLOORS.drop
NO_MODEL_FLOOR = 0.1
# A matched entity holding at most MAX_FACTS facts (hop 1, of the recall's roles) has
# them all come back, after the facts the rule keeps: they are all that is known of
# what the question names, and no more than the rule would keep. A new user's "What
# should I cook for Alice?" gets "Alice is allergic to peanuts" (cosine 0.54 with the
# local model, under the floor), where an entity of hundreds of facts keeps the floor.
FEW_FACTS = MAX_FACTS
# Paths (hops 2, with a model): the linked entities followed, and the facts of each
# returned after its link.
PATH_LINKS = 3
PATH_FACTS = 1
# What a name of the question becomes in the name-neutral question.
STAND_IN = "someone"

# Facts also point at their messages in step 4: the facts of the project nearest the
# question (any entity, the recall's roles and filters), this many, rank the messages
# they cite (each message at its first fact), and a passage of a message at rank r
# adds POINTER_WEIGHT / (RRF_K + r) to its fused score. A fact's statement says in a
# short sentence what its message holds, so it finds the message when the question
# asks in other words than the message's own.
POINTER_DEPTH = 200
POINTER_WEIGHT = 0.35


# Words that ask without saying what about.
_ASKING = frozenset(
    words("tell know remember recall anything everything something thing things stuff")
)


def asked_words(question: str, names: Iterable[str]) -> list[str]:
    """The question's words that say what it asks: not the matched names' words, not
    words that ask without saying what about."""
    name_words = {w for name in names for w in words(name)}
    return [w for w in words(question) if w not in name_words and w not in _ASKING]


@dataclass(frozen=True, slots=True)
class Candidate:
    fact: Fact
    hop: int
    # Names walked from the matched one to a hop-2 fact (empty at hop 1).
    path: tuple[str, ...]
    # The matched entity's key the fact was reached through.
    matched: str
    # At hop 2, the key of the linked entity whose fact it is.
    linked: str | None = None


@dataclass(frozen=True, slots=True)
class Scored:
    candidate: Candidate
    words: float
    similarity: float | None
    score: float
    # Kept on a path (see the module): the link, or a fact of the linked entity with
    # its cosine with the name-neutral question (None: words stood in).
    path: bool = False
    neutral: float | None = None
    # Came back as one of the few facts of its entity (FEW_FACTS), not by its score.
    few: bool = False


def fact_text(fact: Fact) -> str:
    """What the words of a fact are drawn from."""
    return " ".join(
        t
        for t in (
            fact.subject,
            fact.predicate,
            fact.object,
            fact.statement,
            fact.quote,
            fact.context,
        )
        if t
    )


def word_scores(question: Sequence[str], documents: Sequence[Sequence[str]]) -> list[float]:
    """BM25 of each document for the question's words, over these documents only,
    divided by what an average-length document holding each matched word once scores
    (at most 1; 0 when no question word occurs in any document)."""
    n = len(documents)
    terms = list(dict.fromkeys(question))
    if not n or not terms:
        return [0.0] * n
    # Only the asked words' counts matter: list.count per asked word is cheaper than
    # counting every word of every document.
    counts = [{t: c for t in terms if (c := d.count(t))} for d in documents]
    lengths = [len(d) for d in documents]
    average = sum(lengths) / n or 1.0
    df = {t: sum(1 for c in counts if t in c) for t in terms}
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms if df[t]}
    ideal = sum(idf.values())
    if ideal <= 0:
        return [0.0] * n
    scores: list[float] = []
    for found, length in zip(counts, lengths, strict=True):
        norm = K1 * (1 - B + B * length / average)
        s = 0.0
        for t, weight in idf.items():
            tf = found.get(t, 0)
            if tf:
                s += weight * tf * (K1 + 1) / (tf + norm)
        scores.append(min(1.0, s / ideal))
    return scores


def rank_facts(
    question: str,
    candidates: Sequence[Candidate],
    similarities: Mapping[str, float] | None,
    names: Collection[str] = (),
    *,
    model: bool | None = None,
    neutral: Mapping[str, float] | None = None,
    explain: bool = True,
    readable: bool = True,
    floors: CosineFloors = MINILM_FLOORS,
    floored: bool = True,
) -> list[Scored]:
    """The candidates that bear on the question, best first (see the module's rule).
    `similarities` maps fact ids to their cosine with the question (None: no model, or
    it failed); `names` are the matched entities' names, whose words do not count as
    asked; `model` says whether one is configured, so later steps will use the budget
    (default: whether `similarities` were given). `neutral` maps hop-2 facts' ids to
    their cosine with the name-neutral question (`neutral_question`); given, the
    paths follow the facts kept. Without `explain`, the words scores are computed only
    where they decide (then `Scored.words` is 0 where they were not). `readable` False:
    the model cannot read the question's language (domain/languages.py), so no cosine
    and no floor decides (`_unread`). `floors` are the model's (`fact` and `drop`).
    `floored` False: a model that reads every language ranks a question that does not
    read as English, and the cosine floor, chosen on English questions, does not hold
    (a model's cosines sit lower in some languages than in others: e5 puts "Was
    kommandiert Picard?" at 0.83 with "Picard commands the USS Enterprise", "Que
    commande Picard ?" at 0.87): the best fact and those within `drop` of it come back."""
    asked = asked_words(question, names)
    if not asked:
        # The question asks about the entities as a whole ("Tell me about Atlas"): every
        # candidate bears on it, hop 1 first, each hop in storing order.
        return [
            Scored(c, 1.0, None, 1.0)
            for c in sorted(candidates, key=lambda c: c.hop)  # stable: storing order
        ]
    if not readable:
        return _unread(asked, candidates, similarities)
    if model is None:
        model = similarities is not None
    if explain or _words_decide(candidates, similarities, neutral):
        lexical = word_scores(asked, [words(fact_text(c.fact)) for c in candidates])
    else:
        # Every candidate has a cosine (and each hop-2 one a neutral cosine): words
        # would change nothing, so they are not computed.
        lexical = [0.0] * len(candidates)
    every, kept = _scored(
        candidates, lexical, similarities, model, floors.fact if floored else -1.0
    )
    if not model:
        return kept + _few(every, {s.candidate.fact.id for s in kept})
    if kept:
        # A fact well below the best says less than the passages the budget would hold.
        kept = [s for s in kept if s.score >= kept[0].score - floors.drop][:MAX_FACTS]
    kept += _worded(every, asked, {s.candidate.fact.id for s in kept}, MAX_FACTS - len(kept))
    kept += _not_embedded(every, similarities, {s.candidate.fact.id for s in kept})
    kept += _few(every, {s.candidate.fact.id for s in kept})
    if neutral is None:
        return kept
    return kept + _paths(every, neutral, {s.candidate.fact.id for s in kept})


def _scored(
    candidates: Sequence[Candidate],
    lexical: Sequence[float],
    similarities: Mapping[str, float] | None,
    model: bool,
    cosine_floor: float = FLOOR,
) -> tuple[list[Scored], list[Scored]]:
    """Every candidate scored (in the candidates' order), and those that reach their
    floor, best first (then hop 1 first, then the candidates' order)."""
    every: list[Scored] = []
    scored: list[tuple[float, int, int, Scored]] = []
    for position, (candidate, w) in enumerate(zip(candidates, lexical, strict=True)):
        sim = similarities.get(candidate.fact.id) if similarities is not None else None
        base = w if sim is None else sim
        floor = cosine_floor if sim is not None else WORDS_FLOOR if model else NO_MODEL_FLOOR
        score = base * (HOP2 if candidate.hop > 1 else 1.0)
        every.append(Scored(candidate, w, sim, score))
        if score >= floor:
            scored.append((-score, candidate.hop, position, every[-1]))
    scored.sort(key=lambda s: s[:3])
    return every, [s[3] for s in scored]


def _unread(
    asked: Sequence[str],
    candidates: Sequence[Candidate],
    similarities: Mapping[str, float] | None,
) -> list[Scored]:
    """A question in a language the model does not read: its cosines say nothing (the
    English model puts other facts of the entity above the one asked about), and its
    words rarely meet the facts', so no floor holds. Every fact of the matched entities
    (hop 1) comes back, as for a question about them as a whole, those that share a
    word with the question first ("commande", "command"), then in storing order."""
    hop1 = [c for c in candidates if c.hop == 1]
    lexical = word_scores(asked, [words(fact_text(c.fact)) for c in hop1])
    order = sorted(range(len(hop1)), key=lambda i: -lexical[i])  # stable: storing order
    sims = similarities or {}
    return [Scored(hop1[i], lexical[i], sims.get(hop1[i].fact.id), lexical[i]) for i in order]


def _worded(
    every: Sequence[Scored], asked: Sequence[str], kept: set[str], room: int
) -> list[Scored]:
    """Facts of a matched entity (hop 1) that hold every word the question asks but
    whose cosine missed the floor or the drop ("What does Atlas prefer?" and "Atlas
    prefers email to calls", 0.58 with the local model): the model weighs the rest
    of the sentence, but nothing asked is missing from such a fact. After the kept
    facts, best cosine first, up to `MAX_FACTS` in all."""
    if room <= 0:
        return []
    wanted = set(asked)
    found = [
        (-(s.similarity or 0.0), position, s)
        for position, s in enumerate(every)
        if s.candidate.hop == 1
        and s.similarity is not None
        and s.candidate.fact.id not in kept
        and wanted <= set(words(fact_text(s.candidate.fact)))
    ]
    found.sort(key=lambda f: f[:2])
    return [f[2] for f in found[:room]]


def _not_embedded(
    every: Sequence[Scored], similarities: Mapping[str, float] | None, kept: set[str]
) -> list[Scored]:
    """Facts of a matched entity (hop 1) the model has not embedded yet (the worker is
    behind, or the model is across the network): not dropped for lack of a vector.
    After the kept facts, best words first (then storing order), at most `MAX_FACTS`.
    None when the model failed for the whole recall: words then rank every fact, and
    their floor holds."""
    if similarities is None:
        return []
    waiting = [
        (-s.words, position, s)
        for position, s in enumerate(every)
        if s.candidate.hop == 1 and s.similarity is None and s.candidate.fact.id not in kept
    ]
    waiting.sort(key=lambda w: w[:2])
    return [w[2] for w in waiting[:MAX_FACTS]]


def _few(every: Sequence[Scored], kept: set[str]) -> list[Scored]:
    """The hop-1 facts not in `kept` of each matched entity that holds at most
    `FEW_FACTS` of them, best score first (then the candidates' order)."""
    held: dict[str, int] = {}
    for s in every:
        if s.candidate.hop == 1:
            held[s.candidate.matched] = held.get(s.candidate.matched, 0) + 1
    few = [
        (-s.score, position, s)
        for position, s in enumerate(every)
        if s.candidate.hop == 1
        and held[s.candidate.matched] <= FEW_FACTS
        and s.candidate.fact.id not in kept
    ]
    few.sort(key=lambda f: f[:2])
    return [replace(f[2], few=True) for f in few]


def _words_decide(
    candidates: Sequence[Candidate],
    similarities: Mapping[str, float] | None,
    neutral: Mapping[str, float] | None,
) -> bool:
    """Whether the words scores rank some candidate: one without a cosine, or on a path
    without a neutral cosine."""
    if similarities is None:
        return True
    for c in candidates:
        fact_id = c.fact.id
        if fact_id not in similarities:
            return True
        if neutral is not None and c.hop == 2 and fact_id not in neutral:
            return True
    return False


def _paths(every: Sequence[Scored], neutral: Mapping[str, float], kept: set[str]) -> list[Scored]:
    """The links nearest the question, each followed by its linked entity's facts
    nearest the name-neutral question (the module's "Paths"), leaving out `kept`."""
    at_hop2: dict[str, list[tuple[int, Scored]]] = {}
    for position, s in enumerate(every):
        if s.candidate.hop == 2 and s.candidate.linked is not None:
            at_hop2.setdefault(s.candidate.linked, []).append((position, s))
    if not at_hop2:
        return []
    matched = {s.candidate.matched for s in every}
    best_link: dict[str, tuple[float, int, Scored]] = {}
    for position, s in enumerate(every):
        fact = s.candidate.fact
        if s.candidate.hop != 1 or not fact.object_key:
            continue
        other = fact.object_key if fact.subject_key in matched else fact.subject_key
        if other in matched or other not in at_hop2:
            continue
        if other not in best_link or s.score > best_link[other][0]:
            best_link[other] = (s.score, position, s)
    links = sorted(best_link.items(), key=lambda item: (-item[1][0], item[1][1]))

    def nearest(entry: tuple[int, Scored]) -> tuple[float, int]:
        position, s = entry
        return (-neutral.get(s.candidate.fact.id, s.words), position)

    paths: list[Scored] = []
    taken = set(kept)
    for linked, (_, _, link) in links[:PATH_LINKS]:
        facts = [s for _, s in sorted(at_hop2[linked], key=nearest)[:PATH_FACTS]]
        for s in (link, *facts):
            fact_id = s.candidate.fact.id
            if fact_id in taken:
                continue
            taken.add(fact_id)
            value = neutral.get(fact_id) if s is not link else None
            paths.append(Scored(s.candidate, s.words, s.similarity, s.score, True, value))
    return paths


def neutral_question(question: str, names: Iterable[str]) -> str:
    """The question with each of these names (as a whole word or words, any case)
    replaced by `STAND_IN`: what it asks, not about whom."""
    spelled = sorted({n for n in names if n.strip()}, key=len, reverse=True)
    if not spelled:
        return question
    pattern = "|".join(re.escape(n) for n in spelled)
    return re.sub(rf"(?<!\w)(?:{pattern})(?!\w)", STAND_IN, question, flags=re.IGNORECASE)


def cited_message_ranks(facts: Iterable[Fact | FactPointer]) -> dict[str, int]:
    """Each message these facts cite (nearest the question first), ranked from 1 by the
    first fact citing it."""
    ranks: dict[str, int] = {}
    for fact in facts:
        if fact.message_id and fact.message_id not in ranks:
            ranks[fact.message_id] = len(ranks) + 1
    return ranks


def pointer_scores(
    passage_ids: Iterable[str], ranks: Mapping[str, int], k: float
) -> dict[str, float]:
    """What the facts' pointers add to these passages' fused scores (only passages of
    a cited message get anything). A passage's id is its message's id, "#", its
    number (domain/ingest.py)."""
    added: dict[str, float] = {}
    for pid in passage_ids:
        rank = ranks.get(pid.rpartition("#")[0])
        if rank is not None:
            added[pid] = POINTER_WEIGHT / (k + rank)
    return added
