"""Messages split into passages: code-point offsets, whole coverage, the size limit."""

# ruff: noqa: RUF001 - full-width and other look-alike characters are the point

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from taisce.domain.ingest import PASSAGE_CHARACTERS, split_passages
from taisce.domain.model import Message, Passage


def msg(content: str, *, id: str = "m-1", role: str = "tool", source: str | None = "doc.md"):
    return Message(
        id=id,
        role=role,  # type: ignore[arg-type]
        content=content,
        source=source,
        occurred_at="2024-01-01T00:00:00Z",
        recorded_at="2024-01-01T00:00:00Z",
    )


def check(content: str, limit: int = PASSAGE_CHARACTERS) -> list[Passage]:
    """Split, and check every rule that holds for any content."""
    m = msg(content)
    passages = split_passages(m, limit) if limit != PASSAGE_CHARACTERS else split_passages(m)
    covered: set[int] = set()
    previous_end = 0
    for n, p in enumerate(passages):
        assert p.id == f"{m.id}#{n}"
        assert (p.message_id, p.role, p.source) == (m.id, m.role, m.source)
        assert isinstance(p.start, int) and isinstance(p.end, int)
        assert previous_end <= p.start < p.end <= len(content)  # in order, no overlap
        assert content[p.start : p.end] == p.quote
        assert len(p.quote) <= limit
        assert not p.quote[0].isspace() and not p.quote[-1].isspace()
        covered.update(range(p.start, p.end))
        previous_end = p.end
    non_space = {i for i, c in enumerate(content) if not c.isspace()}
    assert non_space <= covered
    # Greedy packing: the next passage would not have fitted into this one.
    for a, b in itertools.pairwise(passages):
        assert b.end - a.start > limit
    return passages


def quotes(content: str, limit: int = PASSAGE_CHARACTERS) -> list[str]:
    return [p.quote for p in check(content, limit)]


def test_a_short_message_is_one_passage() -> None:
    assert quotes("Atlas works at Acme Corp. He likes it there!") == [
        "Atlas works at Acme Corp. He likes it there!"
    ]


def test_surrounding_space_is_left_out() -> None:
    [p] = check("\n\n   Atlas works at Acme.  \t\n")
    assert (p.start, p.quote) == (5, "Atlas works at Acme.")


def test_a_blank_message_has_no_passages() -> None:
    assert check("") == []
    assert check(" \n\t\u3000 ") == []


def test_the_default_limit_is_150_code_points() -> None:
    # Chosen on real conversations (docs/quality.md): about one sentence.
    assert PASSAGE_CHARACTERS == 150
    sentence = "x" * 69 + "."  # 70 code points
    content = " ".join([sentence] * 7)
    assert [len(q) for q in quotes(content)] == [70 * 2 + 1, 70 * 2 + 1, 70 * 2 + 1, 70]


def test_sentences_are_packed_up_to_the_limit() -> None:
    content = "One two. Three four! Five six? Seven eight."
    assert quotes(content, limit=20) == ["One two. Three four!", "Five six?", "Seven eight."]
    # A sentence longer than the limit is cut at spaces, and its pieces are packed.
    assert quotes(content, limit=9) == [
        "One two.",
        "Three",
        "four!",
        "Five six?",
        "Seven",
        "eight.",
    ]


def test_passages_end_at_sentence_ends_when_sentences_fit() -> None:
    content = "Atlas works at Acme. Acme is in Dublin. Dublin is in Ireland."
    assert quotes(content, limit=40) == [
        "Atlas works at Acme. Acme is in Dublin.",
        "Dublin is in Ireland.",
    ]
    assert quotes(content, limit=25) == [
        "Atlas works at Acme.",
        "Acme is in Dublin.",
        "Dublin is in Ireland.",
    ]


def test_closing_quotes_stay_with_their_sentence() -> None:
    content = 'He said "Go." Then (he left.) Fine\u2026 ok'
    assert quotes(content, limit=16) == ['He said "Go."', "Then (he left.)", "Fine\u2026 ok"]
    assert quotes("Is it \u201cAtlas?\u201d Yes.", limit=14) == ["Is it \u201cAtlas?\u201d", "Yes."]


def test_a_line_break_ends_a_piece() -> None:
    content = "first line without a stop\nsecond line without a stop"
    assert quotes(content, limit=30) == ["first line without a stop", "second line without a stop"]
    assert quotes(content) == [content]  # both fit, packed together


def test_a_long_sentence_is_cut_at_spaces() -> None:
    words = [f"word{n:02d}" for n in range(60)]  # 6 code points each
    content = " ".join(words)
    passages = check(content, limit=50)
    assert len(passages) > 1
    for p in passages:  # no word is cut
        assert p.start == 0 or content[p.start - 1] == " "
        assert p.end == len(content) or content[p.end] == " "
    assert " ".join(p.quote for p in passages) == content


def test_a_long_sentence_with_no_spaces_is_cut_at_the_limit() -> None:
    content = "x" * 1000
    assert [(p.start, p.end) for p in check(content)] == [
        (0, 150),
        (150, 300),
        (300, 450),
        (450, 600),
        (600, 750),
        (750, 900),
        (900, 1000),
    ]
    assert [len(q) for q in quotes("y" * 10 + " " + "z" * 25, limit=10)] == [10, 10, 10, 5]


def test_offsets_are_code_points() -> None:
    content = "🚀 Zoë Ó Briain lives in 北京. She likes 🇮🇪 flags! Zoe\u0308 and e\u0301 are fine."
    for limit in (300, 40, 20, 7, 3, 1):
        for p in check(content, limit):
            assert content[p.start : p.end] == p.quote
    [whole] = check(content)
    assert (whole.start, whole.end) == (0, len(content))
    assert whole.end == 69  # code points, not UTF-8 bytes (86) or UTF-16 units (72)
    assert len(content.encode("utf-8")) == 86 and len(content.encode("utf-16-le")) // 2 == 72


def test_cjk_text_is_split_at_cjk_sentence_ends() -> None:
    sentence = "这是一个关于北京句子。"  # 11 code points
    content = sentence * 40  # 440 code points, no spaces at all
    passages = check(content, limit=300)
    assert [len(p.quote) for p in passages] == [27 * 11, 13 * 11]
    assert all(p.quote.endswith("。") for p in passages)
    assert quotes("東京です！大阪です？京都です。", limit=6) == [
        "東京です！",
        "大阪です？",
        "京都です。",
    ]
    assert quotes("「東京です。」大阪です。", limit=8) == ["「東京です。」", "大阪です。"]


def test_limit_one_gives_one_passage_per_character() -> None:
    assert quotes("ab c🚀.", limit=1) == ["a", "b", "c", "🚀", "."]


def test_a_maximal_message_is_split_quickly() -> None:
    content = ("Atlas works at Acme Corp in Dublin, Ireland. " * 2300)[:100_000]
    passages = check(content)
    assert len(passages) > 300


# -- any text ----------------------------------------------------------------------------

pieces = st.sampled_from(
    [
        " ",
        "  ",
        "\n",
        "\n\n",
        "\t",
        "\u00a0",
        "\u3000",
        ". ",
        "! ",
        "? ",
        '." ',
        "\u2026 ",
        "。",
        "！",
        "？",
        "」",
        ")",
        "'",
        "a",
        "word",
        "Atlas",
        "x" * 40,
        "🚀",
        "🇮🇪",
        "北京",
        "e\u0301",
        "\u0301",
        "हिन्दी",
        "ß",
        "\r\n",
        "3.5",
        ".",
    ]
)
texts = st.lists(pieces, max_size=80).map("".join) | st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=400
)


@settings(max_examples=200, deadline=None)
@given(texts, st.one_of(st.just(PASSAGE_CHARACTERS), st.integers(1, 60)))
def test_any_text_is_split_by_the_rules(content: str, limit: int) -> None:
    passages = check(content, limit)
    assert bool(passages) == any(not c.isspace() for c in content)
