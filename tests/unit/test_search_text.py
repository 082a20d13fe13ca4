# ruff: noqa: RUF001 - Cyrillic and Greek text
"""The form of a text the word indexes read (domain/search_text.py)."""

from __future__ import annotations

import re

import pytest

from taisce.domain.search_text import asked_form, search_form, text_languages


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


@pytest.mark.parametrize(
    ("text", "languages", "stems"),
    [
        # Each word adds its stem by the stemmer of the language the text is taken to be in.
        ("Mi hermana vive en Sevilla con sus dos gatos.", ("spanish",), "gat herman sevill viv"),
        ("Meine Schwester wohnt mit ihren zwei Katzen.", ("german",), "ihr katz mein schwest"),
        ("Siskoni asuu Tampereella kahden kissansa kanssa.", ("finnish",),
         "asu kahd kan kis sisko tamper"),
        ("Kız kardeşim iki kedisiyle İzmir'de yaşıyor.", ("turkish",), "ik kardeş kedi"),
        ("Mijn zus woont met haar twee katten in Utrecht.", ("dutch",), "kat"),
        # Polish has function words in the lists but no Snowball stemmer: nothing added.
        ("Kupiłem nowe buty do biegania, bo chcę przebiec maraton.", ("polish",), ""),
        # English, and text too short to tell, stay as written: one function word of
        # another language is not enough ("care", "total", "hat"), nor a tie with
        # English's ("for", "so" and Swedish "far").
        ("I went to a support group yesterday and it was so powerful.", (), ""),
        ("Take care!", (), ""),
        ("Ivan brought Mango the parrot round, total chaos.", (), ""),
        ("Booked a table for Saturday, eight people so far.", (), ""),
        ("Dana's hat?", (), ""),
    ],
)  # fmt: skip
def test_a_text_in_latin_letters_adds_the_stems_of_its_language(
    text: str, languages: tuple[str, ...], stems: str
) -> None:
    assert text_languages(re.findall(r"[^\W\d_]+", text.lower())) == languages
    assert search_form(text) == (f"{text} {stems}" if stems else text)


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        # The question's own function words leave it, its stems stay.
        ("¿Cuándo es mi cita con el dentista?", "cita dentista cit dentist"),
        ("¿Cuántos gatos tiene?", "gatos gat"),
        ("Wann ist mein Zahnarzttermin?", "Zahnarzttermin"),
        ("Quando ho l'appuntamento dal dentista?", "l appuntamento dentista appunt dentist"),
        ("Waar woont mijn zus?", "woont zus"),
        # English questions, and those whose language is not told, are asked as formed.
        ("When is my dentist appointment?", "When is my dentist appointment?"),
        ("Kaç kedisi var?", "Kaç kedisi var?"),
        ("Когда я иду к врачу?", search_form("Когда я иду к врачу?")),
        # Nothing but function words: asked as formed, not as nothing.
        ("¿Dónde está él?", search_form("¿Dónde está él?")),
    ],
)
def test_a_question_is_asked_without_the_function_words_of_its_language(
    question: str, asked: str
) -> None:
    assert asked_form(question) == asked


def test_words_of_a_language_in_latin_letters_meet_whatever_their_ending() -> None:
    def shared(question: str, text: str) -> set[str]:
        asked = set(asked_form(question).lower().split())
        return asked & set(search_form(text).lower().split())

    assert shared("¿Cuántos gatos tiene?", "Tengo un gato negro y una perra.") == {"gat"}
    assert "katz" in shared("Wie viele Katzen hat sie?", "Sie hat eine Katze und einen Hund.")
    assert "kis" in shared(
        "Montako kissaa siskollani on?", "Siskoni asuu Tampereella kahden kissansa kanssa."
    )
    # Only the question's content meets a Spanish note: not "mi", "con", "el".
    assert shared("¿Cuándo es mi cita con el dentista?", "Mi hermana vive con sus gatos.") == set()
