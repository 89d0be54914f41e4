"""Forged candidates without secrets: a transcript carries whatever the session printed, and a
candidate's text goes on to the pending file, the pool, promotion and the knowledge store."""

from __future__ import annotations

from dataclasses import replace

from swarmq.flywheel.content import content_hash
from swarmq.forge._pending_file import ForgedCandidate
from swarmq.knowledge.secrets import redact


def without_secrets(found: list[ForgedCandidate]) -> tuple[list[ForgedCandidate], int]:
    """``found`` with secrets redacted (``[REDACTED:<kind>]``, the hash recomputed) and the
    candidates that are mostly secret dropped; and how many were dropped."""
    kept: list[ForgedCandidate] = []
    for candidate in found:
        scan = redact(candidate.content)
        if not scan.changed:
            kept.append(candidate)
        elif not scan.mostly_secret:
            kept.append(replace(candidate, content=scan.text, content_hash=content_hash(scan.text)))
    return kept, len(found) - len(kept)
