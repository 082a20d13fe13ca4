# ruff: noqa: RUF001 - questions in Cyrillic and Greek
"""Facts and questions in several languages, for the recall tests over HTTP: each
question names an entity exactly and asks about one of its facts (in Korean, Hebrew
and Arabic with a particle or prefix written joined to the name), or, in languages that
inflect names, names one in a case form."""

from __future__ import annotations

from typing import Any

FACTS: list[dict[str, Any]] = [
    {"subject": "Jean-Luc Picard", "predicate": "commands", "object": "the USS Enterprise"},
    {"subject": "Jean-Luc Picard", "predicate": "drinks", "object": "Earl Grey tea"},
    {"subject": "Jean-Luc Picard", "predicate": "was born in", "object": "La Barre"},
    {"subject": "Jean-Luc Picard", "predicate": "plays", "object": "the flute"},
    {"subject": "Jean-Luc Picard", "predicate": "studied", "object": "archaeology"},
    {"subject": "Siobhán Ní Bhriain", "predicate": "lives in", "object": "Galway"},
    {"subject": "Siobhán Ní Bhriain", "predicate": "works at", "object": "a bakery"},
    {"subject": "Siobhán Ní Bhriain", "predicate": "speaks", "object": "Irish"},
    {"subject": "田中", "predicate": "lives in", "object": "大阪"},
    {"subject": "田中", "predicate": "works at", "object": "Sony"},
    {"subject": "สมชาย", "predicate": "lives in", "object": "Chiang Mai"},
    # Words written joined to the name: Korean particles, Hebrew and Arabic prefixes.
    {"subject": "김민수", "predicate": "works at", "object": "Samsung"},
    {"subject": "Dani Cohen", "predicate": "lives in", "object": "חיפה"},
    {"subject": "Ali Hassan", "predicate": "lives in", "object": "القاهرة"},
    # Names that inflecting languages write in a case form (step 2, CASE_QUESTIONS).
    {"subject": "Иван Петров", "predicate": "works at", "object": "Газпром"},
    {"subject": "Анна", "predicate": "lives in", "object": "Москва"},
    {"subject": "Jan Nowak", "predicate": "works at", "object": "Orlen"},
    {"subject": "Mehmet", "predicate": "lives in", "object": "Ankara"},
    {"subject": "Γιώργος", "predicate": "lives in", "object": "Αθήνα"},
]
for _fact in FACTS:
    _fact["source_role"] = "user"

# (question, the statement it asks about)
QUESTIONS = [
    ("Que commande Jean-Luc Picard ?", "Jean-Luc Picard commands the USS Enterprise"),
    ("Was kommandiert Jean-Luc Picard?", "Jean-Luc Picard commands the USS Enterprise"),
    ("¿Dónde vive Siobhán Ní Bhriain?", "Siobhán Ní Bhriain lives in Galway"),
    ("Où travaille Siobhán Ní Bhriain ?", "Siobhán Ní Bhriain works at a bakery"),
    ("田中さんはどこに住んでいますか", "田中 lives in 大阪"),
    ("สมชายอาศัยอยู่ที่ไหน", "สมชาย lives in Chiang Mai"),
    ("김민수는 어디에서 일해요?", "김민수 works at Samsung"),
    ("מי גר בחיפה?", "Dani Cohen lives in חיפה"),
    ("من يسكن بالقاهرة؟", "Ali Hassan lives in القاهرة"),
]


# (question, the statement it asks about): each names an entity in a case form, no
# whole-word match of the name, so only step 2 (similar names) finds it.
CASE_QUESTIONS = [
    ("Где работает брат Ивана Петрова?", "Иван Петров works at Газпром"),
    ("Кто брат Ивана?", "Иван Петров works at Газпром"),
    ("Что известно об Анне?", "Анна lives in Москва"),
    ("Kim jest brat Jana Nowaka?", "Jan Nowak works at Orlen"),
    ("Co wiesz o Nowaku?", "Jan Nowak works at Orlen"),
    ("Mehmetin evi nerede?", "Mehmet lives in Ankara"),
    ("Mitä tiedät Mehmetistä?", "Mehmet lives in Ankara"),
    ("Τι ξέρεις για τον Γιώργο;", "Γιώργος lives in Αθήνα"),
]


def statements(answer: dict[str, Any]) -> list[str]:
    return [f["statement"] for f in answer["facts"]]
