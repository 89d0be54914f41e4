"""What the curator, skills and llm commands share: the cluster (when Redis answers), store
locks, running a job in-process or submitting it to the workers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swarmq.cli.common import fail
from swarmq.cli.console import notice
from swarmq.coord.cluster import Cluster
from swarmq.coord.connection import RedisUnavailable
from swarmq.roster.schema import Roster


def cluster_or_none(roster: Roster, *, quiet: bool = False) -> Cluster | None:
    """The cluster, or ``None`` with a notice: jobs that need no model still run offline,
    and jobs that do are refused by the quota gate failing closed."""
    try:
        return Cluster.connect(roster.cluster_config(), timeout=1.0)
    except RedisUnavailable as exc:
        if not quiet:
            notice(f"{exc}; no LLM calls")
        return None


def submit(
    roster: Roster, task: str, kwargs: dict[str, Any], *, wait: float
) -> dict[str, Any] | str:
    """Send ``task`` to its family queue; its result after at most ``wait`` seconds (0: the id)."""
    from swarmq.workers.app import create_app

    app = create_app(roster)
    try:
        result = app.send_task(task, kwargs=kwargs, ignore_result=wait <= 0)  # stored only if read
        if wait <= 0:
            return str(result.id)
        try:
            value = result.get(timeout=wait)
            result.forget()
        except TimeoutError:
            fail(
                f"{task} [{result.id}] did not finish within {wait:g}s (is a worker consuming its queue?)"
            )
        except Exception as exc:  # the task raised: show its error, not a traceback
            fail(f"{task} [{result.id}] failed: {exc}")
        if not isinstance(value, dict):
            fail(f"{task} [{result.id}] returned {value!r}")
        return value
    finally:
        app.close()


def short(path: str | None, root: Path) -> str:
    if not path:
        return "-"
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return path
