"""Which subjects erasure refuses by name: one letter, or only common words."""

from __future__ import annotations

import pytest

from taisce.domain.erasable import COMMON_WORDS, ONE_LETTER, ONLY_COMMON_WORDS, refusal
from taisce.domain.erasure import ErasureRequest
from taisce.domain.errors import InvalidRequest


@pytest.mark.parametrize("subject", ["a", "S", "'s", "s.", "\uff41", "9", " x "])
def test_one_letter_or_digit_is_refused(subject: str) -> None:
    assert refusal(subject) == ONE_LETTER


@pytest.mark.parametrize(
    "subject", ["the", "IT", "of the", "it\u2019s", "die", "les", "el", "agus", "Ich und du"]
)
def test_only_common_words_are_refused(subject: str) -> None:
    assert refusal(subject) == ONLY_COMMON_WORDS


@pytest.mark.parametrize(
    "subject", ["Al", "AT&T", "C++", "J. K.", "Malcolm X", "The Who", "MIT", "UN", "Zoë"]
)
def test_names_are_accepted(subject: str) -> None:
    assert refusal(subject) is None
    assert ErasureRequest.model_validate({"subject": subject}).subject == subject


def test_the_request_model_names_the_rule() -> None:
    with pytest.raises(ValueError, match="common words"):
        ErasureRequest.model_validate({"subject": "the"})


def test_the_list_is_lower_case_and_holds_no_common_abbreviation() -> None:
    assert all(w == w.casefold() for w in COMMON_WORDS)
    assert not {"us", "un", "mit", "who", "will", "may", "go", "al", "del", "don"} & COMMON_WORDS


def test_the_use_case_refuses_too(tmp_path: object) -> None:
    from taisce.adapters.sqlite.store import SqliteStore
    from taisce.domain.controls import Limits
    from taisce.service.memory import Memory

    store = SqliteStore(tmp_path / "t.sqlite3")  # type: ignore[operator]
    with pytest.raises(InvalidRequest, match="subject must be more than one letter"):
        Memory(store, Limits()).erase_now("p", "a")
    assert store.erasures("p") == []
