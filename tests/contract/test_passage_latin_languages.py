"""Step 4 in languages written in Latin letters other than English, with the real English
model, on each store: a note's words meet the question's across their endings (each text
adds its words' stems by the stemmer of the language it is taken to be in), and the
question's function words ("mi", "con", "el") find nothing (domain/search_text.py)."""

from __future__ import annotations

from taisce.service.memory import Memory
from tests.contract.factories import unique
from tests.contract.passage_recall import recalled_passages, store_embedded

SAID = [
    "Tengo un gato negro que se llama Max.",
    "Mi hermana vive en Sevilla con sus amigos.",
    "Unsere Katze schläft den ganzen Tag auf dem Sofa.",
    "Siskoni asuu Tampereella kahden kissansa kanssa.",
    "Mijn zus woont met haar twee katten in Utrecht.",
    "Mia sorella abita a Torino con i suoi due gatti.",
    "Dana moved to Galway in March.",
]
MESSAGES = [{"id": f"m{n}", "role": "user", "content": text} for n, text in enumerate(SAID)]


def _word_ranks(memory: Memory, project: str, question: str) -> dict[str, int]:
    passages = recalled_passages(memory, project, question, explain=True, max_characters=4000)
    return {
        str(p["id"]): p["why"]["word_rank"]  # type: ignore[index]
        for p in passages
        if p["why"]["word_rank"] is not None  # type: ignore[index]
    }


def test_words_meet_across_their_endings_and_function_words_find_nothing(
    semantic_memory: Memory,
) -> None:
    project = unique("latin")
    store_embedded(semantic_memory, project, MESSAGES)
    for question, found in [
        # gatos / gato, llaman / llama; "cómo", "se" and "mis" leave the question.
        ("¿Cómo se llaman mis gatos?", {"m0#0": 1}),
        # Katzen / Katze; "wo", "schlafen", "die": schlafen / schläft meet too.
        ("Wo schlafen die Katzen?", {"m2#0": 1}),
        # kissaa / kissansa, siskollani / siskoni.
        ("Montako kissaa siskollani on?", {"m3#0": 1}),
        # katten / kat.
        ("Waar slaapt de kat van mijn zus?", {"m4#0": 1}),
        # gatti / gatto.
        ("Dove dorme il gatto?", {"m5#0": 1}),
        # Only "mi", "con" and "el" are shared with the notes: nothing by words.
        ("¿Cuándo es mi cita con el dentista?", {}),
    ]:
        assert _word_ranks(semantic_memory, project, question) == found, question


def test_an_english_question_reads_as_before(semantic_memory: Memory) -> None:
    project = unique("latin")
    store_embedded(semantic_memory, project, MESSAGES)
    assert _word_ranks(semantic_memory, project, "Where did Dana move in March?") == {"m6#0": 1}
