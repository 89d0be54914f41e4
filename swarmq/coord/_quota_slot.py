"""A quota reservation held in a ``with`` block: started once, or given back on exit."""

from __future__ import annotations

import contextlib
from types import TracebackType
from typing import Protocol

from swarmq.coord.quota_types import QuotaError, QuotaUnavailable, Reservation


class SlotGate(Protocol):
    """What a slot needs of the gate that granted it (:class:`~swarmq.coord.quota.QuotaGate`)."""

    def start(self, reservation: Reservation) -> int: ...

    def release(self, reservation: Reservation) -> bool: ...

    def renew(self, reservation: Reservation) -> Reservation: ...


class QuotaSlot:
    """A reservation in a ``with`` block: ``start()`` once, or it is released on exit."""

    def __init__(self, gate: SlotGate, reservation: Reservation) -> None:
        self.gate = gate
        self.reservation = reservation
        self.started = False
        self.used: int | None = None

    def start(self) -> int:
        if self.started:
            raise QuotaError("this quota slot was already started")
        self.used = self.gate.start(self.reservation)
        self.started = True
        return self.used

    def renew(self) -> None:
        self.reservation = self.gate.renew(self.reservation)

    def __enter__(self) -> QuotaSlot:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self.started:
            with contextlib.suppress(QuotaUnavailable):
                # Unreachable Redis: the lease expires and returns the slot by itself.
                self.gate.release(self.reservation)
