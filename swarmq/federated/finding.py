"""What one store answered (:class:`Finding`) and what the fused answer holds (:class:`Fused`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from swarmq.flywheel.lookup import LookupHit
    from swarmq.knowledge.query import Ranked


class Store(StrEnum):
    """Where a finding lives, in the words of the store's own layout."""

    SWARM = "swarm"
    HIVE = "hive"
    LEARNING = "learning"
    PATTERN = "pattern"
    CANDIDATE = "candidate"
    WORKER_MEMORY = "worker-memory"
    SHARED_MEMORY = "shared-memory"
    OBSERVATION = "observation"
    """A failed probe of a missing path an earlier session resolved (never a lesson; shown
    only at a failing call that misses the same path: ``swarmq.flywheel.probes``)."""


LOOKUP_PREFERENCE = (
    Store.LEARNING,
    Store.PATTERN,
    Store.CANDIDATE,
    Store.SWARM,
    Store.HIVE,
    Store.WORKER_MEMORY,
    Store.SHARED_MEMORY,
    Store.OBSERVATION,
)
"""``lookup`` is the flywheel's verb: a fact it finds in both is shown as the artifact (the id
``swarmq pool show`` takes), with the knowledge entry beside it."""

PREFERENCE = (
    Store.SWARM,
    Store.HIVE,
    Store.LEARNING,
    Store.PATTERN,
    Store.CANDIDATE,
    Store.WORKER_MEMORY,
    Store.SHARED_MEMORY,
    Store.OBSERVATION,
)
"""Which finding stands for a fact found in several stores: a knowledge entry first (it is
what an acknowledgement names and what receipts count), then the flywheel's artifacts, then
memory notes."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One result of one store's own search, with what makes results of different stores
    comparable: the rank the store gave it and a relevance share in 0..1."""

    store: Store
    id: str
    """A knowledge entry's or flywheel artifact's own id (``learning:<digest>`` when that id is
    not marker-safe), ``memory:<digest>`` for a memory line: what a directive block shows and
    an acknowledgement quotes."""
    text: str
    """The whole lesson, body or memory line (redacted), never a display cut."""
    rank: int
    """1-based position in its store's answer."""
    relevance: float
    """The store's own relevance figure for the query, 0..1 (tie-break between stores)."""
    location: str
    """Where to read it: the artifact or memory file (``path:line``), or the tier."""
    links: frozenset[str] = frozenset()
    """Artifact keys (``swarmq.flywheel.citations.artifact_key``) naming the flywheel artifact
    this finding is or was bridged from: equal keys are one fact."""
    forced: bool = False
    """A critical directive whose trigger, tool or agent matched: shown first."""
    ranked: Ranked | None = None
    hit: LookupHit | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "store": self.store.value,
            "tier": self.store.value,
            "id": self.id,
            "lesson": self.text,
            "rank": self.rank,
            "relevance": round(self.relevance, 4),
            "location": self.location,
        }
        if self.ranked is not None:
            out["score_breakdown"] = self.ranked.breakdown
            out["forced"] = self.forced
        if self.hit is not None:
            out.update(
                kind=self.hit.kind,
                type=self.hit.type,
                utility=self.hit.utility,
                maturity=self.hit.maturity,
                path=self.hit.path,
                cite_as=self.hit.cite_as,
            )
        return out


@dataclass(frozen=True, slots=True)
class Fused:
    """One fact: the finding that stands for it, its fused score, and the same fact as other
    stores hold it."""

    finding: Finding
    score: float
    also: tuple[Finding, ...] = field(default=())

    @property
    def members(self) -> tuple[Finding, ...]:
        return (self.finding, *self.also)

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.finding.as_dict(),
            "score": round(self.score, 6),
            "also_in": [
                {"store": f.store.value, "id": f.id, "location": f.location} for f in self.also
            ],
        }
