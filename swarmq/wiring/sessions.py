"""Forging a live agent session (Claude Code, Codex) a piece at a time, as its hooks report it.

An interactive session's transcript grows turn by turn and its ``Stop`` hook fires after each
turn, so forging the whole file every time would cost the square of its length. Each call here
forges only the bytes not yet forged: from the session's recorded offset to the last complete
line. Those bytes are copied to a slice file (``<runtime>/hooks/slices/<session>/<start>-<end>
.jsonl``, kept as the candidates' provenance) and forged under the key ``session:<id>@<start>``,
so the forge ledger itself refuses a second forge of the same piece; the session's new offset is
recorded (``<runtime>/hooks/sessions.jsonl``) only after the forge is on disk. The acknowledgement
markers (``KNOWLEDGE_APPLIED:...``) in the slice are committed like a mission's, and fed back
to the flywheel lessons they name (``acknowledge_with_feedback``). Repeated hooks
for a transcript that did not grow do nothing; two at once are serialised by a per-session lock.

A failure and its fix split across two turns land in two slices and are mined apart: the price
of never re-reading a long session.

Imports no Celery: the ``forge.session`` task is a thin shell around :func:`forge_session`.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swarmq.forge.extract import forge_transcript
from swarmq.roster.schema import Roster
from swarmq.storage.atomic import append_jsonl, write_atomic
from swarmq.storage.jsonl import JsonlLine, iter_jsonl
from swarmq.storage.locking import StoreLocks
from swarmq.transcripts.detect import detect_format
from swarmq.wiring.flywheel import acknowledge_with_feedback, layout_for, transcript_path
from swarmq.wiring.missions import marker_lines

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
CHUNK = 1 << 20


@dataclass
class SessionForge:
    """What one call did (returned by the task)."""

    session_id: str
    transcript: str
    status: str
    """``forged``, ``nothing-new`` (forged, every lesson known before), ``no-lessons`` (forged,
    no lesson in it), ``unchanged`` (no new complete line since the last forge) or ``missing`` (no such transcript file)."""
    start: int = 0
    end: int = 0
    new: int = 0
    candidates: int = 0
    acknowledged: int = 0
    slice: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "transcript": self.transcript,
            "status": self.status,
            "start": self.start,
            "end": self.end,
            "new": self.new,
            "candidates": self.candidates,
            "acknowledged": self.acknowledged,
            "slice": self.slice,
        }


def session_name(session_id: str, transcript: Path) -> str:
    """A file-safe name for a session (its id, or the transcript's digest without one)."""
    clean = _SAFE.sub("-", session_id).strip("-.")[:96]
    if clean:
        return clean
    return hashlib.sha256(str(transcript).encode("utf-8")).hexdigest()[:24]


def sessions_ledger(roster: Roster) -> Path:
    return roster.runtime_dir / "hooks" / "sessions.jsonl"


def forged_offset(roster: Roster, transcript: Path) -> int:
    """How far ``transcript`` has been forged (0 when never)."""
    best = 0
    key = str(transcript)
    for item in iter_jsonl(sessions_ledger(roster)):
        if isinstance(item, JsonlLine) and isinstance(item.value, dict):
            value = item.value
            if value.get("transcript") == key and isinstance(value.get("end"), int):
                best = max(best, value["end"])
    return best


def complete_end(path: Path, start: int) -> int:
    """The offset just past the last newline of ``path`` (``start`` when none follows it): a
    line still being written is left for the next call."""
    size = path.stat().st_size
    if size <= start:
        return start
    with path.open("rb") as handle:
        pos = size
        while pos > start:
            step = min(CHUNK, pos - start)
            handle.seek(pos - step)
            block = handle.read(step)
            cut = block.rfind(b"\n")
            if cut >= 0:
                return pos - step + cut + 1
            pos -= step
    return start


def _copy_slice(source: Path, target: Path, start: int, end: int) -> None:
    chunks = []
    with source.open("rb") as handle:
        handle.seek(start)
        left = end - start
        while left > 0:
            block = handle.read(min(CHUNK, left))
            if not block:
                break
            chunks.append(block)
            left -= len(block)
    write_atomic(target, b"".join(chunks))


def forge_session(
    roster: Roster,
    locks: StoreLocks,
    session_id: str,
    path: str,
    *,
    agent: str | None = None,
) -> SessionForge:
    """Forge what ``path`` gained since the last call for it (see the module docstring)."""
    try:
        transcript = transcript_path(roster, path)
    except FileNotFoundError:
        return SessionForge(session_id, path, "missing")
    name = session_name(session_id, transcript)
    with locks.hold(f"hooks-session:{name}", timeout=300):
        start = forged_offset(roster, transcript)
        end = complete_end(transcript, start)
        out = SessionForge(session_id, str(transcript), "unchanged", start, end)
        if end <= start:
            return out
        piece = roster.runtime_dir / "hooks" / "slices" / name / f"{start}-{end}.jsonl"
        _copy_slice(transcript, piece, start, end)
        out.slice = str(piece)
        result = forge_transcript(
            piece,
            layout_for(roster),
            locks,
            roster.forge,
            key=f"session:{name}@{start}",
            fmt=detect_format(transcript),
        )
        out.status = "nothing-new" if result.status == "unchanged" else result.status
        out.new, out.candidates = result.new, result.candidates
        markers = marker_lines(piece)
        if markers:
            acks = acknowledge_with_feedback(
                roster, locks, markers, source="session_hook", agent=agent
            )
            out.acknowledged = sum(1 for a in acks if a.status == "committed")
        append_jsonl(
            sessions_ledger(roster),
            [
                {
                    "session_id": session_id,
                    "transcript": str(transcript),
                    "start": start,
                    "end": end,
                    "slice": str(piece),
                    "new": out.new,
                    "pid": os.getpid(),
                }
            ],
        )
    return out
