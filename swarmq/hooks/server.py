"""The hook server: one long-lived process per swarm and host that answers the agents' hooks from
a warm knowledge store, and sends the spooled sessions to forge.

A hook runs in a fresh process on every prompt and every failing tool call; loading the roster
and a 100k-entry store there would cost seconds each time. This process loads them once, keeps
the store's in-memory indexes warm (the store re-reads only files that changed), and answers one
JSON request per connection on a Unix socket in the swarm's state directory (:mod:`_wire`):

- ``session-start``: the project's facts and critical directives, from the knowledge store and
  the learnings that state one (``swarmq.federated.recall.recall_session_start``);
- ``prompt``: what every store of the workspace knows that is relevant to the prompt
  (``swarmq.federated.inject``: knowledge entries, learnings, patterns, pool candidates, worker
  and shared memory, ranked together, each fact once), silent when nothing is;
- ``failure``: what every store holds under the failing call's failure signature (knowledge
  entries, learnings, pool candidates, memory notes; ``recall_failure``), each fact once;
- ``drain``: send the spool's sessions to ``forge.session`` now (also done every few seconds
  while records wait, so they leave once Redis is back).

The query is embedded here, with the model loaded once (a fresh hook process would pay ~1 s to
load MiniLM). Between requests a thread fills the entries' vectors a query could not embed
itself (:func:`swarmq.knowledge.vectors.fill`, a short batch at a time, pausing while a request
is answered), so a store's backlog is embedded off every request's path.

Every injection is recorded (receipt, shown counts, and the flywheel's exposure of the lessons
it came from) before its block is returned; one that cannot be recorded is not shown. A failing
call is also reported to the flywheel (``observe_failure``): the same failure in another session
confirms the lessons learned of it. The first hook that finds no server starts one
(:func:`swarmq.hooks.client.start_server`); it listens only once warm, leaves after
:data:`IDLE_SECONDS` without a request (not while spooled work waits for the broker), and leaves
when its ``swarm.yaml`` changes (the next hook starts a fresh one).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import socketserver
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from swarmq.federated.inject import FederatedInjection
from swarmq.federated.inject import inject as federated_inject
from swarmq.federated.inject import prepare as federated_prepare
from swarmq.federated.recall import recall_failure, recall_session_start
from swarmq.federated.stores import Stores
from swarmq.hooks._freed import release_freed
from swarmq.hooks._wire import log, socket_path
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, hold_indexes
from swarmq.roster.loader import load_roster
from swarmq.roster.schema import Roster
from swarmq.storage.call_latency import LatencyRecorder
from swarmq.storage.locking import StoreLocks
from swarmq.storage.spool import Spool
from swarmq.storage.statedir import swarm_state_dir
from swarmq.wiring.federated import workspace_stores
from swarmq.wiring.flywheel import observe_failure
from swarmq.wiring.knowledge import knowledge_store

IDLE_SECONDS = 3600.0
DRAIN_SECONDS = 3.0
FILL_SECONDS = 5.0
"""How often the vector filler looks for entries without a vector once none were left."""
FILL_BATCH = 8
"""Entries the filler embeds per batch (~0.25 s of CPU under MiniLM): a request arriving
meanwhile waits for at most one entry's embedding, for the model."""
RELOCK_SECONDS = 5.0
MAX_REQUEST = 4 << 20
OPS = ("ping", "drain", "session-start", "prompt", "failure")
"""The requests the server answers (the latency histogram's closed set of labels)."""

Handler = Callable[["HookService", dict[str, Any]], dict[str, Any]]
"""An answer to a request kind the hooks do not make, given by the program that runs the
server (``swarmq.cli.served``: the CLI's reading commands); called under the service's lock."""


class HookService:
    """The warm state behind the socket: roster, locks, knowledge store, Celery app."""

    def __init__(self, config: Path, handlers: Mapping[str, Handler] | None = None) -> None:
        self.handlers: dict[str, Handler] = dict(handlers or {})
        self.config = config.resolve()
        self.config_mtime = self.config.stat().st_mtime_ns
        self.state = swarm_state_dir(self.config)
        self.roster: Roster = load_roster(self.config)
        self.spool = Spool(self.state / "spool")
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.stop = threading.Event()
        self.last_request = time.monotonic()
        self._locks_at = 0.0
        self.locks = self._select_locks()
        self.knowledge: KnowledgeStore = knowledge_store(self.roster, self.locks)
        self.stores: Stores = workspace_stores(self.roster, self.locks, knowledge=self.knowledge)
        self._celery: Any = None
        self.latency = LatencyRecorder(self.roster.runtime_dir, "hook", (*OPS, *self.handlers))
        self.busy = 0
        """Requests being answered (the vector filler pauses while any is)."""
        self._busy_lock = threading.Lock()
        self._released_at = self.last_request

    def release_memory(self) -> bool:
        """Between requests, hand back the heap memory the requests answered since the last
        call freed (:mod:`._freed`): once per quiet spell after a request, never while one is
        answered (it runs off every request's path); ``True`` when it did."""
        with self._busy_lock:
            if self.busy or self.last_request <= self._released_at:
                return False
            self._released_at = self.last_request
        return release_freed()

    def note(self, text: str) -> None:
        """One line in the swarm's hook log."""
        log(self.state, text)

    def _select_locks(self) -> StoreLocks:
        from swarmq.coord.lockmode import store_locks

        self._locks_at = time.monotonic()
        return store_locks(self.roster.cluster_config(), lazy=True)

    def _fresh_locks(self) -> None:
        """With Redis away at start the store could only read; try again every few seconds."""
        from swarmq.coord.lockmode import UnreachableLocks

        if (
            isinstance(self.locks, UnreachableLocks)
            and time.monotonic() - self._locks_at > RELOCK_SECONDS
        ):
            locks = self._select_locks()
            if not isinstance(locks, UnreachableLocks):
                self.locks = locks
                self.knowledge = knowledge_store(self.roster, locks)
                self.stores = workspace_stores(self.roster, locks, knowledge=self.knowledge)

    def warm(self) -> None:
        """Load every tier and build the indexes once, before the socket is opened, and ready
        the models that query used for many queries (nothing left to load in a request), and
        hold the index connections the searches open."""
        hold_indexes()  # each store's index connection and handle, from one request to the next
        federated_prepare(self.stores, QueryContext(text="warm up"))
        from swarmq.similarity.static_embedder import ready_default

        ready_default()

    # --- requests -------------------------------------------------------------------------
    def answer(self, message: dict[str, Any]) -> dict[str, Any]:
        self.last_request = time.monotonic()
        op = message.get("op")
        if op == "ping":
            return {"ok": True, "pid": os.getpid()}
        if op == "drain":
            self.wake.set()
            return {"ok": True, "pending": len(self.spool)}
        handler = self.handlers.get(op) if isinstance(op, str) else None
        if handler is not None:
            with self._busy_lock:
                self.busy += 1
            try:
                with self.lock:
                    self._fresh_locks()
                    return handler(self, message)
            finally:
                with self._busy_lock:
                    self.busy -= 1
        raw_session, raw_text = message.get("session_id"), message.get("text")
        session = raw_session if isinstance(raw_session, str) and raw_session else None
        text = raw_text if isinstance(raw_text, str) else ""
        with self._busy_lock:
            self.busy += 1
        try:
            return self._answer(op, text, session)
        finally:
            with self._busy_lock:
                self.busy -= 1

    def _answer(self, op: object, text: str, session: str | None) -> dict[str, Any]:
        with self.lock:
            self._fresh_locks()
            # Recorded whole (receipt, counters, the flywheel's exposure) by the federation.
            found = self._ask(str(op), text, session)
            if op == "failure" and session:
                # A failure seen again in another session confirms the lessons learned of it.
                observe_failure(self.roster, self.locks, text, session_id=session)
        if found is None or not found.block or not found.shown:
            return {"context": None}
        return {"context": found.block, "trace_id": found.trace_id, "shown": found.shown_ids}

    def _ask(self, op: str, text: str, session: str | None) -> FederatedInjection | None:
        if op == "prompt":
            if not text.strip():
                return None
            return federated_inject(self.stores, QueryContext(text=text), session_id=session)
        if op == "session-start":
            return recall_session_start(self.stores, session_id=session)
        if op == "failure":
            return recall_failure(self.stores, text, session_id=session)
        raise ValueError(f"unknown hook request {op!r}")

    # --- the spool ------------------------------------------------------------------------
    def celery(self) -> Any:
        if self._celery is None:
            from swarmq.workers.app import create_app

            self._celery = create_app(self.roster)
        return self._celery

    def drain_forever(self) -> None:
        from swarmq.tasks.sessions import drain

        retry_at = 0.0
        while not self.stop.is_set():
            self.wake.wait(DRAIN_SECONDS)
            self.wake.clear()
            if self.stop.is_set():
                return
            if time.monotonic() < retry_at:
                continue  # the broker refused moments ago: a burst of hooks does not hammer it
            try:
                if self.spool.pending():
                    drain(self.celery(), self.spool)
            except Exception as exc:  # never die: the records stay spooled
                log(self.state, f"server: drain failed: {type(exc).__name__}: {exc}")
            if self.spool.pending():
                retry_at = time.monotonic() + DRAIN_SECONDS

    def fill_forever(self) -> None:
        """Embed the entries no query could (a slow model), a batch at a time while no request
        is being answered; look again every :data:`FILL_SECONDS` once none are left."""
        from swarmq.knowledge.vectors import fill

        while not self.stop.is_set():
            try:
                report = fill(
                    self.knowledge,
                    FILL_BATCH,
                    batch=FILL_BATCH,
                    stop=lambda: self.busy > 0 or self.stop.is_set(),
                )
            except Exception as exc:  # never die: the next query still ranks by words
                log(self.state, f"server: vector fill failed: {type(exc).__name__}: {exc}")
                report = None
            more = report is not None and (report.stopped or not report.done)
            pause = 0.02 if more else FILL_SECONDS
            if self.stop.wait(pause):
                return

    def should_leave(self, idle: float) -> str | None:
        if time.monotonic() - self.last_request > idle and not self.spool.pending():
            return "idle"  # never while spooled work waits for the broker
        try:
            if self.config.stat().st_mtime_ns != self.config_mtime:
                return f"{self.config} changed"
        except FileNotFoundError:
            return f"{self.config} removed"
        return None


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        service = self.server.service
        raw = self.rfile.readline(MAX_REQUEST)
        started = time.perf_counter()
        op = "?"
        try:
            message = json.loads(raw)
            if not isinstance(message, dict):
                raise ValueError("a request is a JSON object")
            op = str(message.get("op"))
            out = service.answer(message)
        except Exception as exc:  # an answer always comes back; the hook stays silent on errors
            log(service.state, f"server: {type(exc).__name__}: {exc}")
            out = {"context": None, "error": f"{type(exc).__name__}: {exc}"}
        self.wfile.write(json.dumps(out, ensure_ascii=False).encode("utf-8") + b"\n")
        service.latency.observe(op, time.perf_counter() - started)


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, service: HookService) -> None:
        self.service = service
        super().__init__(path, _Handler)


def serve(
    config: Path, *, idle: float = IDLE_SECONDS, handlers: Mapping[str, Handler] | None = None
) -> None:
    """Warm up, listen, answer until idle or told to stop (see the module docstring);
    ``handlers`` answer request kinds beyond the hooks' own."""
    service = HookService(config, handlers)
    state = service.state
    started = time.monotonic()
    service.warm()
    path = socket_path(state)
    path.parent.mkdir(parents=True, exist_ok=True)
    from swarmq.hooks._wire import request

    if request(state, {"op": "ping"}, 1.0) is not None:
        log(state, "server: another server answers; leaving")
        return
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    server = _Server(str(path), service)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(state / "server.spawn")
    log(state, f"server: listening on {path} after {time.monotonic() - started:.2f}s")
    threading.Thread(target=server.serve_forever, name="hook-server", daemon=True).start()
    drainer = threading.Thread(target=service.drain_forever, name="hook-drain", daemon=True)
    drainer.start()
    threading.Thread(target=service.fill_forever, name="hook-vectors", daemon=True).start()
    service.wake.set()  # whatever waited while no server ran
    try:
        while True:
            reason = service.should_leave(idle)
            if reason is not None:
                log(state, f"server: leaving ({reason})")
                break
            service.release_memory()
            time.sleep(1.0)
    finally:
        service.stop.set()
        service.wake.set()
        server.shutdown()
        server.server_close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def main(
    argv: list[str] | None = None,
    *,
    prog: str = "python -m swarmq.hooks.server",
    handlers: Mapping[str, Handler] | None = None,
) -> None:
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--config", required=True, type=Path)
    parser.add_argument("--idle", type=float, default=IDLE_SECONDS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        serve(args.config, idle=args.idle, handlers=handlers)
    except Exception as exc:
        log(swarm_state_dir(args.config), f"server: cannot serve: {type(exc).__name__}: {exc}")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(swarm_state_dir(args.config) / "server.spawn")
        raise


if __name__ == "__main__":
    main()
