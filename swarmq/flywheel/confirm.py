"""Confirmation: what turns a forged candidate into knowledge is use, never exposure.

Being shown a lesson (``swarmq lookup``, an injection, a recall at a failure) is a ``retrieved``
citation: exposure, which moves σ but confirms nothing. A candidate is confirmed by:

* **recurrence** — the failure it is about happens again in another session. Hooks and the
  replay report each failing call with :func:`record_failure` (its normalised signature and the
  session, in ``.agents/ao/failures.jsonl``); a candidate forged in one session carries the
  signature of its failure, and :func:`confirm_recurrences` (run by the close loop) cites it
  once per other session the signature was seen in (``reference``, ``match_provenance:
  failure-recurrence``). Two candidates of one signature forged in two sessions confirm each
  other the same way;
* **use** — an agent acknowledges a lesson it was shown (``KNOWLEDGE_APPLIED``) and the lesson
  came from the flywheel (its knowledge entry's ``source_refs`` name a pool candidate or a
  learning): :func:`record_acknowledgements` cites it ``applied`` (reward 1: utility, σ and ρ
  move at the next close loop); ``KNOWLEDGE_CONTRADICTED`` cites it ``refuted`` (reward 0);
* **a person or an agent saying so** — ``lookup --cite-as helpful|applied``, ``pool promote``,
  or ``swarmq knowledge add`` (which writes the knowledge store directly).

Every confirmation is a line of AgentOps' ``citations.jsonl``, so ``ao`` reads it as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarmq.flywheel.citations import (
    CitationType,
    artifact_key,
    citation_event,
    display_path,
    iter_citations,
    pool_key,
    record_citations,
)
from swarmq.flywheel.model import PoolStatus, parse_time, rfc3339
from swarmq.flywheel.pool import Pool, PoolEntry
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.inject import Injection
from swarmq.knowledge.signature import failure_signature
from swarmq.storage.atomic import append_jsonl
from swarmq.storage.jsonl import JsonlLine, iter_jsonl
from swarmq.storage.locking import StoreLocks

if TYPE_CHECKING:  # the acknowledgements' write path: an injection's reader never imports it
    from swarmq.knowledge.acks import AckResult

Signer = Callable[[str], str | None]
"""Text → normalised failure signature (``swarmq.knowledge.signature.failure_signature``)."""

RECURRENCE = "failure-recurrence"
"""``match_provenance`` of a confirmation by a recurring failure."""
ACKNOWLEDGED = "knowledge-ack"
"""``match_provenance`` of a citation made by an acknowledgement marker."""
INJECTED = "knowledge-injection"
"""``match_provenance`` of the exposure citation of a flywheel lesson shown in a block."""
SIGNATURE_KEY = "failure_signature"
"""The candidate ``metadata`` key holding its failure signature (``""``: it has none)."""
HARNESS = re.compile(
    r"^(?:[\w.-]+: )?(?:string to replace (?:not found|is not unique)|input validation error|"
    r"file has not been read yet|file too large|failed to find expected lines|"
    r"invalid hunk header|failed to parse function arguments)"
)
"""Signatures of the agent's own editing harness (an Edit whose old string moved, a patch whose
context drifted, a tool call with bad arguments): every session makes them, whatever the
project, so their recurring says nothing about a lesson and does not confirm one."""
ACK_CITATION = {"applied": CitationType.APPLIED, "contradicted": CitationType.REFUTED}
"""Acknowledgement outcome → citation type; the others (n/a, ignored, violated) judge the
agent or the moment, not the lesson, and are not fed back."""


@dataclass(frozen=True, slots=True)
class FailureObservation:
    signature: str
    session_id: str
    observed_at: datetime

    def as_dict(self) -> dict[str, Any]:
        return {
            "signature": self.signature,
            "session_id": self.session_id,
            "observed_at": rfc3339(self.observed_at),
        }


def is_specific(signature: str | None) -> bool:
    """Whether a recurrence of ``signature`` can confirm a lesson (not the editing harness)."""
    return bool(signature) and HARNESS.match(str(signature)) is None


def candidate_signature(entry: PoolEntry, signer: Signer = failure_signature) -> str | None:
    """The candidate's failure signature: as recorded at ingest, else read from its content."""
    metadata = entry.candidate.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get(SIGNATURE_KEY), str):
        return str(metadata[SIGNATURE_KEY]) or None
    return signer(entry.content)


def record_failure(
    layout: AgentsLayout,
    locks: StoreLocks,
    text: str,
    *,
    session_id: str,
    when: datetime | None = None,
    signer: Signer = failure_signature,
) -> FailureObservation | None:
    """Note a failing call (its command and error in ``text``) seen in ``session_id`` at
    ``when`` (the session's clock; now by default). ``None`` when the text holds no
    recognisable failure. One appended line: cheap enough for a hook on every failing call;
    the close loop turns it into confirmations."""
    if not session_id:
        raise ValueError("session_id is required: a recurrence is a failure seen in two sessions")
    signature = signer(text)
    if not signature:
        return None
    observation = FailureObservation(signature, session_id, (when or datetime.now(UTC)))
    with locks.hold(layout.citations_lock) as lease:
        append_jsonl(layout.failures, [observation.as_dict()], lease=lease)
    return observation


def failure_observations(layout: AgentsLayout) -> Iterable[FailureObservation]:
    """The recorded failures (unreadable lines skipped)."""
    for item in iter_jsonl(layout.failures):
        if not isinstance(item, JsonlLine) or not isinstance(item.value, dict):
            continue
        value = item.value
        signature, session = value.get("signature"), value.get("session_id")
        observed = parse_time(value.get("observed_at"))
        if isinstance(signature, str) and signature and isinstance(session, str) and session:
            yield FailureObservation(
                signature, session, observed or datetime.min.replace(tzinfo=UTC)
            )


def confirm_recurrences(
    layout: AgentsLayout,
    locks: StoreLocks,
    *,
    signer: Signer = failure_signature,
    entries: list[PoolEntry] | None = None,
    now: datetime | None = None,
) -> list[dict[str, Any]]:
    """Cite every live candidate whose failure was seen in another session (once per candidate
    and session), dated when that session saw it (``now`` when nothing says); returns the
    citations written."""
    from swarmq.flywheel.promotion import source_session  # confirming, not an injection's read

    seen: dict[str, dict[str, datetime]] = {}
    for observation in failure_observations(layout):
        sessions = seen.setdefault(observation.signature, {})
        if (
            observation.session_id not in sessions
            or observation.observed_at < (sessions[observation.session_id])
        ):
            sessions[observation.session_id] = observation.observed_at
    live: list[tuple[PoolEntry, str, str]] = []
    for entry in entries if entries is not None else Pool(layout).entries():
        signature = candidate_signature(entry, signer)
        if not signature or not is_specific(signature):
            continue
        session = source_session(entry)
        if session:  # the candidate's own session saw the failure too
            source = entry.candidate.get("source")
            stamp = parse_time(source.get("timestamp")) if isinstance(source, dict) else None
            sessions = seen.setdefault(signature, {})
            sessions.setdefault(session, stamp or datetime.min.replace(tzinfo=UTC))
        if entry.status in (PoolStatus.PENDING, PoolStatus.STAGED):
            live.append((entry, signature, session))
    if not live:
        return []
    done = {
        (c.key, c.session_id)
        for c in iter_citations(layout)
        if c.raw.get("match_provenance") == RECURRENCE
    }
    root = layout.root.parent
    events = []
    for entry, signature, session in live:
        key = pool_key(entry.id)
        for other, observed in sorted(seen.get(signature, {}).items()):
            if other == session or (key, other) in done:
                continue
            done.add((key, other))
            events.append(
                citation_event(
                    display_path(root, entry.path),
                    other,
                    CitationType.REFERENCE,
                    query=signature,
                    match_provenance=RECURRENCE,
                    when=observed if observed.year > 1 else now,
                )
            )
    record_citations(layout, locks, events)
    return events


def flywheel_refs(layout: AgentsLayout, refs: Iterable[str]) -> list[str]:
    """The ``source_refs`` of a knowledge entry that name flywheel artifacts (a pool candidate,
    a learning or a pattern), in the repo-relative form citations use."""
    root = layout.root.parent
    stores = (layout.learnings, layout.patterns)
    out = []
    for ref in refs:
        key = artifact_key(root, ref)
        if key.startswith("pool:"):
            out.append(ref if not Path(ref).is_absolute() else display_path(root, Path(ref)))
        elif Path(key).parent in stores:
            out.append(display_path(root, Path(key)))
    return out


def acknowledgement_citations(
    layout: AgentsLayout, results: Iterable[AckResult], *, when: datetime | None = None
) -> list[dict[str, Any]]:
    """One citation per newly committed ``applied``/``contradicted`` acknowledgement of an
    entry that came from the flywheel, or of a learning or pool candidate a federated block
    showed itself (a duplicate marker was fed back the first time)."""
    events = []
    for result in results:
        kind = ACK_CITATION.get(result.marker.outcome)
        if result.status != "committed" or kind is None:
            continue
        if result.entry is not None:
            refs = flywheel_refs(layout, result.entry.strings("source_refs"))
        else:  # a learning or candidate the block showed itself
            refs = flywheel_refs(layout, [result.source]) if result.source else []
        session = result.session_id or f"trace-{result.marker.trace_id}"
        for ref in refs:
            events.append(
                citation_event(
                    ref,
                    session,
                    kind,
                    query=result.marker.entry_id,  # the entry or finding acknowledged
                    cited_by_agent_id=result.agent,
                    match_provenance=ACKNOWLEDGED,
                    when=when,
                )
            )
    return events


def exposure_citations(
    layout: AgentsLayout,
    injection: Injection,
    *,
    session_id: str | None = None,
    when: datetime | None = None,
) -> list[dict[str, Any]]:
    """One ``retrieved`` citation (exposure: σ moves, nothing is confirmed) per flywheel
    artifact behind an entry the injection showed."""
    session = session_id or f"trace-{injection.trace_id}"
    return [
        citation_event(
            ref,
            session,
            CitationType.RETRIEVED,
            query=ranked.entry.id,
            match_provenance=INJECTED,
            when=when,
        )
        for ranked in injection.shown
        for ref in flywheel_refs(layout, ranked.entry.strings("source_refs"))
    ]


def record_exposure(
    layout: AgentsLayout,
    locks: StoreLocks,
    injection: Injection,
    *,
    session_id: str | None = None,
    when: datetime | None = None,
) -> int:
    """Cite the flywheel lessons a recorded injection showed, as exposure; returns how many."""
    return record_citations(
        layout, locks, exposure_citations(layout, injection, session_id=session_id, when=when)
    )


def record_acknowledgements(
    layout: AgentsLayout,
    locks: StoreLocks,
    results: Iterable[AckResult],
    *,
    when: datetime | None = None,
) -> int:
    """Feed acknowledgements of flywheel lessons back as citations; returns how many."""
    return record_citations(layout, locks, acknowledgement_citations(layout, results, when=when))


__all__ = [
    "ACKNOWLEDGED",
    "RECURRENCE",
    "FailureObservation",
    "acknowledgement_citations",
    "candidate_signature",
    "confirm_recurrences",
    "exposure_citations",
    "failure_observations",
    "flywheel_refs",
    "is_specific",
    "record_acknowledgements",
    "record_exposure",
    "record_failure",
]
