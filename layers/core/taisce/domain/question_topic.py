"""The question without the names it writes: what it asks about, not about whom.

A model's vector of "When did Melanie run a charity race?" sits near every passage that
names Melanie (a speaker's name in each of their messages, for one), so the passages
about a charity race rank below many that only share the name. Step 4 also ranks the
passages by the vector of "When did someone run a charity race?" (domain/passage_step.py).

A name here is what a writer of a cased script capitalises inside a sentence: a word
whose first letter is upper case that neither opens the text nor follows ".", "!" or
"?", other than "I" and the names of the months (the time the question asks about,
which step 4 reads apart). It needs no entity to be known, so it works on a project of
messages alone. A script without case (Han, Arabic...) has none: the question stays as
it is. In German, whose nouns are capitalised, nouns are replaced too; the ranking by
the whole question and by words still read them.
"""

from __future__ import annotations

import re

from .fact_ranking import STAND_IN

_TOKEN = re.compile(r"[\w'\u2019-]+|[^\w\s]")
_SENTENCE_END = frozenset(".!?")
_KEPT = frozenset(
    (
        *("I", "January", "February", "March", "April", "May", "June", "July"),
        *("August", "September", "October", "November", "December"),
    )
)


def written_names(question: str) -> list[tuple[int, int]]:
    """The (start, end) of each word the question capitalises inside a sentence."""
    spans: list[tuple[int, int]] = []
    previous = None
    for n, token in enumerate(_TOKEN.finditer(question)):
        word = token.group(0)
        opens = n == 0 or previous in _SENTENCE_END
        previous = word
        if not opens and word[:1].isupper() and word not in _KEPT:
            spans.append(token.span())
    return spans


def nameless_question(question: str) -> str:
    """The question with each written name replaced by STAND_IN (the question itself
    if it writes none)."""
    text = question
    for start, end in reversed(written_names(question)):
        text = text[:start] + STAND_IN + text[end:]
    return text
