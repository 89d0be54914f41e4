"""A store lease whose post-write confirmation may ride on the next group's validation.

After a write, :meth:`Lease.confirm` costs a Redis round trip to prove the lock was still held
when the write landed. When the group-commit leader (:mod:`._group`) already has the next group
queued, that group's own pre-write :meth:`Lease.validate` proves the same a moment later: a lock
holds its owner's token from the acquire on, and once lost that token never comes back. So the
leader defers the confirmation and acknowledges a written group only once a later validation
(or, when nothing follows, the confirmation) succeeds. When it fails, the leader confirms
once more and, if that fails too, the written group's callers get
:class:`~swarmq.storage.locking.CommitUnconfirmed`, as from a failed confirmation today; what was
written stays on disk, as it does then.
"""

from __future__ import annotations

from collections.abc import Callable

from swarmq.storage.locking import CommitUnconfirmed, Lease


class FoldedLease:
    """Wraps the lease of one lock hold: counts the writes made under it and the ones known to
    have landed while it held; calls ``on_confirmed`` whenever the latter catch up."""

    def __init__(
        self, lease: Lease, defer: Callable[[], bool], on_confirmed: Callable[[], None]
    ) -> None:
        self.lease = lease
        self._defer = defer
        """Whether a write's confirmation may wait (the next group is already queued)."""
        self._on_confirmed = on_confirmed
        self._written = 0
        self._confirmed = 0

    @property
    def resource(self) -> str:
        return self.lease.resource

    @property
    def fencing_token(self) -> int:
        return self.lease.fencing_token

    @property
    def settled(self) -> bool:
        """Every write made under this hold is confirmed."""
        return self._confirmed == self._written

    def validate(self, recorded_token: int) -> int:
        token = self.lease.validate(recorded_token)
        self._caught_up()  # the lock holds now, so it held when the earlier writes landed
        return token

    def confirm(self) -> None:
        self._written += 1
        if not self._defer():
            self.settle()

    def start_confirm(self) -> Callable[[], None]:
        """:meth:`confirm`, its round trip overlapping the append's fsync when the lease can."""
        self._written += 1
        if self._defer():
            return _later
        start = getattr(self.lease, "start_confirm", None)
        if start is None:
            return self.settle
        finish: Callable[[], None] = start()

        def confirmed() -> None:
            finish()
            self._caught_up()

        return confirmed

    def settle(self) -> None:
        """Confirm the writes not confirmed yet (one round trip; none when all are)."""
        if not self.settled:
            self.lease.confirm()
            self._caught_up()

    def _caught_up(self) -> None:
        if not self.settled:
            self._confirmed = self._written
            self._on_confirmed()


def _later() -> None:
    """A deferred confirmation: the next group's validation (or :meth:`FoldedLease.settle`)."""


def unconfirmed(lease: FoldedLease, cause: BaseException) -> CommitUnconfirmed | None:
    """The error for callers whose writes landed but whose confirmation was to come from the
    step that failed with ``cause``; ``None`` when a confirmation now succeeds (a transient
    failure: they were then acknowledged)."""
    if isinstance(cause, CommitUnconfirmed):
        return cause
    try:
        lease.settle()
    except Exception as exc:  # lost (or Redis unreachable): never a success
        error = CommitUnconfirmed(
            f"{lease.resource}: written, but the lease could not be confirmed afterwards "
            f"({exc}); the write may be overwritten: re-check it under a fresh lock"
        )
        error.__cause__ = exc
        return error
    return None
