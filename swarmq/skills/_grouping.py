"""Grouping mature knowledge into skill-sized clusters.

Two ways, as in opencode-swarm: a caller that names source ids gets exactly one cluster of
those entries (their choice, the readiness gate is not re-applied); discovery groups mature
entries greedily by similarity: an entry joins the best cluster whose tag-set Jaccard or
lesson word-bigram Jaccard (:mod:`swarmq.similarity.text`) reaches the threshold.
Clusters of one survive only when singleton-eligible.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from swarmq.similarity.text import jaccard, word_bigrams
from swarmq.skills._readiness import singleton_eligible
from swarmq.skills.layout import SLUG_PATTERN, slugify

DEFAULT_SIMILARITY = 0.5


class SkillSource(Protocol):
    """What clustering and rendering read from an entry (``knowledge.model.Entry`` fits)."""

    @property
    def id(self) -> str: ...

    @property
    def lesson(self) -> str: ...

    @property
    def category(self) -> str: ...

    @property
    def tags(self) -> list[str]: ...

    @property
    def confidence(self) -> float: ...

    @property
    def status(self) -> str: ...

    @property
    def priority(self) -> str: ...

    @property
    def outcomes(self) -> dict[str, Any]: ...

    def phase_numbers(self) -> set[int]: ...

    def strings(self, key: str) -> list[str]: ...


def _unique(values: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        if value and value not in seen:
            seen[value] = None
    return list(seen)


@dataclass
class SkillCluster:
    """The entries one skill is compiled from, with their directives merged in order."""

    slug: str
    title: str
    entries: list[SkillSource]
    triggers: list[str] = field(default_factory=list)
    required_actions: list[str] = field(default_factory=list)
    forbidden_actions: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    verification_checks: list[str] = field(default_factory=list)

    @property
    def source_ids(self) -> list[str]:
        return [e.id for e in self.entries]

    @property
    def confidence(self) -> float:
        return sum(e.confidence for e in self.entries) / max(1, len(self.entries))

    @classmethod
    def of(
        cls, entries: Sequence[SkillSource], slug: str | None = None, title: str | None = None
    ) -> SkillCluster:
        def merged(key: str) -> list[str]:
            return _unique(v for e in entries for v in e.strings(key))

        triggers, required = merged("triggers"), merged("required_actions")
        first = entries[0] if entries else None
        seed = (
            triggers[:1]
            or required[:1]
            or (first.tags[:1] if first else [])
            or [first.category if first else "lesson"]
        )[0]
        candidate = slug or slugify(seed)
        if not SLUG_PATTERN.match(candidate):
            candidate = slugify(f"cluster-{seed[:12]}") or "cluster"
        name = (
            title
            or (
                triggers[:1]
                or required[:1]
                or [f"Lessons: {first.category if first else 'general'} ({len(entries)})"]
            )[0]
        )
        return cls(
            candidate,
            name,
            list(entries),
            triggers,
            required,
            merged("forbidden_actions"),
            merged("applies_to_agents"),
            merged("applies_to_tools"),
            merged("verification_checks"),
        )


def cluster_by_ids(
    entries: Iterable[SkillSource], ids: Sequence[str], slug: str | None = None
) -> tuple[SkillCluster | None, list[str]]:
    """One cluster of exactly the named entries (archived ones skipped); returns the missing ids."""
    by_id = {e.id: e for e in entries}
    chosen = [by_id[i] for i in _unique(ids) if i in by_id and by_id[i].status != "archived"]
    missing = [i for i in _unique(ids) if i not in by_id]
    return (SkillCluster.of(chosen, slug) if chosen else None), missing


def _similarity(entry: SkillSource, tags: set[str], bigrams: list[frozenset[str]]) -> float:
    own_tags = {t.lower() for t in entry.tags}
    tag_score = jaccard(own_tags, tags) if own_tags or tags else 0.0
    own = word_bigrams(entry.lesson)
    text_score = max((jaccard(own, other) for other in bigrams if own or other), default=0.0)
    return max(tag_score, text_score)


def discover_clusters(
    entries: Iterable[SkillSource], threshold: float = DEFAULT_SIMILARITY
) -> list[SkillCluster]:
    """Greedy similarity clustering of (already mature) entries, largest clusters first."""
    groups: list[tuple[list[SkillSource], set[str], list[frozenset[str]]]] = []
    for entry in entries:
        best, best_score = -1, 0.0
        for index, (_members, tags, bigrams) in enumerate(groups):
            score = _similarity(entry, tags, bigrams)
            if score > best_score:
                best, best_score = index, score
        if best >= 0 and best_score >= threshold:
            members, tags, bigrams = groups[best]
            members.append(entry)
            tags.update(t.lower() for t in entry.tags)
            bigrams.append(word_bigrams(entry.lesson))
        else:
            groups.append(([entry], {t.lower() for t in entry.tags}, [word_bigrams(entry.lesson)]))
    clusters = [
        SkillCluster.of(members)
        for members, _, _ in groups
        if len(members) >= 2 or singleton_eligible(members[0])
    ]
    clusters.sort(key=lambda c: (-len(c.entries), -c.confidence, c.slug))
    _dedupe_slugs(clusters)
    return clusters


def _dedupe_slugs(clusters: list[SkillCluster]) -> None:
    seen: set[str] = set()
    for cluster in clusters:
        base, n = cluster.slug, 2
        while cluster.slug in seen:
            suffix = f"-{n}"
            cluster.slug = base[: 64 - len(suffix)] + suffix
            n += 1
        seen.add(cluster.slug)
