# ruff: noqa: RUF001 - Cyrillic and Greek text
"""The form of a text the word indexes read (domain/search_text.py)."""

from __future__ import annotations

import pytest

from taisce.domain.search_text import search_form


@pytest.mark.parametrize(
    ("text", "formed"),
    [
        # Han and hiragana apart; a katakana run stays one word, as OpenSearch reads it.
        ("歯医者の予約", " 歯 医 者 の 予 約 "),
        ("ラーメン屋に行きました。", "ラーメン 屋 に 行 き ま し た 。"),
        ("我在北京工作", " 我 在 北 京 工 作 "),
        # A Korean word's stem without its particles, once, after the text.
        ("라멘집은 어땠어요?", "라멘집은 어땠어요? 라멘집 어땠어"),
        ("부산에서 부산에 갔다", "부산에서 부산에 갔다 갔 부산"),  # 다 ends a verb too
        ("부산 부산에서", "부산 부산에서"),  # the text holds the stem already
        # Any other text is its own form.
        ("Dana moved to Galway in March.", "Dana moved to Galway in March."),
        # Russian, Greek and Arabic words add their Snowball stems.
        ("Встреча с врачом", "Встреча с врачом врач встреч"),
        ("Πού μένει ο γιατρός;", "Πού μένει ο γιατρός; γιατρ μεν π"),
        ("من يسكن بالقاهرة؟", "من يسكن بالقاهرة؟ قاهر يسك"),
        ("สมชายอาศัยอยู่ที่ไหน", "สมชายอาศัยอยู่ที่ไหน"),
    ],
)
def test_a_text_s_form(text: str, formed: str) -> None:
    assert search_form(text) == formed


def test_a_stem_is_added_once_and_not_when_the_text_holds_it() -> None:
    assert search_form("врач, врачом, врачу") == "врач, врачом, врачу"
    assert search_form("врачом и врачу") == "врачом и врачу врач"


def test_the_same_words_meet_whatever_their_ending() -> None:
    # What a question and a passage share once both are formed.
    def shared(a: str, b: str) -> set[str]:
        return set(search_form(a).lower().split()) & set(search_form(b).lower().split())

    assert "врач" in shared("Когда я иду к врачу?", "Завтра у меня встреча с врачом.")
    assert "라멘집" in shared("라멘집은 어땠어요?", "새로운 라멘집에 갔어요.")
    assert {"医", "者"} <= shared("歯医者はいつ", "大阪で歯医者の予約")
    assert "किताब" in shared("मेरी किताबें कहाँ हैं?", "उसने किताबों को मेज़ पर रखा।")
