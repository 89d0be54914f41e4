"""Acknowledgement markers in agent output and what they do to entries.

``KNOWLEDGE_APPLIED|N_A|IGNORED|CONTRADICTED|VIOLATED:<trace_id>:<entry_id> [reason=…]``: each
marker is committed as a terminal receipt first (idempotent for a repeated outcome, rejected
when unknown, conflicting or late); only a newly committed terminal changes counters.
``n_a`` is neutral: it counts as an acknowledgement but never as an outcome.

``applied`` is also a confirmation (being shown is not): a swarm entry gets a phase
confirmation for the trace's phase (reinforcement rules), a hive entry this project's
encounter (opencode-swarm's weighted arithmetic, once per project). A committed result carries
the entry as changed and the trace's session, so the flywheel can feed an acknowledgement of a
lesson it produced back to that lesson (``swarmq.flywheel.confirm.record_acknowledgements``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from swarmq.knowledge._quarantine import clean_reason
from swarmq.knowledge.hive import encounter_updates
from swarmq.knowledge.inject import ledger
from swarmq.knowledge.model import Entry, Tier, normalize_outcomes
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.reinforcement import phase_confirmation, reinforce_entry

MARKER = re.compile(
    r"\bKNOWLEDGE_(APPLIED|N_A|IGNORED|CONTRADICTED|VIOLATED):([A-Za-z0-9_.-]{1,128}):"
    r"([A-Za-z0-9_.:-]{1,128}?)(?=$|[\s,;)\]])(?:[ \t]+reason=([^\n]*))?",
    re.MULTILINE,
)
COUNTERS = {
    "applied": "applied_explicit_count",
    "ignored": "ignored_count",
    "contradicted": "contradicted_count",
    "violated": "violated_count",
}


@dataclass(frozen=True, slots=True)
class Marker:
    outcome: str
    trace_id: str
    entry_id: str
    reason: str | None


@dataclass(frozen=True, slots=True)
class AckResult:
    marker: Marker
    status: str
    """``committed``, ``duplicate`` or ``rejected``."""
    detail: str | None = None
    entry: Entry | None = None
    """The entry as the committed acknowledgement left it (``None`` otherwise)."""
    session_id: str | None = None
    """The session the acknowledged trace was injected in, when it named one."""
    agent: str | None = None
    source: str | None = None
    """For a finding of another store shown in the trace (a learning, a pool candidate, a
    memory note): where it was read (the trace's ``sources``); ``entry`` is then ``None``."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.marker.outcome,
            "trace_id": self.marker.trace_id,
            "entry_id": self.marker.entry_id,
            "reason": self.marker.reason,
            "status": self.status,
            "detail": self.detail,
        }


def parse_markers(text: str) -> list[Marker]:
    out = []
    for match in MARKER.finditer(text):
        reason = (match.group(4) or "").strip() or None
        out.append(
            Marker(
                match.group(1).lower(),
                match.group(2),
                match.group(3),
                clean_reason(reason) if reason else None,
            )
        )
    return out


def acknowledge(
    knowledge: KnowledgeStore,
    text: str,
    *,
    source: str = "architect_marker",
    agent: str | None = None,
) -> list[AckResult]:
    """Commit every marker found in ``text`` and update the counters of committed ones."""
    journal = ledger(knowledge)
    results = []
    for marker in parse_markers(text):
        verdict = journal.commit_terminal(
            marker.trace_id,
            marker.entry_id,
            marker.outcome,
            reason=marker.reason,
            source=source,
            agent=agent,
        )
        if verdict.status == "committed":
            trace = verdict.trace or {}
            session = trace.get("session_id")
            session = session if isinstance(session, str) and session else None
            sources = trace.get("sources")
            if isinstance(sources, dict) and marker.entry_id in sources:
                # Not a knowledge entry: no counter to move; the flywheel feeds it back.
                where = str(sources[marker.entry_id])
                results.append(
                    AckResult(marker, "committed", verdict.reason, None, session, agent, where)
                )
                continue
            tiers = trace.get("tiers", {})
            store = knowledge.tier(str(tiers.get(marker.entry_id, "swarm")))
            phase = trace.get("phase")
            changed = _apply(
                store, marker, phase if isinstance(phase, int) else None, knowledge.project_name
            )
            if not changed:
                results.append(AckResult(marker, "committed", "entry no longer in the store"))
                continue
            results.append(AckResult(marker, "committed", verdict.reason, changed, session, agent))
            continue
        results.append(AckResult(marker, verdict.status, verdict.reason))
    return results


def _apply(store: Any, marker: Marker, phase: int | None, project: str) -> Entry | None:
    with store.transaction() as txn:
        entry: Entry | None = txn.get(marker.entry_id)
        if entry is None:
            return None
        at = store.now()
        outcomes = normalize_outcomes(entry.outcomes)
        outcomes["acknowledged_count"] = int(outcomes.get("acknowledged_count", 0)) + 1
        updates: dict[str, Any] = {"last_acknowledged_at": at}
        counter = COUNTERS.get(marker.outcome)
        if counter is not None:
            outcomes[counter] = int(outcomes.get(counter, 0) or 0) + 1
        if marker.outcome == "applied":
            updates["last_applied_at"] = at
        if marker.outcome == "violated":
            stamps = outcomes.get("violation_timestamps")
            stamps = [at, *(stamps if isinstance(stamps, list) else [])]
            outcomes["violation_timestamps"] = stamps[: store.config.max_violation_timestamps]
        updates["retrieval_outcomes"] = outcomes
        if marker.outcome == "applied":
            updates.update(_confirmation(store, entry, phase, project, at))
        changed: Entry = txn.put({**entry.data, **updates})
        return changed


def _confirmation(
    store: Any, entry: Entry, phase: int | None, project: str, at: str
) -> dict[str, Any]:
    """The fields an applied acknowledgement changes as a confirmation (none when the entry
    is inactive or this phase / project already confirmed it)."""
    if store.tier == Tier.HIVE:
        return encounter_updates(entry, project, at, store.config) or {}
    if phase is None:
        return {}
    confirmed, outcome = reinforce_entry(
        entry,
        phase_confirmation(phase, at, project),
        max_confirmed_by=store.config.max_confirmed_by,
    )
    if outcome != "reinforced":
        return {}
    keys = ("confirmed_by", "updated_at", "phases_alive", "confidence")
    return {k: confirmed.data[k] for k in keys}
