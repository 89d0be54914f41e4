"""``ao pool ingest``: pending Markdown learnings become scored pool candidates.

Every ``# Learning:`` block of ``.agents/knowledge/pending/*.md`` (and legacy captures in
``.agents/knowledge/*.md``) is typed, scored and tiered, then added to ``pool/pending`` unless a
candidate with its id exists anywhere in the pool (``skipped_existing``) or its body is already
promoted (a ``skip`` chain event). Files ingested without error move to
``.agents/knowledge/processed/``; a file that could not be read stays where it is.

Each candidate's failure signature (its block's ``**Signature**:`` line, else read from its
body; ``""`` when it has none) is kept in its ``metadata`` as ``failure_signature``: a later
session's recurrence of that failure is what confirms it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from swarmq.flywheel._pending import (
    LearningBlock,
    candidate_id,
    file_date,
    is_malformed,
    parse_learning_blocks,
    session_hint,
)
from swarmq.flywheel._scoring import infer_type, score_block
from swarmq.flywheel.content import canonical_content_body, content_hash
from swarmq.flywheel.model import ZERO_TIME, parse_time, rfc3339, tier_config
from swarmq.flywheel.pool import Pool
from swarmq.flywheel.promoted import PromotedIndex, markdown_files
from swarmq.flywheel.store import AgentsLayout, rename_file
from swarmq.storage.locking import Lease, StoreLocks


@dataclass
class IngestResult:
    files_scanned: int = 0
    candidates_found: int = 0
    added: int = 0
    skipped_existing: int = 0
    skipped_malformed: int = 0
    skipped_promoted: int = 0
    errors: int = 0
    added_ids: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "files_scanned": self.files_scanned,
            "candidates_found": self.candidates_found,
            "added": self.added,
            "skipped_existing": self.skipped_existing,
            "skipped_malformed": self.skipped_malformed,
            "skipped_promoted": self.skipped_promoted,
            "errors": self.errors,
        }
        if self.added_ids:
            out["added_ids"] = self.added_ids
        if self.problems:
            out["problems"] = self.problems
        return out


def pending_files(layout: AgentsLayout) -> list[Path]:
    """The default inputs: ``knowledge/pending/*.md`` then legacy ``knowledge/*.md``."""
    return markdown_files(layout.pending) + markdown_files(layout.knowledge)


def build_candidate(
    block: LearningBlock,
    path: Path,
    when: datetime,
    hint: str,
    *,
    signer: Callable[[str], str | None] | None = None,
    now: datetime | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The pool candidate and scoring result for one block (AgentOps field order)."""
    body = block.body.strip()
    ktype = infer_type(block.category, body)
    score = score_block(ktype, body, block.confidence)
    fields = block.fields
    stamp = parse_time(fields.get("timestamp")) or when
    try:
        message_index = int(fields.get("message", "0"))
    except ValueError:
        message_index = 0
    metadata: dict[str, Any] = {
        "pending_category": block.category,
        "pending_confidence": block.confidence,
        "pending_title": block.title,
    }
    if fields.get("class"):
        metadata["knowledge_class"] = fields["class"]
    if fields.get("line", "").isdigit():
        metadata["source_line"] = int(fields["line"])
    signature = fields.get("signature") or (
        signer(canonical_content_body(body)) if signer is not None else None
    )
    if signer is not None or signature:
        metadata["failure_signature"] = signature or ""
    candidate: dict[str, Any] = {
        "id": candidate_id(path, hint, block),
        "type": ktype.value,
        "content": body,
        "source": {
            "transcript_path": fields.get("transcript") or str(path),
            "message_index": message_index,
            "timestamp": rfc3339(stamp),
            "session_id": fields.get("session") or hint,
        },
        "raw_score": score.raw,
        "tier": score.tier.value,
        "extracted_at": rfc3339(when),
        "metadata": metadata,
        "is_current": True,
        "expiry_status": "active",
        "utility": 0.5,
        "last_reward_at": ZERO_TIME,
        "maturity": "provisional",
    }
    confidence = tier_config(score.tier).confidence
    if confidence:
        candidate["confidence"] = confidence
    candidate["last_decay_at"] = rfc3339(when)
    scoring = {
        "raw_score": score.raw,
        "tier_assignment": score.tier.value,
        "rubric": score.rubric.as_dict(),
        "gate_required": score.gate_required,
        "scored_at": rfc3339(now),
    }
    return candidate, scoring


def ingest_pending(
    layout: AgentsLayout,
    locks: StoreLocks,
    *,
    files: list[Path] | None = None,
    promoted: PromotedIndex | None = None,
    dry_run: bool = False,
    now: datetime | None = None,
    signer: Callable[[str], str | None] | None = None,
) -> IngestResult:
    """Ingest pending files into the pool under the knowledge and pool store locks; ``signer``
    gives each candidate its failure signature, ``now`` stamps the scoring."""
    result = IngestResult()
    now = now or datetime.now(UTC)
    pool = Pool(layout)
    promoted = promoted or PromotedIndex(layout)
    with locks.hold(layout.knowledge_lock) as klease, locks.hold(layout.pool_lock) as please:
        pool.start_batch()
        inputs = files if files is not None else pending_files(layout)
        result.files_scanned = len(inputs)
        for path in inputs:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                result.errors += 1
                result.problems.append(f"{path}: cannot read ({exc}); left in place")
                continue
            failed = _ingest_file(
                pool, promoted, path, text, result, please, dry_run, signer=signer, now=now
            )
            pool.flush(please)  # the candidates are durable and logged before the input moves
            if not failed and not dry_run:
                _file_processed(layout, path, text, klease)
    return result


def _ingest_file(
    pool: Pool,
    promoted: PromotedIndex,
    path: Path,
    text: str,
    result: IngestResult,
    lease: Lease | None,
    dry_run: bool,
    *,
    signer: Callable[[str], str | None] | None,
    now: datetime,
) -> bool:
    """Add the file's blocks; ``True`` when an add failed (the file then stays pending)."""
    when = file_date(text, path)
    hint = session_hint(text, path)
    blocks = parse_learning_blocks(text)
    result.candidates_found += len(blocks)
    failed = False
    for block in blocks:
        if is_malformed(block):
            result.skipped_malformed += 1
            continue
        candidate, scoring = build_candidate(block, path, when, hint, signer=signer, now=now)
        ident = candidate["id"]
        if pool.exists(ident):
            result.skipped_existing += 1
            continue
        known = promoted.lookup(content_hash(candidate["content"]))
        if known is not None:
            result.skipped_promoted += 1
            if not dry_run:
                pool.chain(lease, "skip", ident, reason=f"{known[1]}: {known[0]}")
            continue
        if dry_run:
            result.added += 1
            result.added_ids.append(ident)
            continue
        try:
            pool.add(candidate, scoring, added_at=when, lease=lease)
        except (OSError, ValueError) as exc:
            result.errors += 1
            result.problems.append(f"{path}: cannot add {ident} ({exc})")
            failed = True
            continue
        result.added += 1
        result.added_ids.append(ident)
    return failed


def _file_processed(layout: AgentsLayout, path: Path, text: str, lease: Lease | None) -> None:
    """Move an ingested file to ``processed/``; a different file already there keeps its name."""
    target = layout.processed / path.name
    if target.exists():
        try:
            same = target.read_text(encoding="utf-8") == text
        except (OSError, UnicodeDecodeError):
            same = False
        if not same:
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
            target = layout.processed / f"{path.stem}-{digest}{path.suffix}"
    rename_file(path, target, lease=lease, store=layout.knowledge)


__all__ = ["IngestResult", "build_candidate", "ingest_pending", "pending_files"]
