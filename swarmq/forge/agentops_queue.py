"""Forging AgentOps' session-close queue (``.agents/ao/pending.jsonl``).

AgentOps cuts ``decisions`` and ``knowledge`` snippets out of each closing session, at keyword
matches, and queues them with the session's summary. They are not yet knowledge: cut mid-word,
often narration. Each snippet goes through forge's classifier, with the queue's own label as the
lead-in ("Decision:" / "Lessons learned:") and the same threshold; the accepted ones become a
pending file like a transcript's, with the session and transcript the queue names as their source.
Idempotent like forging a transcript: the ledger key is the queue file, its content hashes are
indexed. :func:`close_loop_with_queue` is what the CLI and the scheduled job run: the queue is
forged first, so its snippets are ingested in the same pass.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from swarmq.flywheel.bridge import LessonSink
from swarmq.flywheel.closeloop import CloseLoopResult, close_loop
from swarmq.flywheel.config import FlywheelConfig
from swarmq.flywheel.content import content_hash
from swarmq.flywheel.sessions import Problems, pending_queue_path, queued_snippets
from swarmq.flywheel.store import AgentsLayout
from swarmq.forge._pending_file import ForgedCandidate
from swarmq.forge.classifier import classify
from swarmq.forge.config import ForgeConfig
from swarmq.forge.extract import EMPTY_HASH
from swarmq.forge.ledger import ForgeResult, already_forged, write_candidates
from swarmq.storage.locking import StoreLocks

LEADS = {"decision": "Decision:", "learning": "Lessons learned:"}
FORMAT = "agentops-queue"


def forge_queue(
    layout: AgentsLayout,
    locks: StoreLocks,
    config: ForgeConfig | None = None,
    *,
    force: bool = False,
    now: datetime | None = None,
) -> ForgeResult:
    """Forge the queue's snippets into a pending file (nothing happens when the queue is absent
    or unchanged since the last run)."""
    config = config or ForgeConfig()
    path = pending_queue_path(layout)
    result = ForgeResult(str(path), str(path), format=FORMAT)
    if not path.is_file():
        result.status = "absent"
        return result
    stat = path.stat()
    fingerprint = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    if not force and already_forged(layout, str(path), fingerprint):
        result.status = "unchanged"
        return result
    problems = Problems()
    found: list[ForgedCandidate] = []
    seen: set[str] = set()
    for record, kind, text in queued_snippets(layout, problems):
        result.passages += 1
        verdict = classify(text, min_confidence=config.min_confidence, lead=LEADS[kind])
        if not verdict.accepted or verdict.type is None:
            result.rejected[verdict.reason] += 1
            continue
        digest = content_hash(verdict.text)
        if digest == EMPTY_HASH or digest in seen:
            result.duplicates += digest in seen
            continue
        seen.add(digest)
        found.append(
            ForgedCandidate(
                verdict.text,
                verdict.type.value,
                verdict.knowledge_class.value if verdict.knowledge_class else None,
                verdict.confidence,
                record.transcript_path or str(path),
                0,
                record.line_no,
                record.date.isoformat() if record.date else None,
                record.session_id,
                "agentops",
                digest,
                extractor="ao-queue",
            )
        )
    result.report = {"problems": problems.items}
    result.candidates = len(found)
    result.found = found
    write_candidates(
        layout,
        locks,
        found,
        result,
        source=Path(path),
        fmt=FORMAT,
        session=None,
        now=now or datetime.now(UTC),
        ledger={"key": str(path), "transcript": str(path), **fingerprint},
    )
    return result


def close_loop_with_queue(
    layout: AgentsLayout,
    locks: StoreLocks,
    forge_config: ForgeConfig,
    flywheel_config: FlywheelConfig,
    *,
    sink: LessonSink | None = None,
    now: datetime | None = None,
) -> CloseLoopResult:
    """One close-loop pass that first forges ``.agents/ao/pending.jsonl`` (when present and
    changed), so AgentOps' queued decisions and lessons reach the pool without a separate step."""
    queued = forge_queue(layout, locks, forge_config, now=now)
    result = close_loop(layout, locks, flywheel_config, sink=sink, now=now)
    result.queue = {
        "status": queued.status,
        "snippets": queued.passages,
        "candidates": queued.candidates,
        "new": queued.new,
        "pending_file": queued.pending_file,
        "rejected": dict(queued.rejected),
    }
    result.problems[:0] = [f"ao queue: {p}" for p in queued.report.get("problems", [])]
    return result
