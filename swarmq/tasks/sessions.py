"""Live agent sessions: ``forge.session`` forges what a transcript gained since its last hook,
and every worker drains its host's hook spool.

Thin: :func:`swarmq.wiring.sessions.forge_session` does the work (offset-keyed, so a redelivered
or repeated message forges nothing twice). The spool (:mod:`swarmq.storage.spool`) is where an
agent's hook leaves its work when it cannot, or need not, reach Redis itself; each worker drains
the spool of its roster at start and every :data:`DRAIN_SECONDS` after, sending one
``forge.session`` per transcript and deleting a record only once Redis accepted the message.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import Any

from celery import Celery
from celery.signals import worker_ready, worker_shutdown

from swarmq.names import FORGE_CLOSE_LOOP, FORGE_SESSION
from swarmq.roster.loader import find_config
from swarmq.storage.spool import Claimed, Spool
from swarmq.storage.statedir import swarm_state_dir
from swarmq.wiring.sessions import forge_session
from swarmq.workers.app import app
from swarmq.workers.base import SwarmTask

log = logging.getLogger(__name__)

DRAIN_SECONDS = 5.0
CLOSING_EVENTS = frozenset({"SessionEnd"})
"""Hook events after which a session says no more: its forge is followed by a close loop."""
UNENDING_AGENTS = frozenset({"codex"})
"""Agents with no session-end hook: a close loop follows each piece that taught something new."""
PUBLISH_RETRY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5}
"""One quick retry: with Redis away the record simply stays spooled for the next pass."""


@app.task(name=FORGE_SESSION, bind=True)
def forge_live_session(
    self: SwarmTask,
    session_id: str,
    transcript_path: str,
    agent: str | None = None,
    close: bool = False,
    close_if_new: bool = False,
) -> dict[str, Any]:
    """Forge what ``transcript_path`` gained since the last ``forge.session`` for it; with
    ``close`` (the session ended) the flywheel's close loop is sent next, so what the session
    taught is scored (and shown, provisionally, when it is good enough) before the next session
    starts rather than at the next scheduled loop. ``close_if_new``: the same whenever this piece
    yielded a new candidate (for an agent whose sessions report no end: Codex)."""
    if not isinstance(transcript_path, str) or not transcript_path:
        raise ValueError("transcript_path must be a transcript file path")
    if not isinstance(session_id, str):
        raise ValueError("session_id must be a string")
    result = forge_session(
        self.roster, self.cluster.locks, session_id, transcript_path, agent=agent
    )
    out = result.as_dict()
    if (close or (close_if_new and result.new > 0)) and FORGE_CLOSE_LOOP in self.app.tasks:
        self.app.send_task(FORGE_CLOSE_LOOP, ignore_result=True)
        out["close_loop"] = "sent"
    return out


def spool_of(config: str | None = None) -> Spool:
    """The hook spool of the roster at ``config`` (default: this process's roster file)."""
    return Spool(swarm_state_dir(config or find_config()) / "spool")


def send_records(celery: Celery, claimed: Iterable[Claimed]) -> int:
    """Send one ``forge.session`` per transcript among ``claimed`` records; each record is
    deleted once its message is accepted, and put back when sending failed. Returns how many
    messages were sent."""
    groups: dict[str, list[Claimed]] = {}
    for item in claimed:
        path = item.record.get("transcript_path")
        if not isinstance(path, str) or not path:
            log.warning("hook spool: %s holds no transcript_path; kept as .bad", item.path)
            item.path.rename(item.original.with_name(item.original.name + ".bad"))
            continue
        groups.setdefault(path, []).append(item)
    sent = 0
    failed: Exception | None = None
    for path, items in groups.items():
        if failed is None:
            record = items[-1].record
            ended = any(item.record.get("event") in CLOSING_EVENTS for item in items)
            try:
                celery.send_task(
                    FORGE_SESSION,
                    kwargs={
                        "session_id": str(record.get("session_id") or ""),
                        "transcript_path": path,
                        "agent": record.get("agent"),
                        "close": ended,
                        "close_if_new": record.get("agent") in UNENDING_AGENTS,
                    },
                    ignore_result=True,
                    retry=True,
                    retry_policy=PUBLISH_RETRY,
                )
            except Exception as exc:  # the broker is away: keep everything for the next pass
                failed = exc
            else:
                sent += 1
                for item in items:
                    item.done()
                continue
        for item in items:
            item.release()
    if failed is not None:
        log.warning(
            "hook spool: cannot send %s (%s); kept for the next pass", FORGE_SESSION, failed
        )
    return sent


def drain(celery: Celery, spool: Spool) -> int:
    """One pass over ``spool``; returns the number of messages sent."""
    return send_records(celery, list(spool.claim()))


_stop = threading.Event()


@worker_ready.connect
def _start_draining(sender: Any = None, **_: Any) -> None:
    celery = getattr(sender, "app", None)
    if celery is None or FORGE_SESSION not in celery.tasks:
        return
    spool = spool_of()

    def loop() -> None:
        while True:
            try:
                drain(celery, spool)
            except Exception:  # never let the drainer die: log and try again next pass
                log.exception("hook spool: drain failed")
            if _stop.wait(DRAIN_SECONDS):
                return

    threading.Thread(target=loop, name="swarmq-hook-spool", daemon=True).start()


@worker_shutdown.connect
def _stop_draining(**_: Any) -> None:
    _stop.set()
