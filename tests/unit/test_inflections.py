"""Case endings (domain/inflections.py): a name as languages that inflect names write it."""

from __future__ import annotations

import pytest

from taisce.domain.inflections import STEM_LEAST, base_forms, latin_inflects, name_forms
from taisce.domain.names import normalize_name


@pytest.mark.parametrize(
    ("written", "name"),
    [
        ("Ивана", "Иван"),  # Russian genitive
        ("Иване", "Иван"),  # prepositional
        ("Анне", "Анна"),  # a final replaced
        ("Анны", "Анна"),
        ("Дмитрия", "Дмитрий"),
        ("Кузнецкого", "Кузнецкий"),  # an adjective's ending, both two letters
        ("Петровой", "Петрова"),
        ("Іванові", "Іван"),  # Ukrainian dative
        ("Ани", "Аня"),  # a feminine name of three letters
        ("Ady", "Ada"),
        ("Ewie", "Ewa"),
        ("Nowaka", "Nowak"),  # Polish
        ("Annie", "Anna"),
        ("Kowalskiego", "Kowalski"),
        ("Novákovi", "Novák"),  # Czech, accents as names are normalised
        ("Annalle", "Anna"),  # Finnish
        ("Mehmetin", "Mehmet"),  # Turkish genitive without the apostrophe
        ("Ankarada", "Ankara"),
        ("Péternek", "Péter"),  # Hungarian
        ("Budapesten", "Budapest"),
        ("Γιώργο", "Γιώργος"),  # Greek accusative
        ("Μαρίας", "Μαρία"),  # genitive
        ("Pavla", "Pavel"),  # a Slavic mobile vowel: the "e" drops before an ending
        ("Marka", "Marek"),
        ("Aleksandra", "Aleksander"),
        ("Павла", "Павел"),
    ],
)
def test_a_case_form_reads_as_its_name(written: str, name: str) -> None:
    assert normalize_name(name) in base_forms(normalize_name(written))


@pytest.mark.parametrize(
    ("word", "not_a_name"),
    [
        ("Ann", "an"),  # the stem would be shorter than STEM_LEAST
        ("Leo", "le"),  # three letters: only a feminine name in "a" ("Lea") is read
        ("Helsingissä", "helsinki"),  # consonant gradation is not read
        ("Pavla", "pavol"),  # a mobile vowel is only ever "e"
        ("김민수는", "김민수"),  # other scripts take their own affixes (domain/affixes.py)
    ],
)
def test_what_is_not_read_as_a_case_form(word: str, not_a_name: str) -> None:
    key = normalize_name(word)
    forms = base_forms(key)
    assert not_a_name not in forms and key not in forms
    assert all(len(f) >= STEM_LEAST for f in forms)


def test_a_consonant_ending_follows_the_whole_name() -> None:
    # Hungarian accusative "t" after the name: "Robert" is no "Roba" less "ert", nor a
    # "Robera" with a replaced final; "Lisa" may be a case of "Lise" (a vowel ending).
    assert base_forms("robert") == ("rober",)
    assert "lise" in base_forms("lisa")


def test_latin_words_are_read_only_in_a_language_that_inflects_names() -> None:
    assert latin_inflects("Kim jest brat Jana Nowaka?")  # a Polish word
    assert latin_inflects("Mehmetin evi nerede?")
    assert latin_inflects("Mit tudsz Péterről?")  # a Hungarian letter
    assert not latin_inflects("Where does Dane live?")  # English pairs Dan and Dane
    assert not latin_inflects("¿Dónde vive Paola?")  # as Spanish pairs Paolo and Paola
    assert not latin_inflects("Wo wohnt Anne?")
    assert base_forms("dane", latin=False) == ()
    assert "иван" in base_forms("ивана", latin=False)  # Cyrillic always is


def test_a_span_reads_each_word_as_written_or_as_a_case_form() -> None:
    forms = dict(name_forms("jana nowaka"))
    assert forms["jan nowak"] == 1 and forms["jana nowak"] == 1 and forms["jan nowaka"] == 1
    assert "jana nowaka" not in forms  # as written, it is no case form
    assert name_forms("jan") == name_forms("김민수") == []  # no ending
    assert name_forms("ann nowaka", latin=False) == []
    assert len(name_forms("jana nowaka kowalskiego annie")) <= 256
