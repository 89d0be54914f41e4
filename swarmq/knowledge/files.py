"""Where each tier keeps its files (opencode-swarm's names) and the platform data dir.

The swarm tier lives in ``<project>/.swarm/``; the hive tier in the platform data dir
(``shared-learnings*.jsonl``); a link tier in ``<dataDir>/links/<linkId>/`` with the swarm file
names. Corrupt lines of a store go to ``<store>-corrupt.jsonl`` (``knowledge-corrupt.jsonl``),
following opencode-swarm's hyphenated sidecar names; FIFO-evicted and merged-away entries go to
``<store>-evicted.jsonl`` so that no line ever disappears without a record.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from swarmq.knowledge.model import Tier
from swarmq.storage.locking import file_resource


@dataclass(frozen=True, slots=True)
class TierFiles:
    """The files of one knowledge store (one lock covers all of them)."""

    tier: Tier
    root: Path
    knowledge: Path
    rejected: Path
    quarantined: Path
    unactionable: Path
    retractions: Path
    application: Path
    events: Path
    corrupt: Path
    evicted: Path

    @property
    def resource(self) -> str:
        """The store lock's name: every writer of any file of this store holds it."""
        return file_resource(self.knowledge)

    @classmethod
    def swarm(cls, swarm_dir: Path) -> TierFiles:
        return cls._family(Tier.SWARM, Path(swarm_dir), "knowledge", events="knowledge-events")

    @classmethod
    def link(cls, data_dir: Path, link_id: str) -> TierFiles:
        return cls._family(
            Tier.SWARM, Path(data_dir) / "links" / link_id, "knowledge", events="knowledge-events"
        )

    @classmethod
    def hive(cls, data_dir: Path) -> TierFiles:
        return cls._family(
            Tier.HIVE, Path(data_dir), "shared-learnings", events="shared-knowledge-events"
        )

    @classmethod
    def _family(cls, tier: Tier, root: Path, stem: str, *, events: str) -> TierFiles:
        return cls(
            tier=tier,
            root=root,
            knowledge=root / f"{stem}.jsonl",
            rejected=root / f"{stem}-rejected.jsonl",
            quarantined=root / f"{stem}-quarantined.jsonl",
            unactionable=root / f"{stem}-unactionable.jsonl",
            retractions=root / f"{stem}-retractions.jsonl",
            application=root / f"{stem}-application.jsonl",
            events=root / f"{events}.jsonl",
            corrupt=root / f"{stem}-corrupt.jsonl",
            evicted=root / f"{stem}-evicted.jsonl",
        )


RECEIPTS_FILE = "knowledge-receipts-v2.jsonl"
"""Always in the project's own ``.swarm/`` (never redirected by a link)."""
LINK_FILE = "link.json"
MIGRATION_SENTINEL = ".knowledge-migrated"
SWEEP_STATE_FILE = "knowledge-sweep-state.json"


def platform_data_dir(env: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """opencode-swarm's data dir, read fresh from the environment on every call."""
    env = os.environ if env is None else env
    platform = platform or sys.platform
    home = env.get("HOME") or str(Path.home())
    if platform.startswith("win"):
        base = env.get("LOCALAPPDATA") or str(Path(home) / "AppData" / "Local")
        return Path(base) / "opencode-swarm" / "Data"
    if platform == "darwin":
        return Path(home) / "Library" / "Application Support" / "opencode-swarm"
    return Path(env.get("XDG_DATA_HOME") or str(Path(home) / ".local" / "share")) / "opencode-swarm"
