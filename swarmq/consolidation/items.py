"""The consolidation planner's vocabulary: the entries it compares (``Item``), the actions it
plans, and which pairs may be compared at all. Apart from :mod:`plan` so that the paraphrase
pass can use it without importing the planner that imports it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol


class ActionKind(StrEnum):
    MERGE = "merge"
    SUPERSEDE = "supersede"
    LINK = "link"


class Reason(StrEnum):
    EXACT = "exact_duplicate"
    DUPLICATE = "duplicate"
    CONFLICT = "conflict"
    CONTRADICTION = "contradiction"
    COMPLEMENT = "complement"
    PARAPHRASE = "paraphrase"


@dataclass(frozen=True, slots=True)
class Item:
    """What the planner knows of one active entry."""

    id: str
    text: str
    """The text compared (a lesson, or a learning's canonical body)."""
    created: str
    """Sortable creation time (ISO 8601; empty sorts as oldest)."""
    order: int
    """Position in the store: the tie-breaker of age (lower = older)."""
    strength: tuple[float, ...] = ()
    """Larger is stronger (status, confirmations, confidence ...)."""
    fingerprint: str | None = None
    """Exact-content key (AgentOps' content hash), when the store has one."""
    apart: frozenset[str] = frozenset()
    """Ids this entry must never be merged with or superseded by (a restored decision)."""
    template: str | None = None
    """Kind and fields of a machine-generated entry (see ``templates``), else ``None``."""
    project: str | None = None
    """The project an entry belongs to, where projects must stay apart (swarm tier)."""

    @property
    def age_key(self) -> tuple[str, int]:
        return (self.created, self.order)


@dataclass(frozen=True, slots=True)
class Action:
    kind: ActionKind
    keep: str
    """Survivor (merge), the newer entry (supersede), or one end (link)."""
    other: str
    """The entry merged away or superseded, or the other end of a link."""
    similarity: float
    reason: Reason
    round: int
    scores: dict[str, float | str] = field(default_factory=dict, compare=False)
    """Why: the measures behind the decision (bigram Jaccard, term Jaccard, TF-IDF cosine,
    template key), for the reviewer."""


@dataclass
class Plan:
    actions: list[Action] = field(default_factory=list)
    rounds: int = 0
    converged: bool = True
    compared: int = 0
    """Active entries in the last round."""
    texts: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    """Each compared entry's text as the planner first saw it, so a reviewer of a dry run reads
    what each action would merge, supersede or link, not just two ids."""

    def counts(self) -> dict[str, int]:
        counts = Counter(a.reason.value for a in self.actions)
        return {reason.value: counts.get(reason.value, 0) for reason in Reason}

    @property
    def changes(self) -> bool:
        return bool(self.actions)


class Population(Protocol):
    """A store being consolidated, as the planner sees and changes it (in memory)."""

    def items(self) -> list[Item]:
        """The active entries now, in store order."""
        ...

    def item(self, entry_id: str) -> Item:
        """One entry now (as this run's actions so far left it), without building the rest:
        the planner looks a survivor up again after each merge of a round."""
        ...

    def apply(self, action: Action) -> bool:
        """Apply one action to the in-memory state; ``False`` when it changed nothing."""
        ...


Contradicts = Callable[[str, str], bool]
"""Whether two texts oppose each other (asked only for pairs the join found)."""


def comparable(a: Item, b: Item) -> bool:
    """Whether two entries may be merged, superseded or linked at all (structure and scope)."""
    if a.project and b.project and a.project != b.project:
        return False
    if a.template is not None or b.template is not None:
        return a.template == b.template
    return b.id not in a.apart and a.id not in b.apart


def stronger(a: Item, b: Item) -> Item:
    """The survivor of a merge: the stronger one; on a tie, the older one."""
    if a.strength != b.strength:
        return a if a.strength > b.strength else b
    return a if a.age_key <= b.age_key else b


def newer(a: Item, b: Item) -> Item:
    return a if a.age_key > b.age_key else b
