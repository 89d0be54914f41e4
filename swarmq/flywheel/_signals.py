"""The four golden signals of flywheel health, with AgentOps' thresholds and verdicts.

* **Velocity trend**: least-squares slope of velocity over the baselines of the last 7 and 30
  days (≥ 3 baselines needed): > 0.01 compounding, < −0.01 decaying, else stagnant.
* **Citation pipeline**: share of feedback in the window with reward > 0.6 (> 60 % reinforcing,
  > 30 % inert, else degrading), median utility change, applied-to-retrieved ratio.
* **Research closure**: share of ``.agents/research/*.md`` never referenced from a learning or
  finding (≤ 10 % mining, < 50 % hoarding, else unmined; none at all is starved).
* **Reuse concentration**: Gini coefficient of citations across learnings and the share of
  learnings cited in the window (Gini < 0.4 with > 30 % active is distributed; Gini > 0.7 or
  < 10 % active is dormant; else concentrated).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


def gini(values: Sequence[float]) -> float:
    """G = 2·Σ i·yᵢ / (n·Σ y) − (n + 1)/n over ascending y (i from 1); 0 for no or zero mass."""
    ordered = sorted(values)
    n = len(ordered)
    total = sum(ordered)
    if n == 0 or total == 0:
        return 0.0
    weighted = sum((i + 1) * v for i, v in enumerate(ordered))
    return max(0.0, 2 * weighted / (n * total) - (n + 1) / n)


def slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope (0 when undefined)."""
    n = len(xs)
    if n < 2:
        return 0.0
    sx, sy = sum(xs), sum(ys)
    sxy = sum(x * y for x, y in zip(xs, ys, strict=True))
    sxx = sum(x * x for x in xs)
    denom = n * sxx - sx * sx
    return 0.0 if abs(denom) < 1e-12 else (n * sxy - sx * sy) / denom


def top10_bottom_ratio(ascending: Sequence[float]) -> float:
    n = len(ascending)
    start = n - n // 10
    if start == n:
        start = n - 1
    top, bottom = sum(ascending[start:]), sum(ascending[:start])
    if bottom > 0:
        return top / bottom
    return 999.0 if top > 0 else 0.0


@dataclass
class GoldenSignals:
    velocity_trend_7d: float = 0.0
    velocity_trend_30d: float = 0.0
    trend_verdict: str = "stagnant"
    high_utility_citation_pct: float = 0.0
    median_utility_delta: float = 0.0
    applied_to_retrieved_ratio: float = 0.0
    pipeline_verdict: str = "insufficient-data"
    orphaned_research_count: int = 0
    orphaned_research_pct: float = 0.0
    avg_orphan_age_days: float = 0.0
    closure_verdict: str = "starved"
    citation_gini: float = 0.0
    active_pool_pct: float = 0.0
    top10_bottom_ratio: float = 0.0
    concentration_verdict: str = "dormant"
    overall_verdict: str = "accumulating"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def velocity_trend(points: Sequence[tuple[float, float]]) -> tuple[float, float, str]:
    """``points`` are (age in days, velocity); slopes are negated so positive means improving."""
    if len(points) < 3:
        return 0.0, 0.0, "stagnant"
    ordered = sorted(points)
    week = [p for p in ordered if p[0] <= 7]
    month = [p for p in ordered if p[0] <= 30]
    trend7 = -slope([p[0] for p in week], [p[1] for p in week]) if len(week) >= 2 else 0.0
    trend30 = -slope([p[0] for p in month], [p[1] for p in month]) if len(month) >= 2 else 0.0
    ref = trend30 if len(month) >= 3 else trend7
    verdict = "compounding" if ref > 0.01 else "decaying" if ref < -0.01 else "stagnant"
    return trend7, trend30, verdict


def citation_pipeline(
    rewards: Sequence[tuple[float, float]], applied: int, retrieved: int
) -> tuple[float, float, float, str]:
    """``rewards`` are (reward, utility change) of the window's feedback."""
    total = applied + retrieved
    ratio = applied / total if total else 0.0
    if not rewards:
        return 0.0, 0.0, ratio, "insufficient-data"
    high = 100.0 * sum(1 for r, _ in rewards if r > 0.6) / len(rewards)
    deltas = sorted(d for _, d in rewards)
    n = len(deltas)
    median = (deltas[n // 2 - 1] + deltas[n // 2]) / 2 if n % 2 == 0 else deltas[n // 2]
    verdict = "reinforcing" if high > 60 else "inert" if high > 30 else "degrading"
    return high, median, ratio, verdict


_RESEARCH_REF = re.compile(r"\.agents/research/([A-Za-z0-9._/-]+\.md)")


def research_closure(
    research: Sequence[tuple[str, float]], referring_texts: Sequence[str]
) -> tuple[int, float, float, str]:
    """``research`` are (file name, age in days); a file is closed when some text names it."""
    if not research:
        return 0, 0.0, 0.0, "starved"
    refs: set[str] = set()
    for text in referring_texts:
        for match in _RESEARCH_REF.findall(text):
            base = Path(match).name
            refs.update({base, base.removesuffix(".md")})
    orphans = [
        (name, age)
        for name, age in research
        if name not in refs and name.removesuffix(".md") not in refs
    ]
    pct = 100.0 * len(orphans) / len(research)
    avg = sum(a for _, a in orphans) / len(orphans) if orphans else 0.0
    verdict = "mining" if pct <= 10 else "hoarding" if pct < 50 else "unmined"
    return len(orphans), pct, avg, verdict


def reuse_concentration(counts: Sequence[float]) -> tuple[float, float, float, str]:
    """``counts`` are the window's citation counts, one per learning (zeros included)."""
    if not counts:
        return 0.0, 0.0, 0.0, "dormant"
    active = 100.0 * sum(1 for c in counts if c > 0) / len(counts)
    g = gini(counts) if len(counts) > 1 else 0.0
    ratio = top10_bottom_ratio(sorted(counts)) if len(counts) >= 10 else 0.0
    verdict = (
        "distributed"
        if g < 0.4 and active > 30
        else "dormant"
        if g > 0.7 or active < 10
        else "concentrated"
    )
    return g, active, ratio, verdict


def overall_verdict(signals: GoldenSignals) -> str:
    positive = negative = 0
    for verdict, good, bad in (
        (signals.trend_verdict, {"compounding"}, {"decaying"}),
        (signals.pipeline_verdict, {"reinforcing"}, {"degrading"}),
        (signals.closure_verdict, {"mining"}, {"hoarding", "unmined"}),
        (signals.concentration_verdict, {"distributed"}, {"dormant"}),
    ):
        positive += verdict in good
        negative += verdict in bad
    if positive >= 3:
        return "compounding"
    if negative >= 3:
        return "decaying"
    return "accumulating"


def finite(value: float) -> float:
    return value if math.isfinite(value) else 0.0
