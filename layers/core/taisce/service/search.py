"""The reads behind a search by words (domain/search.py): the index's text ranking,
then the facts or messages themselves from the store, shown as the pending erasures
will leave them (a match that only an erasure's name made is left out)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..domain.erasure import PendingView
from ..domain.listing import ShownMessage, fact_bytes, fitting
from ..domain.model import Hit, Passage, Role, VectorKind
from ..domain.ports.store import Store
from ..domain.ports.vectors import VectorIndex
from ..domain.search import (
    SEARCH_DEPTH,
    FactMatches,
    MessageMatches,
    messages_in_order,
    next_search_cursor,
    passage_message_id,
)

logger = logging.getLogger(__name__)

# Passages read per message wanted, at first: a message holds several matching ones.
_PASSAGES_PER_MESSAGE = 4


class SearchFailed(Exception):
    """The index's text search failed or outlived its deadline: the answer is degraded."""


def _text_hits(
    index: VectorIndex, partition: str, kind: VectorKind, words: str, k: int, role: Role | None
) -> list[Hit]:
    try:
        return index.search_text(partition, kind, words, k, None if role is None else (role,))
    except Exception as error:  # any index failure degrades the answer, never fails it
        logger.warning("text search failed: %s", type(error).__name__)
        raise SearchFailed from error


def fact_matches(
    store: Store,
    index: VectorIndex,
    asked: tuple[str, str, Role | None, int, int],
    partition: str,
    view: Callable[[], PendingView],
) -> FactMatches:
    """`asked`: (project, words, role, offset, size). A hit whose fact is gone (deleted,
    erased, or hidden by a pending erasure) is passed over, not shown."""
    project, words, role, offset, size = asked
    try:
        hits = _text_hits(index, partition, "fact", words, offset + size + 1, role)
    except SearchFailed:
        return FactMatches([], None, ["search"])
    ids = [h.id for h in hits[offset : offset + size]]
    held = {f.id: f for f in store.facts_by_ids(partition, ids)}
    hidden = view()
    # At most PAGE_BYTES of facts: the page then ends at the last fact it could take.
    weighed = [(n, f) for n, i in enumerate(ids) if (f := held.get(i)) is not None]
    taken = weighed[: fitting(fact_bytes(f) for _, f in weighed)]
    read = taken[-1][0] + 1 if taken and len(taken) < len(weighed) else len(ids)
    more = len(hits) > offset + read
    return FactMatches(
        [f for _, f in taken if not hidden.hides_fact(f)],
        next_search_cursor("search-facts", project, words, role, None, offset + read, more),
    )


def message_matches(
    store: Store,
    index: VectorIndex,
    asked: tuple[str, str, Role | None, str | None, int, int],
    partition: str,
    view: Callable[[], PendingView],
) -> MessageMatches:
    """`asked`: (project, words, role, source, offset, size). Messages by their best
    matching passage; each carries the passages that matched (as the pending erasures
    leave them; a message none of whose matches is left is passed over)."""
    project, words, role, source, offset, size = asked
    wanted = offset + size + 1
    k = min(SEARCH_DEPTH, wanted * _PASSAGES_PER_MESSAGE)
    try:
        hits = _text_hits(index, partition, "passage", words, k, role)
        while len(messages_in_order(hits)) < wanted and len(hits) == k < SEARCH_DEPTH:
            k = min(SEARCH_DEPTH, 2 * k)
            hits = _text_hits(index, partition, "passage", words, k, role)
    except SearchFailed:
        return MessageMatches([], None, ["search"])
    order = messages_in_order(hits)
    page_ids = order[offset : offset + size]
    shown = _shown_messages(store, partition, hits, page_ids, source, view())
    listed = shown[: fitting(m.weight() for _, m in shown)]
    read = listed[-1][0] + 1 if listed and len(listed) < len(shown) else len(page_ids)
    more = len(order) > offset + read
    return MessageMatches(
        [m for _, m in listed],
        next_search_cursor("search-messages", project, words, role, source, offset + read, more),
    )


def _shown_messages(
    store: Store,
    partition: str,
    hits: list[Hit],
    page_ids: list[str],
    source: str | None,
    hidden: PendingView,
) -> list[tuple[int, ShownMessage]]:
    """The page's messages (each with its place in the page) as they are shown."""
    on_page = set(page_ids)
    matched = [h.id for h in hits if passage_message_id(h.id) in on_page]
    by_message: dict[str, list[Passage]] = {}
    for p in store.passages_by_ids(partition, matched):
        by_message.setdefault(p.message_id, []).append(p)
    messages = {m.id: m for m in store.messages_by_ids(partition, page_ids)}
    shown: list[tuple[int, ShownMessage]] = []
    for n, message_id in enumerate(page_ids):
        m = messages.get(message_id)
        if m is None or (source is not None and m.source != source):
            continue
        m, kept = hidden.message(m, sorted(by_message.get(message_id, []), key=lambda p: p.start))
        if kept:
            shown.append((n, ShownMessage(m, kept)))
    return shown
