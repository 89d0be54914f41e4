"""Flywheel metrics: does knowledge compound faster than it ages?  dK/dt = I − δ·K + σ·ρ·K.

* δ: average age in days of the learnings (the date they state, else the file's mtime);
* σ: retrieval coverage, distinct learnings/patterns cited in the window ÷ how many exist;
* ρ: decision influence, the share of those with an evidence-backed citation (helpful, used,
  applied, reference, or a match confidence ≥ 0.7; never harmful or refuted);
* escape velocity: σ·ρ > δ/100; status COMPOUNDING, NEAR ESCAPE (velocity > −0.05) or DECAYING;
  NO DATA while there is no learning or pattern at all.

A snapshot is kept per day as ``.agents/ao/metrics/baseline-<YYYY-MM-DD>.json``; the velocity
trend golden signal and ``flywheel status --plot`` read them back.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from swarmq.flywheel._learning_fields import learning_date
from swarmq.flywheel._signals import (
    GoldenSignals,
    citation_pipeline,
    overall_verdict,
    research_closure,
    reuse_concentration,
    velocity_trend,
)
from swarmq.flywheel.artifacts import Learning, learning_files, read_learning
from swarmq.flywheel.citations import CitationType, iter_citations
from swarmq.flywheel.model import POOL_DIRS, PoolStatus, parse_time, rfc3339
from swarmq.flywheel.store import AgentsLayout
from swarmq.storage.atomic import write_json_atomic
from swarmq.storage.boundedjson import loads_bounded
from swarmq.storage.jsonl import JsonlLine, iter_jsonl
from swarmq.storage.locking import StoreLocks

_TYPE_CONFIDENCE = {
    CitationType.HELPFUL: 0.9,
    CitationType.USED: 0.9,
    CitationType.APPLIED: 0.9,
    CitationType.REFERENCE: 0.7,
    CitationType.RETRIEVED: 0.5,
}
APPLIED_TYPES = frozenset({CitationType.APPLIED, "apply", CitationType.USED, CitationType.HELPFUL})
RETRIEVED_TYPES = frozenset({CitationType.RETRIEVED, "retrieve", "pulled", "pull"})


def normalise_match_confidence(value: float) -> float:
    """Snap a free-form match confidence to AgentOps' scale 0 / 0.5 / 0.7 / 0.9."""
    if value in (0.0, 0.5, 0.7, 0.9):
        return value
    if value >= 0.7:
        return 0.9
    if value >= 0.5:
        return 0.7
    return 0.5 if value > 0 else 0.0


def is_evidence(citation_type: str, match_confidence: float) -> bool:
    """An evidence-backed use: confidence ≥ 0.7, never harmful or refuted."""
    if citation_type in (CitationType.HARMFUL, CitationType.REFUTED):
        return False
    if match_confidence > 0:
        return normalise_match_confidence(match_confidence) >= 0.7
    return _TYPE_CONFIDENCE.get(citation_type, 0.0) >= 0.7


NO_DATA = "NO DATA"
"""The status while no learning or pattern exists: nothing can compound or decay yet."""


def escape_status(above: bool, velocity: float) -> str:
    if above:
        return "COMPOUNDING"
    return "NEAR ESCAPE" if velocity > -0.05 else "DECAYING"


def _age_days(path: Path, learning: Learning | None, now: datetime) -> float:
    moment = learning_date(learning) if learning is not None else None
    if moment is None:
        try:
            moment = datetime.fromtimestamp(path.stat().st_mtime, UTC)
        except OSError:
            return 0.0
    return max(0.0, (now - moment).total_seconds() / 86400.0)


def _count(directory: Path) -> int:
    try:
        return sum(
            1 for n in os.listdir(directory) if n.endswith(".json") and not n.startswith(".")
        )
    except FileNotFoundError:
        return 0


def compute_metrics(
    layout: AgentsLayout, *, now: datetime | None = None, days: int = 7, stale_days: int = 90
) -> dict[str, Any]:
    """Every figure of ``flywheel status`` for the window ``(now − days, now)``."""
    now = now or datetime.now(UTC)
    start = now - timedelta(days=days)
    root = layout.root.parent
    learnings = learning_files(layout.learnings)
    patterns = learning_files(layout.patterns)
    retrievable = {os.path.normpath(str(p)): p for p in learnings + patterns}
    ages: list[float] = []
    utilities: list[float] = []
    created: dict[str, datetime | None] = {}
    for path in learnings + patterns:
        learning = read_learning(path)
        age = _age_days(path, learning, now)
        if path.parent == layout.learnings:
            ages.append(age)
        if learning is not None:
            utilities.append(learning.utility)
        created[os.path.normpath(str(path))] = now - timedelta(days=age)

    period_counts: Counter[str] = Counter()
    by_name: Counter[str] = Counter()
    evidence: set[str] = set()
    last_cited: dict[str, datetime] = {}
    applied = retrieved = in_period = found = 0
    corrupt: list[int] = []
    for citation in iter_citations(layout, corrupt=corrupt):
        when = citation.cited_at
        if when is not None and (citation.key not in last_cited or when > last_cited[citation.key]):
            last_cited[citation.key] = when
        if when is None or not (start < when < now):
            continue
        in_period += 1
        period_counts[citation.key] += 1
        by_name[os.path.basename(citation.artifact_path)] += 1
        kind = citation.citation_type
        applied += kind in APPLIED_TYPES
        retrieved += kind in RETRIEVED_TYPES
        if "/learnings/" in citation.key.replace("\\", "/"):
            found += 1
        if citation.key in retrievable and is_evidence(kind, citation.match_confidence):
            evidence.add(citation.key)

    delta = sum(ages) / len(ages) if ages else 0.0
    unique_retrievable = sum(1 for key in period_counts if key in retrievable)
    sigma = min(1.0, unique_retrievable / len(retrievable)) if retrievable else 0.0
    rho = min(1.0, len(evidence) / unique_retrievable) if unique_retrievable else 0.0
    threshold = delta / 100.0 if delta > 0 else 0.0
    sigma_rho = sigma * rho
    velocity = sigma_rho - threshold
    above = sigma_rho > threshold
    new_artifacts = sum(1 for when in created.values() if when is not None and when > start)
    learnings_created = sum(
        1 for p in learnings if (c := created.get(os.path.normpath(str(p)))) and c > start
    )
    stale_cut = now - timedelta(days=stale_days)
    stale = sum(
        1 for key, made in created.items() if (last_cited.get(key) or made or now) <= stale_cut
    )
    mean = sum(utilities) / len(utilities) if utilities else 0.0
    std = math.sqrt(sum((u - mean) ** 2 for u in utilities) / len(utilities)) if utilities else 0.0

    signals = GoldenSignals()
    signals.velocity_trend_7d, signals.velocity_trend_30d, signals.trend_verdict = velocity_trend(
        [(age, v) for age, v in baseline_points(layout, now)]
    )
    (
        signals.high_utility_citation_pct,
        signals.median_utility_delta,
        signals.applied_to_retrieved_ratio,
        signals.pipeline_verdict,
    ) = citation_pipeline(_feedback_in(layout, start), applied, retrieved)
    (
        signals.orphaned_research_count,
        signals.orphaned_research_pct,
        signals.avg_orphan_age_days,
        signals.closure_verdict,
    ) = research_closure(*_research(layout, learnings, now))
    md_learnings = [p for p in learnings if p.suffix == ".md"]
    (
        signals.citation_gini,
        signals.active_pool_pct,
        signals.top10_bottom_ratio,
        signals.concentration_verdict,
    ) = reuse_concentration([float(by_name[p.name]) for p in md_learnings])
    signals.overall_verdict = overall_verdict(signals)
    # Nothing promoted yet: no velocity to judge (0 − 0 is not "near escape").
    status = escape_status(above, velocity) if retrievable else NO_DATA
    health = signals.overall_verdict.upper()
    return {
        "timestamp": rfc3339(now),
        "period_start": rfc3339(start),
        "period_end": rfc3339(now),
        "delta": delta,
        "sigma": sigma,
        "rho": rho,
        "sigma_rho": sigma_rho,
        "escape_threshold": threshold,
        "velocity": velocity,
        "above_escape_velocity": above,
        "status": status,
        "health": health,
        "total_artifacts": len(retrievable),
        "tier_counts": {
            "learning": len(learnings),
            "pattern": len(patterns),
            **{f"pool_{s.value}": _count(layout.pool / POOL_DIRS[s]) for s in PoolStatus},
        },
        "citations_this_period": in_period,
        "unique_cited_artifacts": len(period_counts),
        "new_artifacts": new_artifacts,
        "stale_artifacts": stale,
        "learnings_created": learnings_created,
        "learnings_found": found,
        "loop_closure_ratio": found / learnings_created if learnings_created else 0.0,
        "mean_utility": mean,
        "utility_std_dev": std,
        "high_utility_count": sum(1 for u in utilities if u > 0.7),
        "low_utility_count": sum(1 for u in utilities if u < 0.3),
        "corrupt_citation_lines": len(corrupt),
        "golden_signals": signals.as_dict(),
        "root": str(root),
    }


def _feedback_in(layout: AgentsLayout, start: datetime) -> list[tuple[float, float]]:
    out = []
    for item in iter_jsonl(layout.feedback):
        if not isinstance(item, JsonlLine) or not isinstance(item.value, dict):
            continue
        value = item.value
        when = parse_time(value.get("recorded_at"))
        if when is None or when < start:
            continue
        try:
            out.append(
                (
                    float(value.get("reward", 0.0)),
                    float(value.get("utility_after", 0.0))
                    - float(value.get("utility_before", 0.0)),
                )
            )
        except (TypeError, ValueError):
            continue
    return out


def _research(
    layout: AgentsLayout, learnings: list[Path], now: datetime
) -> tuple[list[tuple[str, float]], list[str]]:
    research = []
    for path in learning_files(layout.research):
        if path.suffix == ".md":
            research.append(
                (path.name, max(0.0, (now.timestamp() - path.stat().st_mtime) / 86400.0))
            )
    if not research:
        return [], []
    texts = []
    for path in [p for p in learnings if p.suffix == ".md"] + learning_files(
        layout.root / "findings"
    ):
        try:
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    return research, texts


def baseline_path(layout: AgentsLayout, moment: datetime) -> Path:
    return layout.metrics / f"baseline-{moment.astimezone(UTC).strftime('%Y-%m-%d')}.json"


def write_baseline(layout: AgentsLayout, locks: StoreLocks, metrics: dict[str, Any]) -> Path:
    """Keep today's snapshot (the latest run of a day replaces the earlier one)."""
    moment = parse_time(metrics.get("timestamp")) or datetime.now(UTC)
    path = baseline_path(layout, moment)
    with locks.hold(layout.metrics_lock) as lease:
        write_json_atomic(path, metrics, lease=lease)
    return path


def read_baselines(layout: AgentsLayout) -> list[dict[str, Any]]:
    """Every readable baseline, oldest first (unreadable ones are skipped, not removed)."""
    out = []
    try:
        names = sorted(os.listdir(layout.metrics))
    except FileNotFoundError:
        return []
    for name in names:
        if not (name.startswith("baseline-") and name.endswith(".json")):
            continue
        try:
            value = loads_bounded((layout.metrics / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(value, dict) and parse_time(value.get("timestamp")) is not None:
            out.append(value)
    out.sort(key=lambda v: parse_time(v["timestamp"]) or datetime.min.replace(tzinfo=UTC))
    return out


def baseline_points(layout: AgentsLayout, now: datetime) -> list[tuple[float, float]]:
    points = []
    for baseline in read_baselines(layout):
        when = parse_time(baseline.get("timestamp"))
        velocity = baseline.get("velocity")
        if when is not None and isinstance(velocity, int | float):
            points.append(((now - when).total_seconds() / 86400.0, float(velocity)))
    return points
