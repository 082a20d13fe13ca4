"""The same facts asked about in seven languages: does the fact asked about come back?

    .venv/bin/python -m bench.languages_bench [--models local,multilingual] [--budget 1000]

The facts are the synthetic graph's (`bench/data/dev.json`, the conversations that carry
facts, each in a project of its own); each distinct subject and predicate is asked about
in English, French, German, Spanish, Japanese, Korean and Polish, from question
templates written for this bench (one per predicate and language, the subject's name put
in as stored). Every question names its entity exactly, but the Polish questions about
a manager, a birthday or a partner, which write the name in the genitive ("Kto jest
przełożonym Ady?"), as Polish does. For each model (TAISCE_EMBEDDINGS) the facts
are stored through the local gateway, the worker settles, and each question is recalled
(facts only, `--budget` characters). Per language it prints the share of questions whose
first fact has the predicate asked about, the share with such a fact anywhere in the
bundle, and the mean facts returned (fewer is better when the first is right: the rest
of the budget goes to passages). Prints figures and asserts none.
"""

# Japanese questions end with the full-width question mark, as Japanese is written.
# ruff: noqa: RUF001

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from taisce.evaluation.harness import embedded_run, gateway_run
from taisce.evaluation.machine import describe_machine

DATA = Path(__file__).parent / "data" / "dev.json"
LANGUAGES = ("en", "fr", "de", "es", "ja", "ko", "pl")

# The Polish genitive of each name asked about in the genitive ({g}), as Polish writes
# it (written by hand, irregular forms too: Pavel is "Pavla", Hugo "Hugona"; names
# Polish does not decline stay as they are).
POLISH_GENITIVE = {
    "Ada": "Ady", "Carlos": "Carlosa", "Cleo": "Cleo", "Desmond": "Desmonda",
    "Esme": "Esme", "Goran": "Gorana", "Grace": "Grace", "Hana": "Hany", "Hugo": "Hugona",
    "Jasper": "Jaspera", "Keiko": "Keiko", "Liam": "Liama", "Lorcan": "Lorcana",
    "Mira": "Miry", "Orla": "Orli", "Pavel": "Pavla", "Priya": "Priyi", "Rosa": "Rosy",
    "Sean": "Seana", "Tomas": "Tomasa", "Ulla": "Ulli", "Viktor": "Viktora",
    "Wanjiru": "Wanjiru", "Yara": "Yary", "Zara": "Zary",
}  # fmt: skip

# predicate -> one question per language; {s} is the subject's name, {g} its Polish
# genitive.
TEMPLATES: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "lives in": (
        "Where does {s} live?",
        "Où habite {s} ?",
        "Wo wohnt {s}?",
        "¿Dónde vive {s}?",
        "{s}はどこに住んでいますか？",
        "{s}는 어디에 살아요?",
        "Gdzie mieszka {s}?",
    ),
    "works at": (
        "Where does {s} work?",
        "Où travaille {s} ?",
        "Wo arbeitet {s}?",
        "¿Dónde trabaja {s}?",
        "{s}はどこで働いていますか？",
        "{s}는 어디에서 일해요?",
        "Gdzie pracuje {s}?",
    ),
    "drives": (
        "What car does {s} drive?",
        "Quelle voiture conduit {s} ?",
        "Welches Auto fährt {s}?",
        "¿Qué coche conduce {s}?",
        "{s}はどんな車を運転していますか？",
        "{s}는 어떤 차를 운전해요?",
        "Jakim samochodem jeździ {s}?",
    ),
    "is allergic to": (
        "What is {s} allergic to?",
        "À quoi {s} est-il allergique ?",
        "Wogegen ist {s} allergisch?",
        "¿A qué es alérgico {s}?",
        "{s}は何にアレルギーがありますか？",
        "{s}는 무엇에 알레르기가 있어요?",
        "Na co {s} ma alergię?",
    ),
    "has a pet": (
        "What pet does {s} have?",
        "Quel animal de compagnie a {s} ?",
        "Welches Haustier hat {s}?",
        "¿Qué mascota tiene {s}?",
        "{s}はどんなペットを飼っていますか？",
        "{s}는 어떤 반려동물을 키워요?",
        "Jakie zwierzę ma {s}?",
    ),
    "leads": (
        "Which project does {s} lead?",
        "Quel projet dirige {s} ?",
        "Welches Projekt leitet {s}?",
        "¿Qué proyecto dirige {s}?",
        "{s}はどのプロジェクトを率いていますか？",
        "{s}는 어떤 프로젝트를 이끌어요?",
        "Jakim projektem kieruje {s}?",
    ),
    "reports to": (
        "Who is {s}'s manager?",
        "Qui est le supérieur de {s} ?",
        "Wer ist die Vorgesetzte von {s}?",
        "¿Quién es el jefe de {s}?",
        "{s}の上司は誰ですか？",
        "{s}의 상사는 누구예요?",
        "Kto jest przełożonym {g}?",
    ),
    "has a birthday on": (
        "When is {s}'s birthday?",
        "Quand est l'anniversaire de {s} ?",
        "Wann hat {s} Geburtstag?",
        "¿Cuándo es el cumpleaños de {s}?",
        "{s}の誕生日はいつですか？",
        "{s}의 생일은 언제예요?",
        "Kiedy są urodziny {g}?",
    ),
    "plays": (
        "Which sport does {s} play?",
        "Quel sport pratique {s} ?",
        "Welchen Sport treibt {s}?",
        "¿Qué deporte practica {s}?",
        "{s}はどんなスポーツをしていますか？",
        "{s}는 어떤 운동을 해요?",
        "Jaki sport uprawia {s}?",
    ),
    "is the partner of": (
        "Who is {s}'s partner?",
        "Qui est le conjoint de {s} ?",
        "Wer ist der Partner von {s}?",
        "¿Quién es la pareja de {s}?",
        "{s}のパートナーは誰ですか？",
        "{s}의 파트너는 누구예요?",
        "Kto jest partnerem {g}?",
    ),
    "is studying": (
        "Which language is {s} studying?",
        "Quelle langue étudie {s} ?",
        "Welche Sprache lernt {s}?",
        "¿Qué idioma estudia {s}?",
        "{s}は何語を勉強していますか？",
        "{s}는 어떤 언어를 공부해요?",
        "Jakiego języka uczy się {s}?",
    ),
    "is learning to play": (
        "Which instrument is {s} learning?",
        "De quel instrument {s} apprend-il à jouer ?",
        "Welches Instrument lernt {s}?",
        "¿Qué instrumento está aprendiendo {s}?",
        "{s}はどの楽器を習っていますか？",
        "{s}는 어떤 악기를 배우고 있어요?",
        "Na jakim instrumencie uczy się grać {s}?",
    ),
}


def _asked(template: str, subject: str) -> str:
    return template.format(s=subject, g=POLISH_GENITIVE[subject] if "{g}" in template else "")


def questions(facts: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    """(language, question, subject, predicate) for each distinct subject and predicate."""
    asked = dict.fromkeys((f["subject"], f["predicate"]) for f in facts)
    return [
        (language, _asked(TEMPLATES[p][i], s), s, p)
        for s, p in asked
        if p in TEMPLATES
        for i, language in enumerate(LANGUAGES)
    ]


def run(model: str, conversations: list[dict[str, Any]], budget: int) -> dict[str, list[float]]:
    """Per language: [first right, found, facts returned] summed over its questions, and
    the count."""
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    with embedded_run("taisce-languages-", model, budget):
        _, session = gateway_run()
        for conversation in conversations:
            facts = conversation["facts"]
            client = session.client(f"languages-{conversation['id']}")
            status, body, _ = client.post("/v1/facts", {"facts": facts})
            assert status == 201, body
            session.settle()
            for language, question, subject, predicate in questions(facts):
                payload = {"question": question, "surfaces": ["facts"], "max_characters": budget}
                status, answer, _ = client.post("/v1/recalls", payload)
                assert status == 200, answer
                got = [(f["subject"], f["predicate"]) for f in answer["facts"]]
                t = totals[language]
                t[0] += bool(got) and got[0] == (subject, predicate)
                t[1] += (subject, predicate) in got
                t[2] += len(got)
                t[3] += 1
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="local,multilingual")
    parser.add_argument("--budget", type=int, default=1000)
    args = parser.parse_args(argv)
    conversations = [c for c in json.loads(DATA.read_text())["conversations"] if c.get("facts")]
    count = len(questions([f for c in conversations for f in c["facts"]]))
    print(f"date: {datetime.now(UTC).isoformat(timespec='seconds')}")
    print(f"machine: {describe_machine()}")
    print(
        f"data: {DATA.name}, {len(conversations)} conversations with facts, "
        f"{count} questions ({count // len(LANGUAGES)} in each of {', '.join(LANGUAGES)}); "
        f"facts only, max_characters {args.budget}"
    )
    print()
    print("first fact asked about / asked-about fact anywhere / mean facts returned")
    print()
    print("| model | " + " | ".join(LANGUAGES) + " |")
    print("|---|" + "---:|" * len(LANGUAGES))
    for model in args.models.split(","):
        totals = run(model, conversations, args.budget)
        cells = []
        for language in LANGUAGES:
            first, found, returned, n = totals[language]
            cells.append(f"{first / n:.1%} / {found / n:.1%} / {returned / n:.1f}")
        print(f"| {model} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
