"""Hybrid retrieval's cosines as the ranking receives them: exact where known, else bounded.

At 1M entries a query's lexical hits run to tens of thousands, and the exact cosine of each is
a read of its row; but the ranking only needs the exact value where it decides something:
whether a hit reaches the dense floor when its bounds straddle it, and the totals of the few
candidates that can still enter the answer. The persisted index's scan gives every row's
cosine within a proven radius for free (:mod:`swarmq.knowledge._vecindex`), so hits start as
intervals and :meth:`DenseCosines.resolve` makes exact the ones the ranking asks for. A mirror
holds every vector in memory and gives exact values only (no intervals).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Wanted:
    """The lexical hits whose bounded cosines a ranking above a relevance floor can read: those
    whose upper bound reaches the dense ``floor`` (relevant, or straddling it), and every slot
    of ``kept`` (the hits relevant by their words, and the matched directives, whose cosines
    score them whatever they are). Any other hit's bounds lie below the dense floor and it is
    neither relevant nor scored, so its bounds are never read: a view may leave them out
    (at 100k entries a query's hits run to thousands, the ones read to a few hundred)."""

    floor: float
    kept: frozenset[int]


@dataclass(slots=True)
class DenseCosines:
    """The cosines of one tier's query: every slot in ``exact`` or ``bounds`` has a vector."""

    exact: dict[int, float]
    """Exact cosines: the nearest rows and whatever was resolved since."""
    bounds: dict[int, tuple[float, float]] = field(default_factory=dict)
    """``(lower, upper)`` around the exact cosine of lexical hits not yet resolved."""
    reader: Callable[[list[int]], dict[int, float]] | None = None
    """The exact cosines of slots in ``bounds`` (required when ``bounds`` is not empty)."""

    def __contains__(self, slot: int) -> bool:
        return slot in self.exact or slot in self.bounds

    def resolve(self, slots: Iterable[int]) -> None:
        """Make the cosines of ``slots`` exact (those already exact or without a vector are
        left as they are)."""
        todo = sorted({slot for slot in slots if slot in self.bounds})
        if not todo:
            return
        assert self.reader is not None, "bounded cosines without a reader"
        found = self.reader(todo)
        for slot in todo:
            self.exact[slot] = found[slot]
            del self.bounds[slot]

    def interval(self, slot: int) -> tuple[float, float] | None:
        """``(lower, upper)`` of the slot's cosine (equal when exact), ``None`` without one."""
        value = self.exact.get(slot)
        if value is not None:
            return value, value
        return self.bounds.get(slot)
