"""The root of every error swarmq raises on purpose, and the four families callers act on.

Each area keeps its own root (``KnowledgeError``, ``LockError``, ``QuotaError``, ``RosterError``,
``AttemptError``, ``CompletionError``, …) and each root sits under :class:`SwarmqError`, so
``except SwarmqError`` catches everything swarmq means to raise and nothing it does not. The
families say what a caller can do about an error; the API maps a family to a status code
(``api/app.py``) instead of mapping every ``ValueError`` to 400. Modelled on dramatiq's
``errors.py``. Lowest layer: imports nothing of swarmq.
"""

from __future__ import annotations


class SwarmqError(Exception):
    """Base of every error swarmq raises on purpose."""


class InvalidInput(SwarmqError, ValueError):
    """The caller's input is wrong (a bad id, path, query or entry): fix it and ask again (400)."""


class NotFound(SwarmqError, LookupError):
    """What was asked for does not exist (404)."""


class Conflict(SwarmqError):
    """The request clashes with the current state (a transition, a duplicate, a fenced-off
    write): re-read and decide again (409)."""


class Unavailable(SwarmqError):
    """A dependency is down or unreadable (Redis, the broker, a lock, a corrupt ledger): the
    same request may succeed later (503)."""
