"""Where a worker's Swarm2 memory lives; every path is built from checked ids and proven inside its root.

``<profiles>/<workerId>/`` is the Hermes profile root (``HERMES_HOME``); its ``memory/`` holds the
curated files, missions, episodes and handoffs. ``<shared>/handoffs/swarm/`` and
``<shared>/swarm/missions/`` belong to the orchestrator.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from swarmq.errors import InvalidInput
from swarmq.storage.paths import check_date, check_id, resolve_inside

PROFILE_FILES: tuple[str, ...] = ("MEMORY.md", "IDENTITY.md", "SOUL.md")
"""The curated files created from templates, in the order a worker loads them."""

MISSION_FILES: tuple[str, ...] = ("SUMMARY.md", "events.jsonl", "handoff.md")
RUNTIME_FILE = "runtime.json"


@dataclass(frozen=True)
class SharedLayout:
    """The orchestrator-owned shared swarm memory."""

    shared_dir: Path

    @property
    def handoffs_dir(self) -> Path:
        return resolve_inside(self.shared_dir, "handoffs", "swarm")

    @property
    def swarm_dir(self) -> Path:
        return resolve_inside(self.shared_dir, "swarm")

    def latest_handoff(self, worker_id: str) -> Path:
        return resolve_inside(
            self.shared_dir, "handoffs", "swarm", f"{check_id(worker_id, 'workerId')}-latest.md"
        )

    def archive_dir(self, mission_id: str) -> Path:
        return resolve_inside(
            self.shared_dir, "swarm", "missions", check_id(mission_id, "missionId")
        )


@dataclass(frozen=True)
class ProfileLayout:
    """One worker's profile: ``<profiles>/<workerId>/``."""

    profiles_dir: Path
    shared_dir: Path
    worker_id: str

    def __post_init__(self) -> None:
        check_id(self.worker_id, "workerId")

    def _inside(self, *parts: str) -> Path:
        return resolve_inside(self.profiles_dir, self.worker_id, *parts)

    @property
    def shared(self) -> SharedLayout:
        return SharedLayout(self.shared_dir)

    @property
    def root(self) -> Path:
        """The Hermes profile root, exported to the agent as ``HERMES_HOME``."""
        return self._inside()

    @property
    def memory_dir(self) -> Path:
        return self._inside("memory")

    @property
    def runtime_json(self) -> Path:
        return self._inside(RUNTIME_FILE)

    def profile_file(self, name: str) -> Path:
        if name not in PROFILE_FILES:
            raise InvalidInput(
                f"unknown profile file {name!r}; expected one of {', '.join(PROFILE_FILES)}"
            )
        return self._inside("memory", name)

    @property
    def missions_dir(self) -> Path:
        return self._inside("memory", "missions")

    def mission_dir(self, mission_id: str) -> Path:
        return self._inside("memory", "missions", check_id(mission_id, "missionId"))

    def summary(self, mission_id: str) -> Path:
        return self._inside("memory", "missions", check_id(mission_id, "missionId"), "SUMMARY.md")

    def events(self, mission_id: str) -> Path:
        return self._inside("memory", "missions", check_id(mission_id, "missionId"), "events.jsonl")

    def mission_handoff(self, mission_id: str) -> Path:
        return self._inside("memory", "missions", check_id(mission_id, "missionId"), "handoff.md")

    def transcript(self, mission_id: str, assignment_id: str) -> Path:
        """The agent's combined output for one assignment (kept beside the mission files)."""
        name = f"transcript-{check_id(assignment_id, 'assignmentId')}.log"
        return self._inside("memory", "missions", check_id(mission_id, "missionId"), name)

    @property
    def episodes_dir(self) -> Path:
        return self._inside("memory", "episodes")

    def episode(self, day: str) -> Path:
        return self._inside("memory", "episodes", f"{check_date(day)}.md")

    @property
    def handoffs_dir(self) -> Path:
        return self._inside("memory", "handoffs")

    def handoff(self, mission_id: str) -> Path:
        return self._inside("memory", "handoffs", f"{check_id(mission_id, 'missionId')}.md")

    @property
    def shared_latest(self) -> Path:
        return self.shared.latest_handoff(self.worker_id)


PROFILE_LEDGER_DIRS: tuple[str, ...] = ("missions", "handoffs", "episodes")
"""Under ``<profiles>/<workerId>/memory/``: what the mission machinery writes itself."""
SHARED_LEDGER_DIRS: tuple[str, ...] = ("handoffs", "swarm")
"""Under ``<shared>/``: the orchestrator's latest handoffs and mission archives."""


def ledger_record(path: str | Path, profiles_dir: Path, shared_dir: Path) -> bool:
    """Whether a memory file is one the mission machinery writes on its own: a mission's
    ``SUMMARY.md``, ``events.jsonl`` and ``handoff.md`` (and their archived copies), handoffs
    and daily episodes. Their lines echo each mission's objective, title and checkpoints, so a
    later task about the same subject is near them in meaning without any of them being a
    lesson; the rest of memory (``MEMORY.md``, notes a person or agent wrote as memory) is not
    a ledger record."""
    where = Path(path)
    found: list[tuple[int, bool]] = []  # (depth below the root, ledger?), nearest root wins
    for root, dirs, depth in (
        (shared_dir, SHARED_LEDGER_DIRS, 0),
        (profiles_dir, PROFILE_LEDGER_DIRS, 2),
    ):
        try:
            parts = where.relative_to(root).parts
        except ValueError:
            continue
        inside = depth == 0 or parts[1:2] == ("memory",)
        found.append((len(parts), inside and len(parts) > depth + 1 and parts[depth] in dirs))
    return min(found)[1] if found else False
