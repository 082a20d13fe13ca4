"""The texts an embedder is given, checked alike by every provider."""

from __future__ import annotations

from collections.abc import Sequence


def checked_texts(texts: Sequence[str]) -> list[str]:
    """The texts as a list; a single string (a sequence of characters) or an item
    that is not a string is a caller's error, refused before any model call."""
    if isinstance(texts, str):
        raise TypeError("embed takes a sequence of texts, not one string")
    found = list(texts)
    for text in found:
        if not isinstance(text, str):
            raise TypeError(f"texts must be str, not {type(text).__name__}")
    return found
