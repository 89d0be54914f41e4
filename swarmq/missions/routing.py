"""Choosing the worker for a mission: a named worker, or the least-loaded live worker by role.

Liveness comes from the caller (workers' presence keys, else Celery ping); this module only
decides, so the same rules run in the client, the API and tests. Every refusal says why and what
to do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from swarmq.errors import NotFound
from swarmq.missions.config import WorkerConfig
from swarmq.missions.states import MissionState


class UnknownTarget(NotFound):
    """A submit names a worker, or a role and specialty, that no roster entry has: a typo, so
    it is refused before anything is written (no failed mission in the ledger)."""


@dataclass(frozen=True)
class Target:
    """What the orchestrator asked for."""

    worker_id: str | None = None
    role: str | None = None
    specialty: str | None = None

    def as_dict(self) -> dict[str, str]:
        out = {"workerId": self.worker_id, "role": self.role, "specialty": self.specialty}
        return {k: v for k, v in out.items() if v}

    def describe(self) -> str:
        if self.worker_id:
            return f"worker {self.worker_id!r}"
        parts = [
            f"role {self.role!r}" if self.role else "",
            f"specialty {self.specialty!r}" if self.specialty else "",
        ]
        return " and ".join(p for p in parts if p) or "any worker"


@dataclass(frozen=True)
class Route:
    """The decision: a worker to queue for (state planning), or why not (blocked / failed)."""

    worker_id: str | None
    state: MissionState
    reason: str


def _matches(worker: WorkerConfig, target: Target) -> bool:
    if target.role and worker.role.casefold() != target.role.casefold():
        return False
    return not (
        target.specialty and (worker.specialty or "").casefold() != target.specialty.casefold()
    )


def check_target(workers: Sequence[WorkerConfig], target: Target) -> None:
    """Raise :class:`UnknownTarget` when no roster entry is (or matches) ``target``."""
    if target.worker_id:
        if not any(w.id == target.worker_id for w in workers):
            known = ", ".join(w.id for w in workers)
            raise UnknownTarget(
                f"unknown worker {target.worker_id!r}: not in the roster (known: {known}); "
                "nothing was submitted"
            )
        return
    if not any(_matches(w, target) for w in workers):
        roles = ", ".join(sorted({w.role for w in workers}))
        raise UnknownTarget(
            f"no worker in the roster matches {target.describe()} (roles: {roles}); "
            "nothing was submitted"
        )


def route(
    workers: Sequence[WorkerConfig],
    target: Target,
    *,
    live: set[str] | None,
    load: dict[str, int],
    require_live: bool = True,
) -> Route:
    """``live=None`` means liveness is unknown (no broker check); then nobody counts as dead."""
    if target.worker_id:
        named = next((w for w in workers if w.id == target.worker_id), None)
        if named is None:
            known = ", ".join(w.id for w in workers)
            return Route(
                None,
                MissionState.FAILED,
                f"unknown worker {target.worker_id!r}: not in the roster (known: {known})",
            )
        if named.agent is None:
            return Route(
                named.id,
                MissionState.FAILED,
                f"worker {named.id!r} has no agent command: add agent.command to its "
                "entry in swarm.yaml",
            )
        if live is not None and named.id not in live:
            if require_live:
                return Route(
                    named.id,
                    MissionState.BLOCKED,
                    f"worker {named.id!r} is not running (no presence key, no answer to ping); start it "
                    "(swarmq up) and resume the mission",
                )
            return Route(
                named.id,
                MissionState.PLANNING,
                f"queued for {named.id!r}, which is not answering; it runs when the worker starts",
            )
        return Route(named.id, MissionState.PLANNING, f"dispatched to named worker {named.id!r}")
    matching = [w for w in workers if _matches(w, target)]
    if not matching:
        return Route(
            None, MissionState.FAILED, f"no worker in the roster matches {target.describe()}"
        )
    runnable = [w for w in matching if w.agent is not None]
    if not runnable:
        ids = ", ".join(w.id for w in matching)
        return Route(
            None,
            MissionState.FAILED,
            f"workers matching {target.describe()} ({ids}) have no agent command in swarm.yaml",
        )
    alive = runnable if live is None else [w for w in runnable if w.id in live]
    if not alive:
        ids = ", ".join(w.id for w in runnable)
        if require_live:
            return Route(
                None,
                MissionState.BLOCKED,
                f"no live worker for {target.describe()} (none of {ids} is present or answers ping); "
                "start one and resume the mission",
            )
        alive = runnable
    order = {w.id: index for index, w in enumerate(workers)}
    chosen = min(alive, key=lambda w: (load.get(w.id, 0), order[w.id]))
    return Route(
        chosen.id,
        MissionState.PLANNING,
        f"routed to {chosen.id!r} ({target.describe()}, load {load.get(chosen.id, 0)})",
    )
