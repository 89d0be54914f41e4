"""Creates the roster's worker profiles: its workers, the swarm's name and the profile roots."""

from __future__ import annotations

from swarmq.profiles.bootstrap import FileAction, ensure_profiles
from swarmq.roster.schema import Roster
from swarmq.storage.locking import LocalLocks, StoreLocks


def ensure_roster_profiles(
    roster: Roster, locks: StoreLocks | None = None
) -> dict[str, dict[str, FileAction]]:
    """Profile memory for every roster worker, under ``locks`` (same-host file locks in the
    runtime directory when none are given)."""
    return ensure_profiles(
        roster.workers,
        swarm=roster.swarm,
        profiles_dir=roster.profiles_dir,
        shared_dir=roster.shared_dir,
        locks=locks or LocalLocks(roster.runtime_dir / "locks"),
    )
