"""What an erasure takes, decided before anything is removed (docs/API.md, "Erasure").

- The subject's own entity and every alias merged into it are erased.
- Another entity whose name holds the subject ("Dana Holdings" when erasing "Dana") is
  listed by the preview and taken only when the request names it in `also`; otherwise
  it is spared: an occurrence of the subject inside one of its occurrences does not
  count, as a question finds the longest name ("Dana Holdings hired Ann" stays, "Dana
  met Ann at Dana Holdings" goes).
- A subject that is no entity (nor alias) of the project and would mask more than a
  small share of its messages is refused unless the request carries the token of its
  preview (`"dry_run": true`): the caller has seen what it takes.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar

from .erasure import PendingView, names_it
from .erasure_pages import ENTITY_PAGE, FACT_PAGE, MESSAGE_PAGE
from .errors import InvalidRequest
from .listing import decode_cursor, encode_cursor
from .model import Fact, Message, Passage

if TYPE_CHECKING:
    from .ports.projects import ProjectReads

# A subject that is no entity may mask at most this share of the project's messages,
# or this many, whichever is more, without the preview's token.
SMALL_SHARE = 0.1
FEW_MESSAGES = 5
# The facts and passages a preview shows, at most (first in storing order).
PREVIEW_ITEMS = 5
# Names an `also` may list, at most.
MAX_ALSO = 50


@dataclass(frozen=True, slots=True)
class Reach:
    """The names an erasure of `key` takes and spares."""

    key: str
    names: tuple[str, ...]  # erased: the subject first, then its entity and aliases, `also`
    others: tuple[str, ...]  # entities whose names hold one of its own names
    also: tuple[str, ...]  # the others the request takes too (sorted)
    is_entity: bool
    masked: int = 0  # messages it would mask (counted only for a subject that is no entity)
    messages: int = 0  # messages the project holds (likewise)

    @property
    def spared(self) -> tuple[str, ...]:
        return tuple(k for k in self.others if k not in self.also)

    @property
    def view(self) -> PendingView:
        return PendingView(self.names, self.spared)

    @property
    def needs_token(self) -> bool:
        return not self.is_entity and self.masked > max(FEW_MESSAGES, SMALL_SHARE * self.messages)


def reach_of(
    key: str, entity: str, merged: Collection[str], known: Collection[str], also: Sequence[str]
) -> Reach:
    """The reach of an erasure of `key` (resolved to `entity`, with the aliases
    `merged` into it), among the project's `known` entity and alias keys."""
    own = {key, entity, *merged}
    others = tuple(sorted(k for k in known if k not in own and any(names_it(k, n) for n in own)))
    wanted = tuple(sorted(set(also)))
    if len(wanted) > MAX_ALSO:
        raise InvalidRequest(f"also: at most {MAX_ALSO} names")
    for name in wanted:
        if name not in others:
            raise InvalidRequest(
                f"also: {name!r} is not an entity whose name holds the subject "
                '(the preview, with "dry_run": true, lists those)'
            )
    names = (key, *sorted((own | set(wanted)) - {key}))
    return Reach(key, names, others, wanted, is_entity=key in known)


def _token_values(reach: Reach) -> list[str]:
    return [reach.key, *reach.also]


def preview_token(project: str, reach: Reach) -> str:
    """A token for this subject and `also` in this project (tagged as listing cursors
    are: an edited token, or one of another subject or project, does not match)."""
    return encode_cursor("erasure", project, _token_values(reach))


def preview_token_matches(project: str, reach: Reach, token: str | None) -> bool:
    if token is None:
        return False
    try:
        values = decode_cursor("erasure", project, token, 1 + len(reach.also))
    except InvalidRequest:
        return False
    return values == _token_values(reach)


def needs_token_problem(reach: Reach) -> str:
    return (
        f"subject is no entity of this project and would mask {reach.masked} of its "
        f"{reach.messages} messages (more than {SMALL_SHARE:.0%}): preview it with "
        '"dry_run": true and send the preview\'s "token" with the request to erase it'
    )


@dataclass(frozen=True, slots=True)
class ErasurePreview:
    """What an erasure would take: its reach, the counts, the first facts and
    passages, and the token a request needs when `needs_token`."""

    reach: Reach
    counts: dict[str, int]
    token: str
    messages: int
    facts: list[Fact] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)


T = TypeVar("T")


def _paged(read: Callable[[str | None], tuple[Sequence[T], str | None]]) -> Iterator[T]:
    """Every item a paged read gives, following its cursor to the end."""
    after: str | None = None
    while True:
        items, after = read(after)
        yield from items
        if after is None:
            return


def entity_keys(store: ProjectReads, project: str) -> Iterator[str]:
    """The project's entity keys, a page at a time (never the whole project at once)."""
    return _paged(lambda after: store.entity_key_page(project, after, ENTITY_PAGE))


def _facts(store: ProjectReads, project: str) -> Iterator[Fact]:
    return _paged(lambda after: store.fact_page(project, after, FACT_PAGE))


def messages_of(store: ProjectReads, project: str) -> Iterator[Message]:
    """The project's messages, a page at a time."""
    return _paged(lambda after: store.message_page_of_project(project, after, MESSAGE_PAGE))


def preview_of(store: ProjectReads, project: str, reach: Reach) -> ErasurePreview:
    """The erasure's plan, counted and sampled, nothing removed (reads the whole
    project, a page at a time, as the paged erasure does)."""
    view = reach.view
    facts = [f for f in _facts(store, project) if view.hides_fact(f)]
    entities = [k for k in entity_keys(store, project) if view.hides_entity(k)]
    total = 0
    named: list[Message] = []
    for message in messages_of(store, project):
        total += 1
        if view.names_message(message):
            named.append(message)
    held = store.passages_of_messages(project, [m.id for m in named]) if named else {}
    dropped: list[Passage] = []
    for m in named:
        _, kept = view.message(m, held.get(m.id, []))
        left = {p.id for p in kept}
        dropped += [p for p in held.get(m.id, []) if p.id not in left]
    counts = {
        "facts": len(facts),
        "entities": len(entities),
        "messages": len(named),
        "passages": len(dropped),
    }
    if not reach.is_entity:
        reach = replace(reach, masked=len(named), messages=total)
    return ErasurePreview(
        reach,
        counts,
        preview_token(project, reach),
        total,
        facts[:PREVIEW_ITEMS],
        dropped[:PREVIEW_ITEMS],
    )
