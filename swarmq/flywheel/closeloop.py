"""``flywheel close-loop``: one pass of the whole flywheel, safe to run again at any time.

1. **Ingest** pending Markdown into the pool, scored and tiered.
2. **Feedback**: citations that judge an artifact move its utility (each applied once).
3. **Confirm**: a candidate whose failure recurred in another session is cited as confirmed
   (:func:`swarmq.flywheel.confirm.confirm_recurrences`).
4. **Promote**: discard-tier candidates are rejected (kept for audit); candidates that pass the
   gates are staged and graduate to learnings or patterns, deduplicated by content hash, and
   (when a knowledge store is wired in) become swarm-tier entries — a provisional entry of the
   candidate is confirmed in place.
5. **Provisional**: high-confidence candidates not yet confirmed are published to the knowledge
   store marked provisional; those refuted or unconfirmed for ``provisional_days`` are retired.
6. **Mature**: learnings expire, decay, change maturity, or are evicted to the archive.
7. **Measure**: σ, ρ, δ, escape velocity, golden signals; today's baseline is kept.

Every time-based rule reads ``now`` (the sessions' own clock when a replay gives one).

Each step takes only the store locks it needs, in the documented order, so forge runs, lookups
and CLI reviews can interleave with a long close loop.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from swarmq.flywheel._feedback import apply_feedback
from swarmq.flywheel._ingest import ingest_pending
from swarmq.flywheel._maturity import (
    decay_text,
    is_evictable,
    is_expired,
    transition_for,
    transition_text,
)
from swarmq.flywheel._provisional import provisional_pass
from swarmq.flywheel.artifacts import learning_files, learning_from_text, read_learning
from swarmq.flywheel.bridge import (
    PROVISIONAL_ENTRY,
    BridgeOutcome,
    LessonSink,
    confirm_provisional,
)
from swarmq.flywheel.citations import CitationStats, citation_stats
from swarmq.flywheel.config import FlywheelConfig
from swarmq.flywheel.confirm import Signer, confirm_recurrences
from swarmq.flywheel.content import content_hash
from swarmq.flywheel.intents import Intent, PublishIntents
from swarmq.flywheel.metrics import compute_metrics, write_baseline
from swarmq.flywheel.model import Maturity, PoolStatus, QualityTier, rfc3339
from swarmq.flywheel.pool import CandidateConflict, Pool, PoolEntry, PoolError
from swarmq.flywheel.promoted import PromotedIndex
from swarmq.flywheel.promotion import Promotion, gate_for, promote
from swarmq.flywheel.store import AgentsLayout, DirSync, rename_file, write_file
from swarmq.knowledge.signature import failure_signature
from swarmq.storage.locking import Lease, StoreLocks


@dataclass
class MaturityResult:
    scanned: int = 0
    decayed: int = 0
    transitions: list[dict[str, str]] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "scanned": self.scanned,
            "decayed": self.decayed,
            "transitions": self.transitions,
            "expired": self.expired,
            "evicted": self.evicted,
        }


@dataclass
class CloseLoopResult:
    queue: dict[str, Any] = field(default_factory=dict)
    """What forging AgentOps' session-close queue added first (empty when the caller did not)."""
    ingest: dict[str, Any] = field(default_factory=dict)
    feedback: dict[str, Any] = field(default_factory=dict)
    recurrences: list[dict[str, Any]] = field(default_factory=list)
    """Confirmations by a failure seen again in another session (citation lines)."""
    rejected_discard: int = 0
    promoted: list[Promotion] = field(default_factory=list)
    held: Counter[str] = field(default_factory=Counter)
    age_gate_opens: datetime | None = None
    """When the first candidate held only for its age (younger than ``promotion_age_hours`` and
    not confirmed by another session) becomes old enough: the next close loop worth running."""
    promotion_age_hours: float = 0.0
    knowledge: list[dict[str, Any]] = field(default_factory=list)
    """Knowledge-store outcomes: promotions published or confirmed, provisional entries added
    or retired."""
    maturity: MaturityResult = field(default_factory=MaturityResult)
    metrics: dict[str, Any] = field(default_factory=dict)
    baseline: str | None = None
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "ingest": self.ingest,
            "feedback": self.feedback,
            "recurrences": [
                {k: r.get(k) for k in ("artifact_path", "session_id", "query")}
                for r in self.recurrences
            ],
            "rejected_discard": self.rejected_discard,
            "promoted": [p.as_dict() for p in self.promoted],
            "held": dict(self.held),
            "age_gate_opens_at": rfc3339(self.age_gate_opens) if self.age_gate_opens else None,
            "promotion_age_hours": self.promotion_age_hours,
            "knowledge": self.knowledge,
            "maturity": self.maturity.as_dict(),
            "metrics": {
                k: self.metrics.get(k)
                for k in (
                    "sigma",
                    "rho",
                    "delta",
                    "sigma_rho",
                    "velocity",
                    "above_escape_velocity",
                    "status",
                    "health",
                )
            },
            "baseline": self.baseline,
            "problems": self.problems,
            "seconds": round(self.seconds, 3),
        }


FLUSH_EVERY = 200
"""Promotions or rejections between two flushes of directory fsyncs, index and chain lines."""


def _held_reason(reason: str) -> str:
    for word in ("rejected", "never graduates", "age", "bronze", "cited"):
        if word in reason:
            return {"cited": "citations", "never graduates": "tier"}.get(word, word)
    return "other"


def promote_eligible(
    layout: AgentsLayout,
    locks: StoreLocks,
    config: FlywheelConfig,
    result: CloseLoopResult,
    *,
    now: datetime,
    stats: CitationStats | None = None,
    intents: PublishIntents | None = None,
) -> None:
    """Reject discard-tier candidates and promote those the gates pass; with ``intents``, each
    promotion that will be published is journaled durably before any learning is written."""
    stats = stats or citation_stats(layout)
    pool = Pool(layout)
    promoted = PromotedIndex(layout)
    rules = config.gate_rules()
    result.promotion_age_hours = rules.promotion_age_hours
    with (
        locks.hold(layout.pool_lock) as pool_lease,
        locks.hold(layout.learnings_lock) as learnings_lease,
    ):
        pool.start_batch()
        promoted.buffer = []
        changed = 0

        def flush() -> None:  # files durable first, then the index and the chain that name them
            assert pool.sync is not None
            pool.sync.flush()
            promoted.flush(pool_lease)
            pool.flush(pool_lease)

        try:
            eligible: list[PoolEntry] = []
            for entry in list(pool.entries()):
                if entry.status in (PoolStatus.REJECTED, PoolStatus.ARCHIVED):
                    continue
                if entry.tier == QualityTier.DISCARD and config.reject_discard:
                    pool.reject(
                        entry,
                        "tier discard: score below 0.50",
                        reviewer="swarmq close-loop",
                        lease=pool_lease,
                    )
                    result.rejected_discard += 1
                    changed += 1
                    if changed % FLUSH_EVERY == 0:
                        flush()
                    continue
                gate = gate_for(entry, stats, now, rules)
                if gate.passed:
                    eligible.append(entry)
                else:
                    why = _held_reason(gate.reason)
                    result.held[why] += 1
                    added = entry.added_at
                    if why == "age" and added is not None:
                        opens = added + timedelta(hours=rules.promotion_age_hours)
                        if result.age_gate_opens is None or opens < result.age_gate_opens:
                            result.age_gate_opens = opens
            if intents is not None:
                intents.begin(_to_publish(eligible, promoted), lease=pool_lease, now=now)
            for entry in eligible:
                try:
                    result.promoted.append(
                        promote(
                            pool,
                            entry,
                            promoted,
                            pool_lease=pool_lease,
                            learnings_lease=learnings_lease,
                            now=now,
                            stage=True,
                        )
                    )
                    changed += 1
                except PoolError as exc:
                    result.problems.append(str(exc))
                if changed % FLUSH_EVERY == 0:
                    flush()
        finally:
            flush()
        result.problems += pool.problems
        if promoted.corrupt_lines:
            result.problems.append(
                f"{promoted.path}: {promoted.corrupt_lines} unreadable line(s) skipped"
            )


def _to_publish(eligible: list[PoolEntry], promoted: PromotedIndex) -> list[Intent]:
    """The promotions the bridge will publish: a body not yet promoted (the first of a batch's
    equal bodies), or a candidate with a provisional entry to confirm."""
    seen: set[str] = set()
    out = []
    for entry in eligible:
        digest = content_hash(entry.content)
        fresh = digest not in seen and promoted.lookup(digest) is None
        seen.add(digest)
        if fresh or _has_provisional(entry.candidate):
            out.append(Intent(entry.id, digest, entry.candidate))
    return out


def replay_intents(
    layout: AgentsLayout, locks: StoreLocks, sink: LessonSink, config: FlywheelConfig
) -> list[dict[str, Any]]:
    """Publish what an interrupted close loop promoted but never published; close the intents
    whose promotion never landed (their candidates are promoted again)."""
    journal = PublishIntents(layout)
    if not journal.path.exists():
        return []
    with locks.hold(layout.pool_lock) as lease:
        index = PromotedIndex(layout)
        landed: list[tuple[Intent, str]] = []
        void: list[tuple[str, str]] = []
        for intent in journal.pending():
            found = index.lookup(intent.content_hash) if intent.content_hash else None
            if found is None:
                void.append((intent.candidate_id, "void"))
            else:
                landed.append((intent, found[0]))
        journal.finish(void, lease=lease)
    outcomes = []
    for intent, artifact in landed:
        outcome = confirm_provisional(
            sink,
            artifact,
            intent.candidate,
            validation_mode=config.knowledge_bridge_validation.value,
        )
        outcomes.append(outcome)
    _close(
        layout,
        locks,
        journal,
        [(i.candidate_id, o) for (i, _a), o in zip(landed, outcomes, strict=True)],
    )
    return [{**o.as_dict(), "replayed": True} for o in outcomes]


def _close(
    layout: AgentsLayout,
    locks: StoreLocks,
    journal: PublishIntents,
    published: list[tuple[str, BridgeOutcome]],
) -> None:
    """Close the intents the store answered; a ``failed`` publication stays open for the next
    run."""
    closed = [(ident, o.outcome) for ident, o in published if o.outcome != "failed"]
    if closed or journal.path.exists():
        with locks.hold(layout.pool_lock) as lease:
            journal.finish(closed, lease=lease)


def mature(
    layout: AgentsLayout,
    locks: StoreLocks,
    config: FlywheelConfig,
    *,
    now: datetime,
    stats: CitationStats | None = None,
) -> MaturityResult:
    """Expire, decay, transition and evict every learning and pattern (learnings lock)."""
    out = MaturityResult()
    last_cited = (stats or citation_stats(layout)).last_cited if config.evict else {}
    sync = DirSync()
    with locks.hold(layout.learnings_lock) as lease:
        try:
            _mature_files(layout, config, now, lease, sync, last_cited, out)
        finally:
            sync.flush()
    return out


def _mature_files(
    layout: AgentsLayout,
    config: FlywheelConfig,
    now: datetime,
    lease: Lease | None,
    sync: DirSync,
    last_cited: dict[str, datetime],
    out: MaturityResult,
) -> None:
    for path in learning_files(layout.learnings, layout.patterns):
        learning = read_learning(path)
        if learning is None:
            continue
        out.scanned += 1
        original = learning.text
        if config.expire and is_expired(learning, now):
            out.expired.append(str(_archive(layout, path, lease)))
            continue
        text = learning.text
        # Protection from eviction is judged before this pass demotes anything: an
        # established learning gets one pass as a candidate to recover.
        was_established = learning.maturity == Maturity.ESTABLISHED
        if config.decay_confidence and (decayed := decay_text(learning, now)) is not None:
            text = decayed
            out.decayed += 1
            learning = learning_from_text(path, text) or learning
        transition = transition_for(learning)
        if transition.transitioned:
            text = transition_text(learning, transition, now)
            learning = learning_from_text(path, text) or learning
            out.transitions.append(
                {
                    "path": str(path),
                    "from": transition.old,
                    "to": transition.new,
                    "reason": transition.reason,
                }
            )
        if text != original:
            write_file(path, text, lease=lease, store=path.parent, mode=0o644, sync=sync)
        key = os.path.normpath(str(path))
        if (
            config.evict
            and not was_established
            and is_evictable(learning, last_cited.get(key), now, stale_days=config.stale_days)
        ):
            out.evicted.append(str(_archive(layout, path, lease)))


def _archive(layout: AgentsLayout, path: Path, lease: Lease | None) -> Path:
    target = layout.archive / path.name
    if target.exists():
        digest = hashlib.sha256(str(path).encode()).hexdigest()[:8]
        target = layout.archive / f"{path.stem}-{digest}{path.suffix}"
    rename_file(path, target, lease=lease, store=path.parent)
    return target


def close_loop(
    layout: AgentsLayout,
    locks: StoreLocks,
    config: FlywheelConfig | None = None,
    *,
    sink: LessonSink | None = None,
    now: datetime | None = None,
    baseline: bool = True,
    signer: Signer = failure_signature,
) -> CloseLoopResult:
    """One pass; ``now`` is the clock every gate reads (the sessions' own in a replay)."""
    config = config or FlywheelConfig()
    now = now or datetime.now(UTC)
    started = time.monotonic()
    result = CloseLoopResult()
    ingest = ingest_pending(layout, locks, now=now, signer=signer)
    result.ingest = ingest.as_dict()
    result.problems += ingest.problems
    result.feedback = apply_feedback(layout, locks, now=now).as_dict()
    result.recurrences = confirm_recurrences(layout, locks, signer=signer, now=now)
    stats = citation_stats(layout)  # one pass over citations.jsonl for the gates and eviction
    bridge = sink if config.knowledge_bridge else None
    intents = None if bridge is None else PublishIntents(layout)
    if bridge is not None:
        result.knowledge += replay_intents(layout, locks, bridge, config)
    promote_eligible(layout, locks, config, result, now=now, stats=stats, intents=intents)
    if bridge is not None and intents is not None:
        published = []
        for promotion in result.promoted:
            if not promotion.deduplicated or _has_provisional(promotion.candidate):
                outcome = confirm_provisional(
                    bridge,
                    promotion.artifact_path,
                    promotion.candidate,
                    validation_mode=config.knowledge_bridge_validation.value,
                )
                published.append((promotion.candidate_id, outcome))
                result.knowledge.append(outcome.as_dict())
        _close(layout, locks, intents, published)
        if config.provisional:
            result.knowledge += provisional_pass(
                layout, locks, config, bridge, stats, now=now, signer=signer
            )
    result.maturity = mature(layout, locks, config, now=now, stats=stats)
    result.metrics = compute_metrics(
        layout, now=now, days=config.metrics_days, stale_days=config.stale_days
    )
    if baseline:
        result.baseline = str(write_baseline(layout, locks, result.metrics))
    result.seconds = time.monotonic() - started
    return result


def _has_provisional(candidate: dict[str, Any]) -> bool:
    metadata = candidate.get("metadata")
    return isinstance(metadata, dict) and bool(metadata.get(PROVISIONAL_ENTRY))


def promote_candidate(
    layout: AgentsLayout,
    locks: StoreLocks,
    candidate_id: str,
    config: FlywheelConfig | None = None,
    *,
    force: bool = False,
    now: datetime | None = None,
) -> Promotion:
    """Promote one candidate now (``pool promote``): the gates apply unless ``force``."""
    config = config or FlywheelConfig()
    now = now or datetime.now(UTC)
    stats = citation_stats(layout)
    pool = Pool(layout)
    with (
        locks.hold(layout.pool_lock) as pool_lease,
        locks.hold(layout.learnings_lock) as learnings_lease,
    ):
        entry = pool.require(candidate_id)
        if entry.status in (PoolStatus.REJECTED, PoolStatus.ARCHIVED):
            raise CandidateConflict(
                f"{candidate_id}: a {entry.status.value} candidate cannot be promoted"
            )
        if not force:
            gate = gate_for(entry, stats, now, config.gate_rules())
            if not gate.passed:
                raise CandidateConflict(
                    f"{candidate_id}: held by the promotion gate ({gate.reason}); use --force to override"
                )
        staged = pool.stage(
            entry, min_tier=QualityTier.DISCARD if force else QualityTier.BRONZE, lease=pool_lease
        )
        return promote(
            pool,
            staged,
            PromotedIndex(layout),
            pool_lease=pool_lease,
            learnings_lease=learnings_lease,
            now=now,
        )


def reject_candidate(
    layout: AgentsLayout, locks: StoreLocks, candidate_id: str, reason: str, *, reviewer: str = ""
) -> str:
    """Reject one candidate (kept in ``pool/rejected`` for audit); returns its new path."""
    pool = Pool(layout)
    with locks.hold(layout.pool_lock) as lease:
        entry = pool.require(candidate_id)
        if entry.status is PoolStatus.REJECTED:
            raise CandidateConflict(f"{candidate_id}: already rejected")
        return str(pool.reject(entry, reason, reviewer=reviewer, lease=lease).path)
