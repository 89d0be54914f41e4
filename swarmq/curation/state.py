"""What enrichment last did for each entry, so unchanged lessons are not sent again.

``.swarm/curator/enrichment-state.json`` maps entry id → the sha256 of the lesson that was
enriched (or found not actionable), when, and by which source. A lesson whose hash is unchanged
is skipped; a lesson handled only by the deterministic fallback is retried once a model is
available. The file is rewritten whole under its own lock; an unreadable file is moved aside
(kept, not deleted) and enrichment starts afresh.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swarmq.storage.atomic import write_json_atomic
from swarmq.storage.clock import iso
from swarmq.storage.locking import StoreLocks, file_resource

STATE_VERSION = 1


def content_hash(lesson: str) -> str:
    return hashlib.sha256(lesson.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Handled:
    entry_id: str
    content_hash: str
    source: str
    """``llm`` or ``deterministic_fallback``."""
    outcome: str
    """``enriched`` or ``not_actionable``."""


class EnrichmentState:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (ValueError, UnicodeDecodeError):
            self._set_aside()
            return {}
        entries = data.get("entries") if isinstance(data, dict) else None
        return (
            {k: v for k, v in entries.items() if isinstance(v, dict)}
            if isinstance(entries, dict)
            else {}
        )

    def _set_aside(self) -> None:
        aside = self.path.with_name(f"{self.path.name}.unreadable-{os.getpid()}")
        os.replace(self.path, aside)

    def unchanged(
        self,
        state: Mapping[str, Mapping[str, Any]],
        entry_id: str,
        lesson: str,
        *,
        have_model: bool,
    ) -> bool:
        record = state.get(entry_id)
        if not record or record.get("content_hash") != content_hash(lesson):
            return False
        return record.get("source") == "llm" or not have_model

    def record(
        self, locks: StoreLocks, handled: Iterable[Handled], live_ids: Iterable[str]
    ) -> None:
        """Merge ``handled`` in and drop records of entries that no longer exist."""
        handled = list(handled)
        if not handled:
            return
        live = set(live_ids)
        with locks.hold(file_resource(self.path)) as lease:
            current = self.read()
            at = iso()
            for item in handled:
                current[item.entry_id] = {
                    "content_hash": item.content_hash,
                    "source": item.source,
                    "outcome": item.outcome,
                    "at": at,
                }
            kept = {k: v for k, v in current.items() if k in live}
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_json_atomic(self.path, {"version": STATE_VERSION, "entries": kept}, lease=lease)
