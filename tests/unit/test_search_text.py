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
        ("Где живёт Анна?", "Где живёт Анна?"),
        ("สมชายอาศัยอยู่ที่ไหน", "สมชายอาศัยอยู่ที่ไหน"),
    ],
)
def test_a_text_s_form(text: str, formed: str) -> None:
    assert search_form(text) == formed


@pytest.mark.parametrize(
    "text",
    ["歯医者の予約があります", "어제 친구랑 새로운 라멘집에 갔어요.", "Mixed 東京 text 서울에서"],
)
def test_forming_a_formed_text_changes_nothing(text: str) -> None:
    formed = search_form(text)
    assert search_form(formed) == formed
