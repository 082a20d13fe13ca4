"""The words cache (domain/words.py): the same words as without it, bounded in length,
emptied by forget_words."""

from __future__ import annotations

from taisce.domain.words import WORDS_CACHED_LENGTH, _words, forget_words, words


def test_cached_words_are_the_words_and_long_texts_are_not_kept() -> None:
    forget_words()
    short = "Atlas works at Acme Corp's offices in Dublin"
    # ("atlas" is read as a plural, as every text's words are: the same on both sides.)
    assert words(short) == ["atla", "work", "acme", "corp", "office", "dublin"]
    assert words(short) == list(_words.__wrapped__(short))
    assert words(short) == words(short) and _words.cache_info().currsize == 1
    # The caller's list is its own: changing it does not change the next answer.
    mine = words(short)
    mine.append("x")
    assert words(short)[-1] == "dublin"
    long = "Atlas " * (WORDS_CACHED_LENGTH // 6 + 1)
    assert len(long) > WORDS_CACHED_LENGTH
    assert words(long) == ["atla"] * (WORDS_CACHED_LENGTH // 6 + 1)
    assert _words.cache_info().currsize == 1
    forget_words()
    assert _words.cache_info().currsize == 0
