"""The one Task base class: every cross-cutting concern lives here, so job modules stay thin.

* **Attempt counting and dead letters.** Each start of a message adds its start id to a set in
  Redis (one per delivery round: a Celery retry starts a new one; a start asked again after its
  answer was lost counts once). A message that keeps killing its worker
  (OOM, segfault, ``kill -9``) is redelivered by ``task_reject_on_worker_lost`` and would loop
  forever; after ``tasks.max_deliveries`` starts it goes to the ``dead_letter`` queue and to
  ``<runtime>/dead-letter.jsonl`` instead of running again. A run that ends deletes its counter
  (one ``UNLINK``); one killed mid-run leaves it, expiring one visibility timeout after its last
  start (a redelivery always comes sooner), so Redis holds counters only for lost runs.
* **Store locks.** ``store_lock="consolidation:{scope}"`` on a task holds that Redis lock (with
  its fencing lease in ``self.lease``) around the body; ``self.hold_store_lock(name)`` does it
  ad hoc.
* **One round trip.** The attempt counter and the lock try are pipelined
  (:mod:`swarmq.workers.prelude`), so these concerns cost one round trip before the body.
* **No quota here.** LLM quota is reserved per LLM call, by the one mechanism every LLM job uses:
  :class:`~swarmq.llm.metered.MeteredCompleter` over the cluster's quota gate (a job makes many
  calls, and a slot must be held only around the call it pays for).
* **Structured logging.** Start and end lines carry task id, task name, worker id and duration.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import socket
import time
from collections.abc import Iterator
from typing import Any, ClassVar

from celery import Task
from celery.exceptions import Reject
from celery.signals import worker_process_shutdown
from celery.utils.log import get_task_logger

from swarmq.coord import keys
from swarmq.coord.cluster import Cluster, current
from swarmq.coord.connection import TRANSIENT
from swarmq.coord.quota import flush_mirrors
from swarmq.names import DEAD_LETTER_FILE, DEAD_LETTER_QUEUE
from swarmq.roster.schema import Roster
from swarmq.storage.atomic import append_jsonl
from swarmq.storage.clock import iso
from swarmq.storage.locking import Lease
from swarmq.workers.prelude import open_prelude

log = get_task_logger("swarmq.task")


@worker_process_shutdown.connect
def _flush_quota_mirrors(**_: Any) -> None:
    """Pool processes exit with ``os._exit``: atexit handlers never run, so flush here."""
    flush_mirrors()


class DeadLettered(Exception):
    """The message was moved to the dead-letter queue instead of being run again."""


_SIGNATURES: dict[type, inspect.Signature] = {}


def _run_signature(task: Task) -> inspect.Signature:
    """The task body's signature, computed once per task class (lock names are formatted from
    the call's arguments on every run)."""
    cls = type(task)
    signature = _SIGNATURES.get(cls)
    if signature is None:
        signature = _SIGNATURES[cls] = inspect.signature(task.run)
    return signature


def worker_id() -> str:
    return os.environ.get("SWARMQ_WORKER_ID") or socket.gethostname()


class SwarmTask(Task):  # type: ignore[misc]
    """Base of every swarmq task (set as the app's ``task_cls``)."""

    acks_late = True
    reject_on_worker_lost = True
    retry_backoff = True
    retry_backoff_max = 300
    retry_jitter = True
    max_retries = 3
    resultrepr_maxsize = 160
    """Celery's "succeeded in …s: <result>" INFO line shows this much of the result, not a
    whole result dict (the result itself is stored in full)."""

    store_lock: ClassVar[str | None] = None
    """Template of a store lock held around the body, formatted with the call's arguments."""
    store_lock_timeout: ClassVar[float] = 600.0

    # -- services ----------------------------------------------------------------------------

    @property
    def roster(self) -> Roster:
        roster: Roster = self.app.swarmq_roster()
        return roster

    @property
    def cluster(self) -> Cluster:
        return current(self.roster.cluster_config())

    @property
    def lease(self) -> Lease | None:
        """The lease of the declarative ``store_lock`` of the running call."""
        return getattr(self.request, "swarmq_lease", None)

    @contextlib.contextmanager
    def hold_store_lock(self, resource: str, *, timeout: float | None = None) -> Iterator[Lease]:
        with self.cluster.locks.hold(resource, timeout=timeout or self.store_lock_timeout) as lease:
            yield lease

    # -- the call ----------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        request = self.request
        if request.called_directly or request.id is None:
            return self._run_plain(args, kwargs)
        resource = self._format_lock(args, kwargs) if self.store_lock is not None else None
        cluster = self.cluster
        try:
            prelude = open_prelude(
                cluster,
                attempts_key=self._attempts_key(request.id),
                attempts_ttl_ms=int(self._attempts_ttl() * 1000),
                lock_resource=resource,
            )
        except TRANSIENT as exc:
            # Without Redis we cannot count; requeue rather than run uncounted or drop the message.
            raise Reject(f"attempt counter unavailable: {exc}", requeue=True) from exc
        with contextlib.ExitStack() as stack:
            lease: Lease | None = prelude.lease
            if prelude.lease is not None:
                stack.callback(cluster.locks.release, prelude.lease)
            if prelude.deliveries > self.roster.tasks.max_deliveries:
                self._dead_letter(args, kwargs, prelude.deliveries)
                raise DeadLettered(
                    f"{self.name}[{request.id}] started {prelude.deliveries - 1} times without "
                    f"finishing; moved to the {DEAD_LETTER_QUEUE!r} queue"
                )
            if resource is not None and lease is None:  # busy: wait for it the ordinary way
                lease = stack.enter_context(
                    cluster.locks.hold(resource, timeout=self.store_lock_timeout)
                )
            return self._run_logged(args, kwargs, prelude.deliveries, lease)

    def _run_logged(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        deliveries: int,
        lease: Lease | None,
    ) -> Any:
        request = self.request
        request.swarmq_lease = lease
        request.swarmq_deliveries = deliveries
        started = time.monotonic()
        log.info("start %s", self.name, extra=self._log_extra(deliveries=deliveries))
        try:
            result = self.run(*args, **kwargs)
        except Exception as exc:
            log.info(
                "end %s: %s after %.3fs",
                self.name,
                type(exc).__name__,
                time.monotonic() - started,
                extra=self._log_extra(outcome=type(exc).__name__),
            )
            raise
        finally:
            request.swarmq_lease = None
            self._forget_attempts()
        log.info(
            "end %s: ok after %.3fs",
            self.name,
            time.monotonic() - started,
            extra=self._log_extra(outcome="ok"),
        )
        return result

    def _run_plain(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A direct call (``task(...)`` in-process): same lock, no attempt counting."""
        with contextlib.ExitStack() as stack:
            lease: Lease | None = None
            if self.store_lock is not None:
                lease = stack.enter_context(self.hold_store_lock(self._format_lock(args, kwargs)))
            self.request.swarmq_lease = lease
            try:
                return self.run(*args, **kwargs)
            finally:
                self.request.swarmq_lease = None

    def _format_lock(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        assert self.store_lock is not None
        try:
            bound = _run_signature(self).bind_partial(*args, **kwargs)
            bound.apply_defaults()
            values = dict(bound.arguments)
        except TypeError:
            values = dict(kwargs)
        return self.store_lock.format(**values)

    def _log_extra(self, **more: Any) -> dict[str, Any]:
        return {
            "task_id": self.request.id,
            "task_name": self.name,
            "worker_id": worker_id(),
            **more,
        }

    # -- attempts and dead letters -----------------------------------------------------------

    def _attempts_key(self, task_id: str) -> str:
        return keys.attempts(self.roster.swarm, task_id, int(self.request.retries or 0))

    def _forget_attempts(self) -> None:
        """The run ended (returned, raised or asked for a retry, which counts in a new key): its
        counter has no further use. Only a worker killed mid-run leaves it, for the redelivery."""
        with contextlib.suppress(*TRANSIENT):
            self.cluster.client.unlink(self._attempts_key(str(self.request.id)))

    def _attempts_ttl(self) -> float:
        from swarmq.workers.config import VISIBILITY_MARGIN_SECONDS, visibility_timeout

        return visibility_timeout(self.roster) + VISIBILITY_MARGIN_SECONDS

    def _dead_letter(self, args: tuple[Any, ...], kwargs: dict[str, Any], deliveries: int) -> None:
        request = self.request
        delivery = request.delivery_info or {}
        record = {
            "at": iso(),
            "task_id": request.id,
            "task": self.name,
            "args": list(args),
            "kwargs": kwargs,
            "deliveries": deliveries - 1,
            "queue": delivery.get("routing_key"),
            "worker": worker_id(),
            "reason": f"started {deliveries - 1} times without finishing (max_deliveries="
            f"{self.roster.tasks.max_deliveries})",
        }
        runtime = self.roster.runtime_dir
        runtime.mkdir(parents=True, exist_ok=True)
        append_jsonl(runtime / DEAD_LETTER_FILE, [record])
        self.app.send_task(
            self.name,
            args=args,
            kwargs=kwargs,
            queue=DEAD_LETTER_QUEUE,
            routing_key=DEAD_LETTER_QUEUE,
            headers={"x-swarmq-dead-letter": record},
        )
        with contextlib.suppress(*TRANSIENT):
            self.cluster.client.delete(self._attempts_key(str(request.id)))
        log.error(
            "dead-lettered %s after %d starts",
            self.name,
            deliveries - 1,
            extra=self._log_extra(outcome="dead_letter"),
        )
