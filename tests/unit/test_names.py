"""Entity names: normalisation, and finding names in a question as whole words."""

# ruff: noqa: RUF001 - full-width and other look-alike characters are the point

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from taisce.domain.aliases import MergeRequest
from taisce.domain.erasure import ErasureRequest
from taisce.domain.ingest import FactIn
from taisce.domain.names import (
    MAX_CANDIDATES,
    MAX_NAME_TOKENS,
    QuestionNames,
    candidate_keys,
    candidate_spans,
    has_letter_or_digit,
    normalize_name,
    pick_matches,
)


def found(question: str, *names: str) -> list[str]:
    """The normalised names found in the question, as recall picks them."""
    return pick_matches(candidate_spans(question), {normalize_name(n) for n in names})


# -- normalize_name ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Atlas", "atlas"),
        ("ATLAS", "atlas"),
        ("Straße", "strasse"),
        ("STRASSE", "strasse"),
        ("straSSe", "strasse"),
        ("ΣΊΣΥΦΟΣ", "σισυφοσ"),  # Greek accents go, as Latin ones
        ("Αθήνα", "αθηνα"),
        ("Ἀθῆναι", "αθηναι"),
        ("مُحَمَّد", "محمد"),  # Arabic short vowels and shadda are optional
        ("مـحـمـد", "محمد"),  # the tatweel only stretches the word
        ("שָׁלוֹם", "שלום"),  # so are Hebrew points
        ("हिन्दी", "हिन्दी"),  # Devanagari's marks make the letters
        ("ＡＴＬＡＳ", "atlas"),  # full-width letters
        ("Ａｃｍｅ　Ｃｏｒｐ", "acme corp"),  # full-width letters and ideographic space
        ("１２３", "123"),
        ("ﬁnn", "finn"),  # ligature
        ("Ⅻ", "xii"),  # compatibility numeral
        ("Zoe\u0308", "zoe"),  # accents on Latin letters go
        ("ZOË", "zoe"),
        ("Xa\u0301nthe Mo\u0301rrow", "xanthe morrow"),
        ("\u0425anthe M\u03bfrrow", "xanthe morrow"),  # Cyrillic ha, Greek omicron
        ("Xanthe\u2014Morrow", "xanthe morrow"),  # em dash between the parts
        ("Xanthe\u30fbMorrow", "xanthe morrow"),  # katakana middle dot
        ("İstanbul", "istanbul"),
        ("  Acme   Corp  ", "acme corp"),
        ("Acme\tCorp", "acme corp"),
        ("Acme\n\n Corp", "acme corp"),
        ("Acme\r\nCorp", "acme corp"),
        ("Acme\u00a0Corp", "acme corp"),  # no-break space
        ("Acme\u2003\u2009Corp", "acme corp"),  # em space, thin space
        ("Acme\u3000Corp", "acme corp"),  # ideographic space
        ("Acme\u2028Corp", "acme corp"),  # line separator
        ("\t北京\n", "北京"),
        ("AT&T", "at&t"),
        ("Acme Corp.", "acme corp."),
    ],
)
def test_normalize_name(name: str, key: str) -> None:
    assert normalize_name(name) == key


def test_spellings_of_one_name_share_a_key() -> None:
    spellings = ["Zoë Ó Briain", "ZOË Ó BRIAIN", "Zoe\u0308 O\u0301 Briain", "zoë\u00a0ó\tbriain"]
    assert len({normalize_name(s) for s in spellings}) == 1


names_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40
) | st.text(alphabet="aAßẞſKKΣσς \t\n\u00a0\u3000ＡＢ\u0301é.'&-", max_size=20)


@settings(max_examples=300, deadline=None)
@given(names_text)
def test_normalize_name_is_stable(name: str) -> None:
    key = normalize_name(name)
    assert normalize_name(key) == key
    assert key == key.strip()
    assert "  " not in key
    assert not any(c.isspace() and c != " " for c in key)
    assert normalize_name(name.upper()) == normalize_name(name.lower()) or not name.isascii()


# -- candidate_spans ------------------------------------------------------------------


def test_spans_are_runs_of_whole_tokens_of_the_normalised_question() -> None:
    question = "Where does  ATLAS work?"
    text = normalize_name(question)
    spans = candidate_spans(question)
    assert all(text[s.start : s.end] == s.key for s in spans)
    keys = [s.key for s in spans]
    assert "atlas" in keys and "does atlas" in keys and "atlas work?" in keys
    assert "atlas work" in keys
    assert "tlas" not in keys and "atla" not in keys and "does atl" not in keys
    # tokens: where, does, atlas, work, ? -> 5 + 4 + 3 + 2 + 1 runs
    assert len(spans) == 15


def test_spans_are_at_most_max_name_tokens_long() -> None:
    words = [f"w{n}" for n in range(30)]
    spans = candidate_spans(" ".join(words))
    assert max(len(s.key.split()) for s in spans) == MAX_NAME_TOKENS
    long_name = " ".join(words[:MAX_NAME_TOKENS])
    too_long = " ".join(words[: MAX_NAME_TOKENS + 1])
    question = "Tell me about " + too_long
    assert found(question, long_name) == [normalize_name(long_name)]
    assert found(question, too_long) == []


def test_no_spans_in_an_empty_question() -> None:
    assert candidate_spans("") == []
    assert candidate_spans(" \t\n ") == []


# -- whole words ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("Where is Alice?", "Al"),
        ("Where is Alice?", "lic"),
        ("Where is Alice?", "ice"),
        ("Tell me about Atlases", "Atlas"),
        ("Who is Zoë?", "Zo"),
        ("Version 2024", "202"),
        ("Tell me about Acme Corporation", "Acme Corp"),
        ("A question about MacDonald", "Mac"),
        ("Wer wohnt in der Hauptstraße?", "Straße"),
        # What follows or precedes the name in its word is no particle or prefix.
        ("김민수전자는 어디에 있어요?", "김민수"),
        ("김은 어디?", "김"),  # a name of one syllable takes no particle
        ("ab김민수는", "김민수"),
        ("מי גר ברחיפה?", "חיפה"),  # ר is no prefix
        ("أين يسكن تعلي؟", "علي"),  # nor is ت
        ("Who is Alis?", "Ali"),
    ],
)
def test_a_name_is_not_found_inside_a_word(question: str, name: str) -> None:
    assert found(question, name) == []


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("김민수는 어디에서 일해요?", "김민수"),
        ("김민수에게는 뭐가 있어요?", "김민수"),  # two particles
        ("김민수씨도 왔어요", "김민수"),  # an honorific, then a particle
        ("김 민수는 어디?", "김 민수"),
        ("서울로 가요", "서울"),
        ("Google에서 일해요?", "Google"),  # a name in Latin letters, a Korean particle
        ("Aoife Brailaith는 어디에 살아요?", "Aoife Brailaith"),
        ("מי גר בחיפה?", "חיפה"),
        ("מה ידוע ולדני כהן?", "דני כהן"),  # two prefixes
        ("من يسكن بالقاهرة؟", "القاهرة"),
        ("أين محمد وعلي؟", "علي"),
        ("وبالقاهرة", "القاهرة"),  # a conjunction and a preposition
    ],
)
def test_a_name_is_found_with_a_particle_or_prefix_joined_to_it(question: str, name: str) -> None:
    assert found(question, name) == [normalize_name(name)]
    # Where the word holds a longer known name, that one wins.
    assert found("이민서는 어디?", "이민", "이민서") == ["이민서"]


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("田中さんはどこに住んでいますか", "田中"),
        ("北京大学在哪里", "北京大学"),
        ("王小明住在哪里", "王小明"),
        ("スズキはどこで働いていますか", "スズキ"),
        ("สมชายอาศัยอยู่ที่ไหน", "สมชาย"),  # Thai: marks stay with their letters
        ("Where does 田中 live?", "田中"),
        ("田中Corpはどこ", "田中"),
    ],
)
def test_a_name_in_a_script_without_spaces_is_found_in_the_run(question: str, name: str) -> None:
    # Han, Kana and Thai are written without spaces between words: each character is a
    # word of its own, so the name is found where its characters stand together.
    assert found(question, name) == [normalize_name(name)]
    # The longest name wins where found names overlap, as elsewhere.
    assert found("田中一郎さんはどこ", "田中", "田中一郎") == ["田中一郎"]


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("How far is Dublin's port?", "Dublin"),
        ("How far is Dublin’s port?", "Dublin"),
        ("Is AT&T big?", "AT&T"),
        ("AT&T's results", "AT&T"),
        ("I work at Acme Corp.", "Acme Corp."),
        ("I work at Acme Corp.", "Acme Corp"),
        ("(Atlas)", "Atlas"),
        ('"Atlas," she said', "Atlas"),
        ("Atlas!", "Atlas"),
        ("Atlas", "Atlas"),
        ("where does atlas work", "ATLAS"),
        ("Wo ist die STRASSE?", "Straße"),
        ("Who is ＡＴＬＡＳ?", "Atlas"),
        ("Who runs Acme\n\tCorp now?", "Acme Corp"),
        ("Who runs Acme\u00a0 Corp now?", "Acme  Corp"),
        ("Who is Zoe\u0308?", "Zoë"),
        ("Who is Zoë?", "Zoe\u0308"),
        ("Where is 北京?", "北京"),
        ("I like 🚀 Labs a lot", "🚀 Labs"),
        ("Is the e-mail from Jean-Luc?", "Jean-Luc"),
        ("email: atlas@example.com", "atlas@example.com"),
    ],
)
def test_a_name_is_found_as_whole_words(question: str, name: str) -> None:
    assert found(question, name) == [normalize_name(name)]


@pytest.mark.parametrize(
    ("question", "name"),
    [
        # Combining marks belong to the word they are part of.
        ("हिन्दी कौन बोलता है?", "ह"),  # "ha" alone is not in "Hindi"
        ("हिन्दी कौन बोलता है?", "न्दी"),
        ("\u0436\u0307 is a letter", "\u0436"),  # a mark on a Cyrillic letter stays
        ("தமிழ்நாடு எங்கே?", "தமி"),
    ],
)
def test_combining_marks_do_not_split_a_word(question: str, name: str) -> None:
    assert found(question, name) == []


def test_a_name_in_a_script_with_combining_marks_is_found() -> None:
    name = "नरेन्द्र दामोदरदास मोदी"
    assert found(f"{name} कौन हैं?", name) == [normalize_name(name)]
    assert found("हिन्दी कौन बोलता है?", "हिन्दी") == ["हिन्दी"]


# -- pick_matches -----------------------------------------------------------------------


def test_the_longest_of_overlapping_names_wins() -> None:
    assert found("Where is Acme Corp based?", "Acme", "Acme Corp") == ["acme corp"]
    assert found("Where is Acme Corp based?", "Acme", "Corp", "Acme Corp") == ["acme corp"]
    assert found("Acme Corp Dublin office", "Acme Corp", "Corp Dublin office") == [
        "corp dublin office"
    ]
    # Longest in characters, not in tokens.
    assert found("New York City", "New York", "York City") == ["york city"]


def test_names_that_do_not_overlap_are_all_found_in_question_order() -> None:
    names = ("Atlas", "Acme Corp", "Dublin")
    assert found("Does Dublin know Acme Corp or Atlas?", *names) == ["dublin", "acme corp", "atlas"]
    assert found("Atlas, Acme Corp, Dublin", *reversed(names)) == ["atlas", "acme corp", "dublin"]
    assert found("Acme Corp Dublin", "Acme Corp", "Dublin") == ["acme corp", "dublin"]


def test_a_name_found_twice_is_listed_once() -> None:
    assert found("Atlas met atlas and ATLAS at Acme, then Atlas", "Atlas", "Acme") == [
        "atlas",
        "acme",
    ]
    assert found("Acme and Acme Corp", "Acme", "Acme Corp") == ["acme", "acme corp"]


def test_unknown_names_are_not_found() -> None:
    assert found("Where does Atlas work?") == []
    assert found("Where does Atlas work?", "Hermes") == []


def test_a_shorter_name_outside_the_longer_one_is_still_found() -> None:
    assert found("Acme Corp bought Acme", "Acme", "Acme Corp") == ["acme corp", "acme"]


def test_pick_matches_takes_any_iterables() -> None:
    spans = iter(candidate_spans("Atlas works at Acme"))
    assert pick_matches(spans, iter(["acme", "atlas"])) == ["atlas", "acme"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["Atlas", "Acme", "Acme Corp", "Corp", "Dublin", "and", "ß"]), max_size=12
    ),
    st.sets(st.sampled_from(["atlas", "acme", "acme corp", "corp", "dublin", "ss", "x"])),
)
def test_found_names_are_distinct_known_and_in_question(words: list[str], known: set[str]) -> None:
    question = " ".join(words)
    keys = pick_matches(candidate_spans(question), known)
    assert len(keys) == len(set(keys))
    assert set(keys) <= known
    padded = f" {normalize_name(question)} "
    assert all(f" {k} " in padded for k in keys)
    # Every known single-token word of the question is found, or covered by a longer name.
    for word in {normalize_name(w) for w in words} & known:
        assert any(word == k or f" {word} " in f" {k} " for k in keys)


# -- cost: linear in the question, a bounded number of keys (issue 15) -------------------


def test_keys_are_distinct_and_capped_shortest_first() -> None:
    assert candidate_keys("😀" * 10_000) == ["😀" * n for n in range(1, MAX_NAME_TOKENS + 1)]
    question = " ".join(f"w{n}" for n in range(2_000))
    # More distinct words than the cap: the first 1,000 words, one token each.
    assert candidate_keys(question) == [f"w{n}" for n in range(MAX_CANDIDATES)]
    question = " ".join(f"w{n}" for n in range(600))
    keys = candidate_keys(question)
    assert len(keys) == MAX_CANDIDATES == len(set(keys))
    assert keys[:600] == [f"w{n}" for n in range(600)]
    assert keys[600:] == [f"w{n} w{n + 1}" for n in range(MAX_CANDIDATES - 600)]
    every = {s.key for s in candidate_spans(question)}
    assert len(candidate_keys(question, cap=None)) == len(every)


def test_a_short_question_keeps_every_run() -> None:
    question = "Where does  ATLAS work?"
    assert sorted(candidate_keys(question)) == sorted({s.key for s in candidate_spans(question)})


def test_matching_a_repeated_name_reads_each_token_a_bounded_number_of_times() -> None:
    # The quadratic case: a known name repeated 10,000 times. Only runs as long as a
    # known key are made, and pick_matches checks each found span's own tokens.
    names = QuestionNames("😀" * 10_000)
    spans = list(names.spans({"😀"}))
    assert len(spans) == 10_000
    assert names.matches({"😀"}) == ["😀"]
    assert names.matches({"😀😀", "😀"}) == ["😀😀"]
    assert len(list(names.spans({"😀😀"}))) == 9_999


def test_the_longest_name_wins_over_overlaps_at_either_end() -> None:
    assert found("a b c d", "a b", "b c d", "c") == ["b c d"]
    assert found("a b c d", "a b", "c d", "b c") == ["a b", "c d"]


# -- a name needs a letter or a digit (issue 15) ------------------------------------------


@pytest.mark.parametrize(
    "name", [".", "\u0000", "-", "_", "?!", "\u200b", "\u00ad", "😀", "\u0301"]
)
def test_a_name_without_a_letter_or_digit_is_not_a_name(name: str) -> None:
    assert not has_letter_or_digit(name)
    with pytest.raises(ValidationError, match="letter or digit"):
        ErasureRequest.model_validate({"subject": name})
    with pytest.raises(ValidationError, match="letter or digit"):
        MergeRequest.model_validate({"alias": name, "into": "Atlas"})
    with pytest.raises(ValidationError, match="letter or digit"):
        MergeRequest.model_validate({"alias": "Atlas", "into": name})
    fact = {"subject": "Atlas", "predicate": "p", "object": "Bo", "source_role": "user"}
    for field in ("subject", "object"):
        with pytest.raises(ValidationError, match="letter or digit"):
            FactIn.model_validate({**fact, field: name})
    # A value is not a name: anything non-blank goes.
    if name.strip():
        FactIn.model_validate({**fact, "object": name, "object_kind": "value"})


@pytest.mark.parametrize("name", ["X", "7", "½", "Ω", "北京", "R2-D2", "a.b", "हिन्दी", "😀 Labs"])
def test_a_name_with_a_letter_or_digit_is_a_name(name: str) -> None:
    assert has_letter_or_digit(name)
    if name in ("X", "7", "Ω"):
        # A name, but erasure refuses one letter: it would match nearly every text.
        with pytest.raises(ValidationError, match="more than one letter or digit"):
            ErasureRequest.model_validate({"subject": name})
    else:
        ErasureRequest.model_validate({"subject": name})
    MergeRequest.model_validate({"alias": name, "into": "Atlas"})
    FactIn.model_validate(
        {"subject": name, "predicate": "p", "object": name, "source_role": "user"}
    )


# -- names as people read them (issue 15) ------------------------------------------------

XANTHE = [
    "Xanthe Morrow",
    "Xanthe\u200bMorrow",  # zero width space: a word break
    "X\u00adanthe Morrow",  # soft hyphen
    "Xan\u200dthe Morrow",  # zero width joiner
    "Xan\u200cthe Morrow",  # zero width non-joiner
    "Xanthe\u2060 Morrow",  # word joiner
    "\ufeffXanthe Morrow",  # byte order mark
    "\u202eXanthe Morrow\u202c",  # bidi controls
    "Xanthe\ufe0f Morrow",  # variation selector
    "Xanthe-Morrow",
    "Xanthe_Morrow",
    "Xanthe.Morrow",
    "Xanthe/Morrow",
    "Xanthe\u2010Morrow",  # the hyphen character
    "Xanthe\uff0dMorrow",  # full-width hyphen-minus (NFKC: "-")
    "Xanthe--Morrow",
    "XANTHE_MORROW",
]


@pytest.mark.parametrize("spelling", XANTHE)
def test_spellings_people_read_alike_share_a_key(spelling: str) -> None:
    assert normalize_name(spelling) == "xanthe morrow"
    assert found(f"Where does {spelling} live?", "Xanthe Morrow") == ["xanthe morrow"]
    assert found("Where does Xanthe Morrow live?", spelling) == ["xanthe morrow"]


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Jean-Luc", "jean luc"),
        ("snake_case", "snake case"),
        ("acme.com", "acme com"),
        ("AC/DC", "ac dc"),
        ("Acme Corp.", "acme corp."),  # a period that ends a name stays
        ("-5", "-5"),
        ("a - b", "a - b"),  # spaced: a dash in a sentence, not a joined name
        ("R2-D2", "r2 d2"),
        ("hi\u00ad", "hi"),
        ("\u0600\u0661", "\u0600\u0661"),  # a visible format character (Arabic number sign) stays
    ],
)
def test_separators_between_parts_count_as_a_space(name: str, key: str) -> None:
    assert normalize_name(name) == key


def test_a_name_is_found_across_its_separators() -> None:
    assert found("Tell me about snake_case", "snake") == ["snake"]
    assert found("Find ACME_Corp", "ACME") == ["acme"]
    assert found("Is Jean Luc here?", "Jean-Luc") == ["jean luc"]


def test_every_invisible_format_character_is_dropped() -> None:
    # Every Cf character Python's Unicode data knows, but the visible prepended
    # concatenation marks (and the zero width space, which is a space).
    visible = {0x0600, 0x0601, 0x0602, 0x0603, 0x0604, 0x0605, 0x06DD, 0x070F, 0x0890,
               0x0891, 0x08E2, 0x110BD, 0x110CD}  # fmt: skip
    for code in range(0x110000):
        char = chr(code)
        if unicodedata.category(char) == "Cf" and code not in visible and code != 0x200B:
            assert normalize_name(f"a{char}b") == "ab", hex(code)
