"""The knowledge store's errors: each names the entry and what went wrong."""

from __future__ import annotations

from swarmq.errors import Conflict, InvalidInput, NotFound, SwarmqError


class KnowledgeError(SwarmqError):
    """Base of the store's errors."""


class EntryNotFound(KnowledgeError, NotFound, KeyError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "entry not found"


class RevisionConflict(KnowledgeError, Conflict):
    """Compare-and-swap failed: the entry changed since the caller read it."""

    def __init__(self, entry_id: str, expected: int, actual: int) -> None:
        super().__init__(f"entry {entry_id}: expected revision {expected}, found {actual}")
        self.entry_id, self.expected, self.actual = entry_id, expected, actual


class InvalidEntry(KnowledgeError, InvalidInput):
    def __init__(self, entry_id: str, errors: list[str]) -> None:
        super().__init__(f"entry {entry_id}: " + "; ".join(errors))
        self.entry_id, self.errors = entry_id, errors


class RestoreRefused(KnowledgeError):
    """A quarantined entry whose lesson no longer passes validation stays quarantined."""

    def __init__(self, entry_id: str, reason: str) -> None:
        super().__init__(f"entry {entry_id} stays quarantined: {reason}")
        self.entry_id, self.reason = entry_id, reason


class ReceiptChainBroken(KnowledgeError):
    """The receipt journal fails verification; it is reported, never repaired silently."""

    def __init__(self, path: str, seq: int, reason: str) -> None:
        super().__init__(f"{path}: receipt chain broken at seq {seq}: {reason}")
        self.path, self.seq, self.reason = path, seq, reason
