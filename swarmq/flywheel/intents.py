"""The publication intent journal: promoted learnings the knowledge store has yet to receive.

Promotion (pool → learnings, under the pool and learnings locks) and publication (learning →
swarm-tier knowledge entry, under the knowledge lock, which comes *before* the pool lock in the
lock order) cannot be one write. A close loop killed between them lost those lessons for good:
the next pass found nothing left to promote. So a promotion that will be published first
appends an ``intent`` line to ``.agents/pool/publish-intents.jsonl`` (fsynced, under the pool
lock, before any learning of the batch is written); a publication that the store answered
appends a ``done`` line; the next close loop replays every open intent before it promotes.
When nothing is open the file is removed.

Replay is safe because publication is idempotent: a lesson already in the store is a
near-duplicate, reinforced in the same phase, which changes nothing a reader sees. An intent
whose promotion never landed (no artifact holds its content) is closed as ``void``: its
candidate is still in the pool and is promoted again, with a fresh intent. A publication that
raised (``failed``: the store was unreachable, the disk full) stays open and is retried by the
next run; a refusal by the store's validation is an answer and closes the intent.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from swarmq.flywheel.model import rfc3339
from swarmq.flywheel.store import AgentsLayout, remove_file
from swarmq.storage.atomic import append_jsonl
from swarmq.storage.jsonl import JsonlLine, iter_jsonl
from swarmq.storage.locking import Lease

INTENTS_FILE = "publish-intents.jsonl"


@dataclass(frozen=True, slots=True)
class Intent:
    """A promotion to be published: the candidate as it graduates and its content hash."""

    candidate_id: str
    content_hash: str
    candidate: dict[str, Any]


@dataclass(frozen=True)
class PublishIntents:
    layout: AgentsLayout

    @property
    def path(self) -> Path:
        return self.layout.pool / INTENTS_FILE

    def pending(self) -> list[Intent]:
        """Intents not yet closed, in the order they were journaled. A torn last line is an
        intent whose append never finished, so no promotion followed it: it is skipped."""
        open_: dict[str, Intent] = {}
        for item in iter_jsonl(self.path):
            if not isinstance(item, JsonlLine) or not isinstance(item.value, dict):
                continue
            value = item.value
            ident = value.get("candidate_id")
            if not isinstance(ident, str):
                continue
            if value.get("op") == "intent":
                candidate = value.get("candidate")
                open_[ident] = Intent(
                    ident,
                    str(value.get("content_hash") or ""),
                    candidate if isinstance(candidate, dict) else {},
                )
            else:
                open_.pop(ident, None)
        return list(open_.values())

    def begin(self, intents: Iterable[Intent], *, lease: Lease | None, now: datetime) -> int:
        """Journal intents durably (one fsynced append); the caller holds the pool lock and
        promotes only after this returns."""
        lines = [
            {
                "op": "intent",
                "candidate_id": intent.candidate_id,
                "content_hash": intent.content_hash,
                "candidate": intent.candidate,
                "at": rfc3339(now),
            }
            for intent in intents
        ]
        if lines:
            append_jsonl(self.path, lines, lease=lease)
        return len(lines)

    def finish(self, closed: Iterable[tuple[str, str]], *, lease: Lease | None) -> None:
        """Close intents (``(candidate id, outcome)``: ``done`` outcomes and ``void``); the
        journal is removed once nothing is open (the caller holds the pool lock)."""
        lines = [{"op": "closed", "candidate_id": ident, "outcome": why} for ident, why in closed]
        if lines:
            append_jsonl(self.path, lines, lease=lease)
        if self.path.exists() and not self.pending():
            with contextlib.suppress(FileNotFoundError):
                remove_file(self.path, lease=lease, store=self.layout.pool)
