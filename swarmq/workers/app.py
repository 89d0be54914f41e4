"""The Celery app: ``celery -A swarmq.workers.app worker|beat|flower``.

Importing this module only creates the app object; the roster is read when Celery first needs
its configuration (``on_configure``), from ``$SWARMQ_CONFIG`` or ``./swarm.yaml``.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from celery import Celery

from swarmq.names import JOB_FAMILIES
from swarmq.roster.checks import task_family
from swarmq.roster.loader import find_config, load_roster
from swarmq.roster.schema import Roster

PIDBOX_WATCH = "swarmq.workers.pidbox_watch:PidboxWatch"
RESTART_WATCH = "swarmq.workers.restart_watch:RestartWatch"
"""Consumer step re-opening a mailbox that stopped answering pings (see that module)."""


@functools.cache
def _roster_at(path: str, redis_url: str | None) -> Roster:
    return load_roster(path)


def roster() -> Roster:
    """The roster this process runs with (cached; ``REDIS_URL`` is part of the cache key)."""
    return _roster_at(str(find_config().resolve()), os.environ.get("REDIS_URL"))


def create_app(config: Roster | None = None) -> Celery:
    """A Celery app for ``config``, or, lazily, for the process's roster."""
    celery_app = Celery("swarmq", set_as_current=False, task_cls="swarmq.workers.base:SwarmTask")

    def configure(sender: Celery, **_: Any) -> None:
        # Signal handlers: the JSON log formatter, and a worker renewing its presence key.
        from swarmq.workers import logs, presence  # noqa: F401
        from swarmq.workers.config import celery_config

        # As the source Celery reads right after this signal, not ``sender.conf.update``: an
        # update while the configuration is pending re-enters its loading (and this handler)
        # whenever ``app.amqp`` already exists, ending in a RecursionError that Celery logs and
        # swallows, leaving a client app with default settings (wrong key prefix): its pings
        # reached no worker, which read as workers deaf after a Redis restart.
        sender.config_from_object(celery_config(app_roster()))

    def apply_family_limits(sender: Celery, **_: Any) -> None:
        limits = app_roster().tasks.limits
        for name, task in sender.tasks.items():
            family = task_family(name)
            if family not in JOB_FAMILIES:
                continue
            if getattr(task, "time_limit", None) is None:
                task.time_limit = limits[family].time_limit_seconds
            if getattr(task, "soft_time_limit", None) is None:
                task.soft_time_limit = limits[family].soft_time_limit_seconds

    loaded: list[Roster] = [config] if config is not None else []

    def app_roster() -> Roster:
        # Like Celery's own configuration, the roster is read once per process: tasks ask for
        # it several times per call, and resolving the config path each time showed up in
        # profiles of short tasks.
        if not loaded:
            loaded.append(roster())
        return loaded[0]

    # By name: only a worker loads it, so clients (``swarmq status``) import no worker code.
    celery_app.steps["consumer"].add(PIDBOX_WATCH)
    celery_app.steps["consumer"].add(RESTART_WATCH)
    celery_app.on_configure.connect(configure, weak=False)
    celery_app.on_after_finalize.connect(apply_family_limits, weak=False)
    celery_app.swarmq_roster = app_roster
    return celery_app


app = create_app()


def unregistered_schedule(roster: Roster) -> list[tuple[str, str, list[str]]]:
    """Schedule entries whose task no task module registers: ``(entry, task, close names)``."""
    import difflib
    import importlib

    from swarmq.workers.config import task_modules

    for module in task_modules():
        importlib.import_module(module)
    known = sorted(name for name in app.tasks if not name.startswith("celery."))
    return [
        (name, entry.task, difflib.get_close_matches(entry.task, known, n=2))
        for name, entry in roster.schedule.items()
        if entry.task not in known
    ]
