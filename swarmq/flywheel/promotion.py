"""Promotion: the gates a candidate must pass, and graduating it to a learning or pattern.

Gates (all must hold): older than ``promotion_age_hours`` (24 h) or confirmed by a session
other than its own, confirmed at least ``min_citations`` times (once; a retrieval is exposure,
not a confirmation), tier gold or silver, or bronze with ``bronze_min_citations`` (3)
confirmations; discard never graduates. Promotion writes ``<YYYY-MM-DD>-<id>.md`` into
``.agents/patterns/`` (decisions) or ``.agents/learnings/`` (everything else) unless the body's
content hash is already promoted or archived, in which case the existing artifact stands. Either
way the pool file goes and a ``promote`` chain event records where the knowledge now lives.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from swarmq.flywheel.artifacts import render_artifact
from swarmq.flywheel.citations import CitationStats, pool_key
from swarmq.flywheel.config import GateRules
from swarmq.flywheel.content import content_hash
from swarmq.flywheel.model import KnowledgeType, PoolStatus, QualityTier
from swarmq.flywheel.pool import CandidateConflict, Pool, PoolEntry
from swarmq.flywheel.promoted import PromotedIndex
from swarmq.flywheel.store import AgentsLayout, write_file
from swarmq.storage.locking import Lease


@dataclass(frozen=True, slots=True)
class GateDecision:
    passed: bool
    reason: str


AGENTOPS_RULES = GateRules()
"""AgentOps' gates (``flywheel:`` defaults)."""


def source_session(entry: PoolEntry) -> str:
    """The session the candidate was learned in (``""`` when unknown)."""
    source = entry.candidate.get("source")
    return str(source.get("session_id") or "") if isinstance(source, dict) else ""


def confirmed_elsewhere(entry: PoolEntry, stats: CitationStats) -> bool:
    """Whether a session other than the candidate's own confirmed it."""
    return bool(stats.sessions(pool_key(entry.id)) - {source_session(entry), ""})


def gate_for(
    entry: PoolEntry, stats: CitationStats, now: datetime, rules: GateRules = AGENTOPS_RULES
) -> GateDecision:
    """:func:`promotion_gate` with the candidate's confirmations counted from ``stats``."""
    return promotion_gate(
        entry,
        stats.useful(pool_key(entry.id)),
        now,
        rules,
        elsewhere=confirmed_elsewhere(entry, stats),
    )


def promotion_gate(
    entry: PoolEntry,
    citations: int,
    now: datetime,
    rules: GateRules = AGENTOPS_RULES,
    *,
    elsewhere: bool = False,
) -> GateDecision:
    """Whether ``entry`` may graduate now, and why (not). ``citations`` counts confirmations;
    ``elsewhere`` says one came from a session other than the candidate's own, which is what the
    age gate waits for (one session's noise cannot confirm itself)."""
    if entry.status is PoolStatus.REJECTED:
        return GateDecision(False, "rejected")
    tier = entry.tier
    if tier not in (QualityTier.GOLD, QualityTier.SILVER, QualityTier.BRONZE):
        return GateDecision(False, f"tier {tier} never graduates")
    age = entry.age_hours(now)
    if age <= rules.promotion_age_hours and not (elsewhere and citations >= rules.min_citations):
        return GateDecision(False, f"age {age:.1f} h is not over {rules.promotion_age_hours:g} h")
    if citations < rules.min_citations:
        return GateDecision(False, f"cited {citations} times; needs {rules.min_citations}")
    if tier == QualityTier.BRONZE and citations < rules.bronze_min_citations:
        return GateDecision(
            False, f"bronze cited {citations} times; needs {rules.bronze_min_citations}"
        )
    if tier == QualityTier.BRONZE:
        return GateDecision(True, f"bronze with {citations} citations")
    return GateDecision(True, f"{tier} auto-promotes")


@dataclass(frozen=True, slots=True)
class Promotion:
    candidate_id: str
    artifact_path: str
    deduplicated: bool
    reason: str
    candidate: dict[str, Any] = field(default_factory=dict, compare=False)
    """The pool candidate as it graduated (for the knowledge-store bridge)."""

    def as_dict(self) -> dict[str, object]:
        return {
            "candidate_id": self.candidate_id,
            "artifact_path": self.artifact_path,
            "deduplicated": self.deduplicated,
            "reason": self.reason,
        }


def destination(layout: AgentsLayout, knowledge_type: str) -> Path:
    return layout.patterns if knowledge_type == KnowledgeType.DECISION else layout.learnings


def artifact_path(directory: Path, candidate_id: str, now: datetime) -> Path:
    day = now.astimezone(UTC).strftime("%Y-%m-%d")
    path = directory / f"{day}-{candidate_id}.md"
    if path.exists():
        suffix = hashlib.sha256(f"{candidate_id}{now.isoformat()}".encode()).hexdigest()[:8]
        path = directory / f"{day}-{candidate_id}-{suffix}.md"
    return path


def promote(
    pool: Pool,
    entry: PoolEntry,
    promoted: PromotedIndex,
    *,
    pool_lease: Lease | None,
    learnings_lease: Lease | None,
    now: datetime | None = None,
    stage: bool = False,
) -> Promotion:
    """Graduate a staged entry, or with ``stage`` a pending one (the caller holds the pool and
    learnings locks and has checked the gates)."""
    now = now or datetime.now(UTC)
    if entry.status is PoolStatus.PENDING and stage:
        # Staged and promoted in one step: the chain records both moves, but the pool file is
        # not rewritten into staged/ only to be removed a moment later.
        pool.chain(
            pool_lease,
            "stage",
            entry.id,
            from_status=PoolStatus.PENDING.value,
            to_status=PoolStatus.STAGED.value,
        )
        entry = PoolEntry(entry.data, PoolStatus.STAGED, entry.path)
    if entry.status is not PoolStatus.STAGED:
        raise CandidateConflict(
            f"{entry.id}: only staged candidates are promoted (status {entry.status.value})"
        )
    digest = content_hash(entry.content)
    known = promoted.lookup(digest)
    if known is not None:
        existing, reason = known
        pool.discard_file(entry, lease=pool_lease)
        pool.chain(
            pool_lease,
            "promote",
            entry.id,
            from_status=entry.status.value,
            to_status=PoolStatus.ARCHIVED.value,
            artifact_path=existing,
            reason=reason,
        )
        return Promotion(entry.id, existing, True, reason, entry.candidate)
    directory = destination(pool.layout, entry.type)
    path = artifact_path(directory, entry.id, now)
    write_file(
        path,
        render_artifact(entry.candidate, now),
        lease=learnings_lease,
        store=directory,
        mode=0o644,
        sync=pool.sync,
    )
    promoted.record(digest, path, entry.id, lease=pool_lease, when=now)
    pool.discard_file(entry, lease=pool_lease)
    pool.chain(
        pool_lease,
        "promote",
        entry.id,
        from_status=entry.status.value,
        to_status=PoolStatus.ARCHIVED.value,
        artifact_path=str(path),
    )
    return Promotion(entry.id, str(path), False, "promoted", entry.candidate)
