"""The walk both stores make over their entities' facts (domain/facts_once.py), and
the alias rule of resolve_names (domain/aliases.resolve)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from taisce.domain.aliases import resolve
from taisce.domain.facts_once import FactStream, facts_once
from taisce.domain.model import Fact
from tests.contract.factories import fact


class Streams:
    """Streams over fixed ids that record what was opened (with what remained) and
    how many facts were read from each."""

    def __init__(self, *entities: list[str]) -> None:
        self.entities = entities
        self.opened: list[tuple[int, int]] = []
        self.read: dict[int, int] = {}

    def _read(self, n: int, ids: list[str]) -> Iterator[Fact]:
        for i in ids:
            self.read[n] = self.read.get(n, 0) + 1
            yield fact("Caroline", "noted", i, id=i, kind="value")

    def __iter__(self) -> Iterator[FactStream]:
        for n, ids in enumerate(self.entities):

            def stream(remaining: int, n: int = n, ids: list[str] = ids) -> Iterable[Fact]:
                self.opened.append((n, remaining))
                return self._read(n, ids)

            yield stream


def ids(facts: Iterable[Fact]) -> list[str]:
    return [f.id for f in facts]


def test_each_fact_once_none_excluded_in_stream_order() -> None:
    streams = Streams(["a", "b", "c"], ["b", "d", "a", "e"])
    assert ids(facts_once(streams, ["user"], 10, exclude={"c"})) == ["a", "b", "d", "e"]
    assert streams.opened == [(0, 10), (1, 8)]


def test_stops_reading_at_the_limit() -> None:
    streams = Streams(["a", "b"], ["c", "d", "e"], ["f"])
    assert ids(facts_once(streams, ["user"], 3)) == ["a", "b", "c"]
    assert streams.opened == [(0, 3), (1, 1)]
    assert streams.read == {0: 2, 1: 1}


def test_nothing_opened_without_roles_or_limit() -> None:
    for roles, limit in (([], 5), (["user"], 0), (["user"], -1)):
        streams = Streams(["a"])
        assert ids(facts_once(streams, roles, limit)) == []
        assert streams.opened == []


def test_resolve_keys_and_aliases_by_liveness() -> None:
    aliased = {"cara": "caroline", "old": "gone"}
    live = {"caroline", "mel"}
    found = resolve(["caroline", "mel", "nobody", "cara", "old"], aliased, live)
    assert found == {"caroline": "caroline", "mel": "mel", "cara": "caroline"}
    # An alias is never resolved to itself, even if its own key were live.
    assert resolve(["cara"], {"cara": "gone"}, {"cara"}) == {}
