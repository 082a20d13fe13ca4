# ruff: noqa: RUF001 - Japanese and Chinese questions end with the full-width mark
"""Step 4 in Chinese, Japanese, Korean, Russian, Greek and Hindi, with the real English
model, on each store: the word ranking reads text written without spaces, Korean words
less their particles and Russian, Greek and Hindi words by their stems (domain/search_text.py), and
a question mostly in such a script is ranked by words alone (the English model's
cosines order it as noise)."""

from __future__ import annotations

from taisce.service.memory import Memory
from tests.contract.factories import unique
from tests.contract.passage_recall import recalled_passages, store_embedded

SAID = [
    "来週の月曜日に大阪で歯医者の予約があります。",
    "昨日は友達と新しいラーメン屋に行きました。とても美味しかった。",
    "娘のピアノの発表会は十二月十五日です。",
    "다음 주 월요일에 부산에서 치과 예약이 있어요.",
    "어제 친구랑 새로운 라멘집에 갔어요. 정말 맛있었어요.",
    "我下个月去上海出差。",
    "Dana moved to Galway in March.",
    "Завтра у меня встреча с врачом в больнице.",
    "Η Μαρία δουλεύει στο νοσοκομείο της Αθήνας.",
    "उसने किताबों को मेज़ पर रखा।",
]
MESSAGES = [{"id": f"m{n}", "role": "user", "content": text} for n, text in enumerate(SAID)]


def _first(memory: Memory, project: str, question: str) -> tuple[str, list[dict[str, object]]]:
    passages = recalled_passages(memory, project, question, explain=True, max_characters=2000)
    return str(passages[0]["id"]), passages


def test_words_are_read_in_scripts_without_spaces_and_less_korean_particles(
    semantic_memory: Memory,
) -> None:
    project = unique("scripts")
    store_embedded(semantic_memory, project, MESSAGES)

    for question, answer in [
        ("歯医者の予約はいつですか？", "m0#0"),
        ("ピアノの発表会はいつ？", "m2#0"),
        ("치과 예약은 언제예요?", "m3#0"),
        ("라멘집은 어땠어요?", "m4#0"),
        ("你什么时候去上海？", "m5#0"),
        ("Когда я иду к врачу?", "m7#0"),  # врачу and врачом share the stem врач
        ("Σε ποιο νοσοκομείο δουλεύει;", "m8#0"),
        ("मेरी किताबें कहाँ हैं?", "m9#0"),  # किताबें and किताबों share the stem किताब
    ]:
        _, passages = _first(semantic_memory, project, question)
        why = next(p["why"] for p in passages if p["id"] == answer)
        assert why["word_rank"] == 1, question  # type: ignore[index]
        # Words alone rank them: no vector rank, and nothing the words did not find.
        assert all(p["why"]["vector_rank"] is None for p in passages), question  # type: ignore[index]
        assert all(p["why"]["word_rank"] is not None for p in passages), question  # type: ignore[index]
    # A Korean question finds only the Korean passages that share its words.
    _, passages = _first(semantic_memory, project, "라멘집은 어땠어요?")
    assert [p["id"] for p in passages] == ["m4#0"]


def test_an_english_question_is_still_ranked_by_meaning_too(semantic_memory: Memory) -> None:
    project = unique("scripts")
    store_embedded(semantic_memory, project, MESSAGES)
    first, passages = _first(semantic_memory, project, "Where did Dana move?")
    assert first == "m6#0"
    assert any(p["why"]["vector_rank"] is not None for p in passages)  # type: ignore[index]
