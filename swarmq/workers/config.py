"""Celery configuration derived from the roster: queues, routes, reliability defaults, beat."""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

from celery.schedules import crontab, schedule
from kombu.entity import Exchange, Queue

from swarmq.coord import keys
from swarmq.names import DEAD_LETTER_QUEUE, JOB_FAMILIES
from swarmq.roster.checks import task_family
from swarmq.roster.schedule import effective_schedule
from swarmq.roster.schema import Roster
from swarmq.workers.processes import host_dir

EXTRA_TASKS_ENV = "SWARMQ_EXTRA_TASKS"
"""Comma-separated modules to import besides swarmq's own task modules (tests, plugins)."""

VISIBILITY_MARGIN_SECONDS = 600.0
RESULT_EXPIRES_SECONDS = 3600
BROKER_CONNECT_TIMEOUT_SECONDS = 5.0
"""A connection attempt to a broker that is down fails in this long, so a worker retries often."""
BROKER_SOCKET_TIMEOUT_SECONDS = 5.0
"""No read or write on a broker connection blocks longer than this. Without it (redis-py's and
kombu's default) a worker's event loop could block for a minute after a Redis restart, in a
read that redis-py retried on a connection it had silently reconnected, whose reply never
comes: the worker then received no task and answered no ping, while its watches' calls queued
behind the blocked loop (issue 31, docs/missions.md). The event loop reads BRPOP and pub/sub
sockets only once they are readable, so an idle consumer never meets this timeout."""
REDIS_HEALTH_CHECK_SECONDS = 25
"""A pooled Redis connection idle this long is pinged before use (a restarted Redis is noticed
before a command is lost on a dead socket)."""


def task_modules() -> list[str]:
    from swarmq.names import TASK_MODULES

    extra = [m.strip() for m in os.environ.get(EXTRA_TASKS_ENV, "").split(",") if m.strip()]
    return [*TASK_MODULES, *extra]


def visibility_timeout(roster: Roster) -> float:
    """Above the longest hard time limit of the *short* job families plus retry countdowns.

    The Redis transport has one window for every queue, and a message taken by a host that dies
    comes back only when it ends, so it is not sized for missions (hours): a mission run is
    guarded by its claim and heartbeat instead (a redelivery while it runs is skipped as a
    duplicate) and a dead host's missions are resumed by the reaper within minutes.
    """
    tasks = roster.tasks
    short = [
        limit.time_limit_seconds for family, limit in tasks.limits.items() if family != "missions"
    ]
    return max(short, default=0.0) + tasks.retry_backoff_max_seconds + VISIBILITY_MARGIN_SECONDS


def build_queues(roster: Roster) -> list[Queue]:
    exchange = Exchange("swarmq", type="direct")
    names = [*JOB_FAMILIES, *(w.direct_queue for w in roster.workers), DEAD_LETTER_QUEUE]
    return [Queue(name, exchange, routing_key=name) for name in names]


def route_task(
    name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **kw: Any
) -> dict[str, str] | None:
    """``<family>.<job>`` goes to the family's queue; an explicit ``queue=`` always wins."""
    family = task_family(name)
    if family in JOB_FAMILIES:
        return {"queue": family, "routing_key": family}
    return None


def build_beat_schedule(roster: Roster) -> dict[str, dict[str, Any]]:
    """Beat entries from ``schedule:`` in swarm.yaml and the defaults it does not replace
    (:mod:`swarmq.roster.schedule`), evaluated in UTC."""
    out: dict[str, dict[str, Any]] = {}
    for name, entry in effective_schedule(roster).items():
        if entry.cron is not None:
            minute, hour, dom, month, dow = entry.cron.split()
            when: Any = crontab(
                minute=minute, hour=hour, day_of_month=dom, month_of_year=month, day_of_week=dow
            )
        else:
            assert entry.every is not None
            when = schedule(timedelta(seconds=entry.every))
        queue = entry.queue or task_family(entry.task)
        out[name] = {
            "task": entry.task,
            "schedule": when,
            "args": tuple(entry.args),
            "kwargs": dict(entry.kwargs),
            "options": {"queue": queue, "routing_key": queue, "ignore_result": True},
        }
    return out


def is_redis_url(url: str) -> bool:
    return url.startswith(("redis://", "rediss://", "redis+socket://", "unix://"))


def celery_config(roster: Roster) -> dict[str, Any]:
    prefix = keys.prefix(roster.swarm)
    vt = visibility_timeout(roster)
    broker = roster.effective_broker_url
    transport: dict[str, Any] = {}
    if is_redis_url(broker):
        # One Redis can host several swarms (and the test suite): namespace every broker key.
        transport = {
            "visibility_timeout": vt,
            "global_keyprefix": prefix,
            "socket_connect_timeout": BROKER_CONNECT_TIMEOUT_SECONDS,
            "socket_timeout": BROKER_SOCKET_TIMEOUT_SECONDS,
            "socket_keepalive": True,
            "retry_on_timeout": True,
            "health_check_interval": REDIS_HEALTH_CHECK_SECONDS,
        }
    # Beat and Flower are no roster worker: their log lines say which process they are.
    worker_id = os.environ.get("SWARMQ_WORKER_ID") or os.environ.get("SWARMQ_PROCESS") or "-"
    default_limits = roster.tasks.limits["missions"]
    return {
        "broker_url": broker,
        "broker_transport_options": transport,
        **connection_loss_settings(),
        "result_backend": roster.redis_url,
        "result_backend_transport_options": {"global_keyprefix": prefix},
        # Results are for callers that read them (and forget them after): fire-and-forget
        # senders (missions, beat entries, forge) pass ignore_result; what is left expires.
        "result_expires": RESULT_EXPIRES_SECONDS,
        "result_extended": False,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "event_serializer": "json",
        "timezone": "UTC",
        "enable_utc": True,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "task_acks_on_failure_or_timeout": True,
        "worker_prefetch_multiplier": 1,
        "worker_send_task_events": True,
        "task_send_sent_event": True,
        "task_track_started": True,
        "task_soft_time_limit": default_limits.soft_time_limit_seconds,
        "task_time_limit": default_limits.time_limit_seconds,
        "task_queues": build_queues(roster),
        "task_default_queue": "missions",
        "task_default_exchange": "swarmq",
        "task_default_routing_key": "missions",
        "task_routes": (route_task,),
        "task_create_missing_queues": True,
        "beat_schedule": build_beat_schedule(roster),
        "beat_schedule_filename": str(host_dir(roster) / "celerybeat-schedule"),
        # Named, not imported (like the task modules): the reaper sits in the layer above.
        "beat_scheduler": "swarmq.reaper:ReapingBeatScheduler",
        "beat_max_loop_interval": 10,
        "worker_task_log_format": (
            "[%(asctime)s: %(levelname)s/%(processName)s] "
            f"worker={worker_id} %(task_name)s[%(task_id)s]: %(message)s"
        ),
        "worker_log_format": f"[%(asctime)s: %(levelname)s/%(processName)s] worker={worker_id} %(message)s",
        "include": task_modules(),
    }


def connection_loss_settings() -> dict[str, Any]:
    """How a worker rides out a broker or result backend that goes away and comes back.

    Every choice keeps the worker process alive and its running task running; what cannot be
    acknowledged on the lost connection comes back as a redelivery, which the task's own
    idempotency turns into a no-op (a mission's claim and settled state, see docs/operations.md):

    * ``broker_connection_retry(_on_startup)`` with ``broker_connection_max_retries=None``: retry
      for ever (2 s, 4 s, ... capped by Celery); the default gives up after 100 tries and exits.
    * ``broker_channel_error_retry``: a channel error (redis-py's ``ResponseError`` family,
      e.g. a server still loading its AOF or a blocking read unblocked by a restart) restarts the
      consumer like a connection error does, instead of escaping as "Unrecoverable error" and
      ending the worker.
    * ``worker_cancel_long_running_tasks_on_connection_loss=False``: with ``True`` every
      ``acks_late`` task in flight is terminated when the broker blinks, so every running
      mission's agent was killed and its assignment left ``executing`` until a redelivery or
      the reaper started the agent a second time. Left running, the mission settles through the
      ledger (files plus store locks that wait out the outage) and the redelivered message finds
      it settled (or still running under a fresh claim) and is skipped.
    * The same values for RabbitMQ, whose acks differ: an unacked message is requeued when its
      channel closes (a broker loss, or ``consumer_timeout`` passed on a long mission), so it
      comes back at once to the same worker and is skipped; the running task's late ack fails
      and is logged ("Couldn't ack"), which is expected (docs/missions.md).
    * Result backend: every store retried with backoff (``result_backend_always_retry``), Redis
      sockets kept alive and health-checked, so a result written during a restart is not lost
      and does not fail the task.
    """
    return {
        "broker_connection_retry": True,
        "broker_connection_retry_on_startup": True,
        "broker_connection_max_retries": None,
        "broker_connection_timeout": BROKER_CONNECT_TIMEOUT_SECONDS,
        "broker_channel_error_retry": True,
        "worker_cancel_long_running_tasks_on_connection_loss": False,
        "result_backend_always_retry": True,
        "result_backend_max_retries": 20,
        "result_backend_max_sleep_between_retries_ms": 5000,
        "redis_retry_on_timeout": True,
        "redis_socket_keepalive": True,
        "redis_socket_connect_timeout": BROKER_CONNECT_TIMEOUT_SECONDS,
        "redis_backend_health_check_interval": REDIS_HEALTH_CHECK_SECONDS,
    }
