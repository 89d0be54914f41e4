"""Which bodies are already knowledge: the promoted index plus a live scan of the artifacts.

``.agents/pool/promoted-index.jsonl`` maps a content hash to the artifact it became. An index
line whose artifact is gone counts as a miss; because the index can be missing or stale (a
crash between writing an artifact and indexing it, files copied in by hand), the learnings,
patterns and archived artifacts are also scanned, once per instance and only when needed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from swarmq.flywheel.content import content_hash
from swarmq.flywheel.model import rfc3339
from swarmq.flywheel.pool import PROMOTED_INDEX_FILE
from swarmq.flywheel.store import AgentsLayout
from swarmq.storage.atomic import append_jsonl
from swarmq.storage.jsonl import JsonlLine, iter_jsonl
from swarmq.storage.locking import Lease


def markdown_files(directory: Path) -> list[Path]:
    try:
        return sorted(
            directory / n
            for n in os.listdir(directory)
            if n.endswith(".md") and not n.startswith(".")
        )
    except FileNotFoundError:
        return []


@dataclass
class PromotedIndex:
    layout: AgentsLayout
    _indexed: dict[str, str] | None = None
    _live: dict[str, str] | None = None
    _archived: dict[str, str] | None = None
    corrupt_lines: int = 0
    recorded: dict[str, str] = field(default_factory=dict)
    buffer: list[dict[str, str]] | None = None
    """When a list, :meth:`record` collects lines here until :meth:`flush`."""

    @property
    def path(self) -> Path:
        return self.layout.pool / PROMOTED_INDEX_FILE

    def _index(self) -> dict[str, str]:
        if self._indexed is None:
            self._indexed = {}
            for item in iter_jsonl(self.path):
                if not isinstance(item, JsonlLine):
                    self.corrupt_lines += 1
                    continue
                value = item.value
                if isinstance(value, dict) and isinstance(value.get("content_hash"), str):
                    self._indexed[value["content_hash"]] = str(value.get("artifact_path") or "")
        return self._indexed

    def _scan(self, directories: list[Path]) -> dict[str, str]:
        hashes: dict[str, str] = {}
        for directory in directories:
            for path in markdown_files(directory):
                try:
                    text = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                if text.strip():
                    hashes.setdefault(content_hash(text), str(path))
        return hashes

    def _resolve(self, artifact: str) -> Path:
        path = Path(artifact)
        return path if path.is_absolute() else self.layout.root.parent / path

    def lookup(self, digest: str) -> tuple[str, str] | None:
        """``(artifact path, dedup reason)`` when this body is already promoted or archived."""
        if digest in self.recorded:
            return self.recorded[digest], "dedup: content hash already promoted"
        artifact = self._index().get(digest)
        if artifact and self._resolve(artifact).exists():
            return artifact, "dedup: content hash already promoted"
        if self._live is None:
            self._live = self._scan([self.layout.learnings, self.layout.patterns])
        if digest in self._live and Path(self._live[digest]).exists():
            return self._live[digest], "dedup: content hash already promoted"
        if self._archived is None:
            root = self.layout.root
            defrag = sorted(root.glob("defrag/*/files/.agents/learnings")) + sorted(
                root.glob("defrag/*/files/.agents/patterns")
            )
            self._archived = self._scan([root / "archive" / "dedup", self.layout.archive, *defrag])
        if digest in self._archived:
            return self._archived[digest], "dedup: content hash already archived"
        return None

    def record(
        self,
        digest: str,
        artifact: Path,
        candidate_id: str,
        *,
        lease: Lease | None,
        when: datetime | None = None,
    ) -> None:
        line = {
            "content_hash": digest,
            "artifact_path": str(artifact),
            "candidate_id": candidate_id,
            "promoted_at": rfc3339(when),
        }
        if self.buffer is not None:
            self.buffer.append(line)
        else:
            append_jsonl(self.path, [line], lease=lease)
        self.recorded[digest] = str(artifact)

    def flush(self, lease: Lease | None) -> None:
        """Append the buffered lines (call after the artifacts they name are durable)."""
        if self.buffer:
            append_jsonl(self.path, self.buffer, lease=lease)
            self.buffer = []
