"""The vector index's rows of one (project, kind) in memory (vectors.py): exact
search multiplies the query by the whole matrix, so rows are kept contiguous (grown by
doubling, removed by moving the last row into the gap)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Matrix:
    """Rows of one (project, kind) in memory, grown by doubling, removed by swap."""

    dimensions: int
    version: int = -1
    ids: list[str] = field(default_factory=list)
    roles: list[str | None] = field(default_factory=list)
    # Each passage's message's storing position (None where not held): a hit carries it.
    positions: list[int | None] = field(default_factory=list)
    # Each passage's message's time (VectorItem.occurred_at; None: not held): likewise.
    times: list[str | None] = field(default_factory=list)
    rows: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    where: dict[str, int] = field(default_factory=dict)
    # Which rows each set of asked roles admits, made once per set until a row changes:
    # a recall's searches would otherwise test every row's role in Python.
    masks: dict[frozenset[str], np.ndarray] = field(default_factory=dict)
    # The text index's row numbers of these items (None: not read since a row changed):
    # a text search then reads no stored row of its matches for their ids and roles.
    text_ids: dict[int, str] | None = None

    def __post_init__(self) -> None:
        self.rows = np.zeros((16, self.dimensions), np.float32)

    def admitted(self, roles: Collection[str]) -> np.ndarray:
        wanted = frozenset(roles)
        mask = self.masks.get(wanted)
        if mask is None:
            mask = np.fromiter((r in wanted for r in self.roles), bool, len(self.ids))
            self.masks[wanted] = mask
        return mask

    def put(
        self,
        item_id: str,
        vector: np.ndarray,
        role: str | None,
        position: int | None = None,
        occurred_at: str | None = None,
    ) -> None:
        self.masks.clear()
        self.text_ids = None
        at = self.where.get(item_id)
        if at is None:
            at = len(self.ids)
            if at == len(self.rows):
                grown = np.zeros((2 * len(self.rows), self.dimensions), np.float32)
                grown[:at] = self.rows[:at]
                self.rows = grown
            self.ids.append(item_id)
            self.roles.append(role)
            self.positions.append(position)
            self.times.append(occurred_at)
            self.where[item_id] = at
        self.rows[at] = vector
        self.roles[at] = role
        self.positions[at] = position
        self.times[at] = occurred_at

    def remove(self, item_id: str) -> None:
        self.masks.clear()
        self.text_ids = None
        at = self.where.pop(item_id, None)
        if at is None:
            return
        last = len(self.ids) - 1
        if at != last:
            self.rows[at] = self.rows[last]
            self.ids[at] = self.ids[last]
            self.roles[at] = self.roles[last]
            self.positions[at] = self.positions[last]
            self.times[at] = self.times[last]
            self.where[self.ids[at]] = at
        self.ids.pop()
        self.roles.pop()
        self.positions.pop()
        self.times.pop()
