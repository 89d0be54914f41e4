"""``.agents/ao/citations.jsonl``: every time a learning or candidate is surfaced or used.

One JSON object per line in AgentOps' field order, appended under the citations lock by lookups,
acknowledgements and recurrences. Paths may be absolute or relative to the project root; a pool
candidate cited as ``.agents/pool/pending/<id>.json`` counts under its id in whatever pool
directory it is now. The file only grows, so it is streamed, never loaded whole.

Being shown is not being confirmed: a ``retrieved`` citation (a lookup, an injection) is
exposure. Only a confirming citation (:attr:`CitationType.CONFIRMING`: applied, helpful, used,
or a ``reference`` such as a recurrence of the candidate's failure) counts toward promotion.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from swarmq.flywheel.model import ZERO_TIME, parse_time, rfc3339
from swarmq.flywheel.store import AgentsLayout
from swarmq.storage.atomic import append_jsonl
from swarmq.storage.jsonl import JsonlLine, iter_jsonl
from swarmq.storage.locking import StoreLocks


class CitationType:
    """``citation_type`` values; the legacy ones are still read."""

    RETRIEVED = "retrieved"
    USED = "used-in-final-artifact"
    HELPFUL = "helpful"
    HARMFUL = "harmful"
    REFUTED = "refuted"
    APPLIED = "applied"
    REFERENCE = "reference"
    SKILL_LOADED = "skill_loaded"

    ALL = frozenset({RETRIEVED, USED, HELPFUL, HARMFUL, REFUTED, APPLIED, REFERENCE, SKILL_LOADED})
    REWARD = MappingProxyType({HELPFUL: 1.0, USED: 1.0, APPLIED: 1.0, HARMFUL: 0.0, REFUTED: 0.0})
    """Types that are feedback: the reward they carry into the utility update."""
    EVIDENCE = frozenset({HELPFUL, USED, APPLIED, REFERENCE})
    """Evidence-backed use (match confidence ≥ 0.7) for ρ."""
    CONFIRMING = EVIDENCE
    """Types that confirm a candidate (the promotion gate counts only these)."""


_POOL_PATH = re.compile(
    r"(?:^|/)\.agents/pool/(?:pending|staged|validated|rejected)/([A-Za-z0-9_-]+)\.json$"
)


def pool_key(candidate_id: str) -> str:
    return f"pool:{candidate_id}"


def artifact_key(project_root: Path, artifact_path: str) -> str:
    """One key per artifact however it was cited (absolute, relative, pool path)."""
    text = artifact_path.replace("\\", "/")
    match = _POOL_PATH.search(text)
    if match:
        return pool_key(match.group(1))
    path = Path(artifact_path)
    if not path.is_absolute():
        path = project_root / path
    return os.path.normpath(str(path))


def display_path(project_root: Path, path: Path) -> str:
    """Repo-relative form used in new citation lines (``.agents/learnings/x.md``)."""
    try:
        return str(path.relative_to(project_root))
    except ValueError:
        return str(path)


def citation_event(
    artifact_path: str,
    session_id: str,
    citation_type: str = CitationType.RETRIEVED,
    *,
    query: str | None = None,
    cited_by_agent_id: str | None = None,
    match_confidence: float | None = None,
    match_provenance: str | None = None,
    feedback_reward: float | None = None,
    when: datetime | None = None,
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "artifact_path": artifact_path,
        "session_id": session_id,
        "cited_at": rfc3339(when),
        "citation_type": citation_type,
    }
    if cited_by_agent_id:
        event["cited_by_agent_id"] = cited_by_agent_id
    if query:
        event["query"] = query
    if match_confidence:
        event["match_confidence"] = match_confidence
    if match_provenance:
        event["match_provenance"] = match_provenance
    if feedback_reward is not None:
        event["feedback_reward"] = feedback_reward
    event["feedback_at"] = ZERO_TIME
    return event


def record_citations(
    layout: AgentsLayout, locks: StoreLocks, events: Iterable[dict[str, Any]]
) -> int:
    """Append citation lines in one write under the citations lock; returns how many."""
    records = list(events)
    if not records:
        return 0
    with locks.hold(layout.citations_lock) as lease:
        append_jsonl(layout.citations, records, lease=lease)
    return len(records)


@dataclass
class Citation:
    key: str
    artifact_path: str
    session_id: str
    citation_type: str
    cited_at: datetime | None
    match_confidence: float
    raw: dict[str, Any]


def iter_citations(layout: AgentsLayout, *, corrupt: list[int] | None = None) -> Iterator[Citation]:
    """Stream the citations; line numbers of unreadable lines go to ``corrupt``."""
    root = layout.root.parent
    keys: dict[str, str] = {}  # the same artifacts are cited again and again
    for item in iter_jsonl(layout.citations):
        if not isinstance(item, JsonlLine) or not isinstance(item.value, dict):
            if corrupt is not None:
                corrupt.append(item.line_no)
            continue
        value = item.value
        path = value.get("artifact_path")
        if not isinstance(path, str) or not path:
            continue
        confidence = value.get("match_confidence")
        key = keys.get(path)
        if key is None:
            key = keys[path] = artifact_key(root, path)
        yield Citation(
            key,
            path,
            str(value.get("session_id") or ""),
            str(value.get("citation_type") or "").strip().lower(),
            parse_time(value.get("cited_at")),
            float(confidence) if isinstance(confidence, int | float) else 0.0,
            value,
        )


@dataclass
class CitationStats:
    counts: Counter[str] = field(default_factory=Counter)
    """Every citation, exposure included."""
    negative: Counter[str] = field(default_factory=Counter)
    """Harmful and refuted citations (they do not prove usefulness)."""
    confirming: Counter[str] = field(default_factory=Counter)
    """Confirming citations (:attr:`CitationType.CONFIRMING`)."""
    confirming_sessions: dict[str, set[str]] = field(default_factory=dict)
    """The sessions each artifact's confirmations came from."""
    last_cited: dict[str, datetime] = field(default_factory=dict)
    total: int = 0
    corrupt: list[int] = field(default_factory=list)

    def useful(self, key: str) -> int:
        """Citations that count toward the promotion gate: confirmations, never a retrieval."""
        return self.confirming[key]

    def sessions(self, key: str) -> set[str]:
        return self.confirming_sessions.get(key, set())


def citation_stats(layout: AgentsLayout, *, since: datetime | None = None) -> CitationStats:
    """Citation counts and the latest citation time per artifact key."""
    stats = CitationStats()
    for citation in iter_citations(layout, corrupt=stats.corrupt):
        when = citation.cited_at
        if since is not None and (when is None or when < since):
            continue
        stats.total += 1
        stats.counts[citation.key] += 1
        if citation.citation_type in (CitationType.HARMFUL, CitationType.REFUTED):
            stats.negative[citation.key] += 1
        elif citation.citation_type in CitationType.CONFIRMING:
            stats.confirming[citation.key] += 1
            stats.confirming_sessions.setdefault(citation.key, set()).add(citation.session_id)
        if when is not None and (
            citation.key not in stats.last_cited or when > stats.last_cited[citation.key]
        ):
            stats.last_cited[citation.key] = when
    return stats
