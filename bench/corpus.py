"""The synthetic memory of the speed benchmarks (bench/recall_bench.py, load_bench.py,
secure_delete_bench.py) and of a few tests: a graph of facts about people,
organisations, places and projects (most entities have a handful of facts, a few hubs
have many), messages that mention them, and questions naming one or two known
entities; the same seed gives the same memory."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from taisce.domain.names import normalize_name

FIRST_NAMES = (
    "Aoife", "Ben", "Chiara", "Dara", "Elif", "Femi", "Grace", "Hiro", "Ines", "Jonas",
    "Kavya", "Liam", "Maya", "Niamh", "Oscar", "Priya", "Quinn", "Rosa", "Sean", "Tomas",
    "Uma", "Vera", "Wei", "Ximena", "Yusuf", "Zara", "Amir", "Brigid", "Carlos", "Dmitri",
    "Eva", "Farah", "Goran", "Hana", "Ivan", "Jia", "Kofi", "Lena", "Mateo", "Nora",
    "Orla", "Pavel", "Rania", "Sofia", "Tariq", "Ulla", "Viktor", "Wanjiru", "Yara", "Zeno",
)  # fmt: skip
ORG_FORMS = (
    "{} Labs", "{} Systems", "{} Health", "{} Capital", "{} Foods", "{} Logistics",
    "{} Energy", "{} Studio", "{} Partners", "{} Group", "{} Robotics", "{} Bank",
)  # fmt: skip
PLACE_FORMS = ("{}", "{}", "Port {}", "{} Bay", "{} Springs", "New {}", "{}ford")
PROJECT_FORMS = ("Project {}", "{} Platform", "{} Migration", "Operation {}")
_ONSETS = ("b", "br", "c", "d", "dr", "f", "g", "gl", "k", "l", "m", "n", "p", "r", "s", "st",
           "t", "tr", "v", "z")  # fmt: skip
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "ou")
_CODAS = ("", "", "", "n", "r", "l", "s", "m", "th")

TITLES = ("staff engineer", "product manager", "head of sales", "designer", "data analyst",
          "chief financial officer", "support lead", "researcher", "recruiter")  # fmt: skip
PREFERENCES = ("email over calls", "morning meetings", "tea", "short written updates",
               "async reviews", "video calls", "working from home on Fridays")  # fmt: skip
STATUSES = ("on track", "at risk", "paused", "in review", "shipped", "blocked on legal")
TIME_ZONES = ("UTC", "UTC+1", "UTC-5", "UTC+8", "UTC+5:30", "UTC-8")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip

# (subject kind, predicate, object kind, or a function making a value, weight).
# About two thirds of facts link two entities, a third have a value object.
Value = Callable[[random.Random], str]
TEMPLATES: tuple[tuple[str, str, str | Value, int], ...] = (
    ("person", "works at", "org", 12),
    ("person", "lives in", "place", 8),
    ("person", "knows", "person", 10),
    ("person", "reports to", "person", 5),
    ("person", "works on", "project", 8),
    ("org", "is based in", "place", 5),
    ("org", "partners with", "org", 4),
    ("project", "is run by", "org", 4),
    ("project", "ships from", "place", 2),
    ("person", "has the title", lambda r: r.choice(TITLES), 6),
    ("person", "prefers", lambda r: r.choice(PREFERENCES), 6),
    ("person", "was born in", lambda r: str(r.randint(1950, 2004)), 3),
    ("org", "was founded in", lambda r: str(r.randint(1890, 2024)), 3),
    ("org", "has a headcount of", lambda r: str(r.randint(3, 90_000)), 2),
    ("place", "is in the time zone", lambda r: r.choice(TIME_ZONES), 2),
    ("project", "has status", lambda r: r.choice(STATUSES), 4),
    ("project", "is due in", lambda r: f"{r.choice(MONTHS)} {r.randint(2025, 2028)}", 3),
)
KIND_SHARES = (("person", 0.50), ("org", 0.20), ("place", 0.15), ("project", 0.15))
FACTS_PER_ENTITY = 4  # entities = facts / 4, so an entity is in ~6.5 facts on average
HUB_SHARE = 0.3  # this share of picks follows a Zipf popularity: that makes the hubs
ZIPF_EXPONENT = 1.0
ROLE_WEIGHTS = (("user", 45), ("assistant", 25), ("tool", 25), ("system", 5))

ONE_NAME = (
    "What do we know about {a}?",
    "Remind me who {a} is.",
    "Any news on {a} this week?",
    "Tell me about {a}.",
)
TWO_NAMES = (
    "How are {a} and {b} connected?",
    "Did {a} meet {b} last month?",
    "What links {a} with {b}?",
)


def _word(rng: random.Random) -> str:
    syllables = rng.choice((2, 2, 3))
    return "".join(
        rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables)
    ).capitalize()


def _reserved_words() -> set[str]:
    """Words of the question templates: no entity may be named like one of them."""
    words: set[str] = set()
    for text in ONE_NAME + TWO_NAMES:
        words.update(normalize_name(text.replace("{a}", "").replace("{b}", "")).split())
    return {w.strip("?.") for w in words}


@dataclass
class Corpus:
    names: dict[str, list[str]]
    facts: list[dict[str, Any]]
    degree: Counter[str]
    messages: list[dict[str, Any]] = field(default_factory=list)

    def known(self) -> list[str]:
        """Entities that some fact names, in a stable order."""
        return [n for kind in self.names.values() for n in kind if self.degree[normalize_name(n)]]


def _make_names(rng: random.Random, count: int) -> dict[str, list[str]]:
    reserved = _reserved_words()
    taken: set[str] = set()
    names: dict[str, list[str]] = {}
    for kind, share in KIND_SHARES:
        wanted = max(4, round(count * share))
        made: list[str] = []
        while len(made) < wanted:
            if kind == "person":
                name = f"{rng.choice(FIRST_NAMES)} {_word(rng)}"
            else:
                forms = {"org": ORG_FORMS, "place": PLACE_FORMS, "project": PROJECT_FORMS}[kind]
                name = rng.choice(forms).format(_word(rng))
            key = normalize_name(name)
            if key in taken or key in reserved:
                continue
            taken.add(key)
            made.append(name)
        names[kind] = made
    return names


class _Picker:
    """Picks an entity of one kind: uniformly, or (HUB_SHARE of the time) by a Zipf
    popularity, so most entities have a handful of facts and a few hubs have many."""

    def __init__(self, rng: random.Random, names: list[str]) -> None:
        self.rng = rng
        self.names = names
        by_popularity = names[:]
        rng.shuffle(by_popularity)
        self.popular = by_popularity
        total = 0.0
        self.cumulative: list[float] = []
        for rank in range(len(names)):
            total += 1.0 / (rank + 1) ** ZIPF_EXPONENT
            self.cumulative.append(total)

    def pick(self) -> str:
        if self.rng.random() < HUB_SHARE:
            return self.rng.choices(self.popular, cum_weights=self.cumulative)[0]
        return self.rng.choice(self.names)


def make_corpus(n_facts: int, n_messages: int, seed: int) -> Corpus:
    rng = random.Random(seed)
    names = _make_names(rng, max(40, n_facts // FACTS_PER_ENTITY))
    pickers = {kind: _Picker(rng, kind_names) for kind, kind_names in names.items()}
    templates = [t[:3] for t in TEMPLATES]
    template_weights = [t[3] for t in TEMPLATES]
    roles = [r for r, _ in ROLE_WEIGHTS]
    role_weights = [w for _, w in ROLE_WEIGHTS]
    facts: list[dict[str, Any]] = []
    degree: Counter[str] = Counter()
    while len(facts) < n_facts:
        subject_kind, predicate, obj = rng.choices(templates, template_weights)[0]
        subject = pickers[subject_kind].pick()
        fact: dict[str, Any] = {"subject": subject, "predicate": predicate}
        if isinstance(obj, str):
            fact["object"] = pickers[obj].pick()
            if normalize_name(fact["object"]) == normalize_name(subject):
                continue
        else:
            fact["object"] = obj(rng)
            fact["object_kind"] = "value"
        fact["source_role"] = rng.choices(roles, role_weights)[0]
        if rng.random() < 0.15:
            fact["context"] = f"since {rng.randint(2015, 2026)}"
        if rng.random() < 0.10:
            fact["quote"] = f"{subject} {predicate} {fact['object']}, as far as I know"
        facts.append(fact)
        degree[normalize_name(subject)] += 1
        if isinstance(obj, str):
            degree[normalize_name(fact["object"])] += 1
    corpus = Corpus(names=names, facts=facts, degree=degree)
    corpus.messages = _make_messages(rng, names, n_messages)
    return corpus


def _make_messages(
    rng: random.Random, names: dict[str, list[str]], count: int
) -> list[dict[str, Any]]:
    people, orgs, places, projects = (names[k] for k in ("person", "org", "place", "project"))
    sentences: tuple[Callable[[], str], ...] = (
        lambda: f"Met {rng.choice(people)} from {rng.choice(orgs)} yesterday.",
        lambda: (
            f"{rng.choice(people)} said the {rng.choice(projects)} deadline moved to "
            f"{rng.choice(MONTHS)}."
        ),
        lambda: f"We should check with {rng.choice(people)} before Friday.",
        lambda: f"The office in {rng.choice(places)} closes early on holidays.",
        lambda: f"{rng.choice(orgs)} signed the contract with {rng.choice(orgs)}!",
        lambda: f"Is {rng.choice(people)} still the contact for {rng.choice(orgs)}?",
        lambda: "Nothing else came up.",
        lambda: "Follow up next week with the numbers.",
        lambda: f"{rng.choice(people)} prefers {rng.choice(PREFERENCES)}.",
    )
    messages: list[dict[str, Any]] = []
    for n in range(count):
        document = rng.random() < 0.1
        length = rng.randint(15, 40) if document else rng.randint(2, 6)
        text = " ".join(rng.choice(sentences)() for _ in range(length))
        if document:
            message = {"role": "tool", "source": f"docs/{_word(rng).lower()}.md"}
        else:
            message = {"role": ("user", "assistant")[n % 2], "source": f"chat:{n // 20}"}
        message["content"] = text
        messages.append(message)
    return messages


def make_questions(rng: random.Random, known: Sequence[str], count: int) -> list[str]:
    questions: list[str] = []
    for _ in range(count):
        if rng.random() < 0.5 or len(known) < 2:
            questions.append(rng.choice(ONE_NAME).format(a=rng.choice(known)))
        else:
            a, b = rng.sample(known, 2)
            questions.append(rng.choice(TWO_NAMES).format(a=a, b=b))
    return questions
