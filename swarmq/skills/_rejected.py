"""The rejected-edits buffer: candidates the eval gate refused, so they are not proposed again.

``.swarm/skills/rejected-edits.jsonl`` is a bounded FIFO (newest 200 records, as opencode-swarm
keeps). A candidate equal to a rejected one (byte for byte, or after normalising whitespace,
case and ``generated_at``) is skipped while the fixtures that rejected it are unchanged. The buffer is rewritten whole under its store lock;
corrupt lines move to the quarantine file instead of disappearing.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swarmq.skills._evals import Evaluation
from swarmq.storage.clock import iso
from swarmq.storage.jsonl import JsonlLine, iter_jsonl, read_jsonl, rewrite_jsonl
from swarmq.storage.locking import StoreLocks, file_resource

MAX_REJECTED_EDITS = 200
PREVIEW_CHARS = 800


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalized_hash(text: str) -> str:
    stamped = re.sub(
        r"^generated_at:\s*\S+\s*$",
        "generated_at: <generated>",
        text,
        flags=re.MULTILINE | re.IGNORECASE,
    )
    return content_hash(" ".join(stamped.split()).lower())


@dataclass(frozen=True, slots=True)
class RejectedEdits:
    path: Path
    cap: int = MAX_REJECTED_EDITS

    def record(
        self,
        locks: StoreLocks,
        *,
        slug: str,
        operation: str,
        candidate: str,
        evaluation: Evaluation,
        incumbent: str | None = None,
    ) -> dict[str, Any]:
        entry = {
            "timestamp": iso(),
            "slug": slug,
            "operation": operation,
            "reason": evaluation.reason,
            "candidateHash": content_hash(candidate),
            "candidateNormalizedHash": normalized_hash(candidate),
            "incumbentHash": content_hash(incumbent) if incumbent is not None else None,
            "candidateScore": evaluation.candidate_score,
            "incumbentScore": evaluation.incumbent_score,
            "evalFiles": evaluation.files,
            "evalFingerprint": evaluation.fingerprint,
            "caseCount": len(evaluation.cases),
            "candidatePreview": " ".join(candidate.split())[:PREVIEW_CHARS],
        }
        line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
        with locks.hold(file_resource(self.path)) as lease:
            current = read_jsonl(self.path)
            kept = [item.raw for item in current.lines][-(self.cap - 1) :] if self.cap > 1 else []
            rewrite_jsonl(self.path, [*kept, line], lease=lease, corrupt=current.corrupt)
        return entry

    def is_rejected(self, slug: str, content: str, fingerprint: str | None = None) -> bool:
        """Was this content rejected before by the same fixtures (``fingerprint``)? Records
        written by opencode-swarm carry no fingerprint and match whatever the fixtures."""
        exact, normal = content_hash(content), normalized_hash(content)
        for item in iter_jsonl(self.path):
            if not isinstance(item, JsonlLine) or not isinstance(item.value, dict):
                continue
            record = item.value
            if record.get("slug") != slug:
                continue
            judged_by = record.get("evalFingerprint")
            if "evalFingerprint" in record and judged_by != fingerprint:
                continue
            if (
                record.get("candidateHash") == exact
                or record.get("candidateNormalizedHash") == normal
            ):
                return True
        return False

    def records(self) -> list[dict[str, Any]]:
        return [
            i.value
            for i in iter_jsonl(self.path)
            if isinstance(i, JsonlLine) and isinstance(i.value, dict)
        ]
