"""The hash-chained receipt journal ``.swarm/knowledge-receipts-v2.jsonl``.

Each line is ``{schema_version: 2, cutover_version: 1, seq, prev_hash, event_id, timestamp,
kind, payload, hash}``; ``prev_hash`` is the previous line's ``hash`` (``"GENESIS"`` first) and
``hash`` is the lowercase hex SHA-256 of the compact JSON of the record without ``hash``, in the
same key order. A journal that fails verification (corrupt or unterminated line, wrong
sequence, broken link, wrong hash) raises :class:`ReceiptChainBroken` naming the first bad
sequence number; nothing here ever repairs it.

Retrievals commit their membership (which entries a trace showed) before the block is shown;
terminals (applied / n_a / ignored / contradicted / violated) commit per ``(trace, entry)``
pair: a repeat of the same outcome is idempotent, a different or late one is rejected.
"""

from __future__ import annotations

import hashlib
import os
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from swarmq.knowledge.errors import ReceiptChainBroken
from swarmq.knowledge.serialize import dumps_js, loads_js
from swarmq.storage.atomic import append_lines
from swarmq.storage.clock import iso, try_parse_iso
from swarmq.storage.locking import StoreLocks, file_resource

GENESIS = "GENESIS"
Outcome = Literal["applied", "n_a", "ignored", "contradicted", "violated"]
OUTCOMES: tuple[str, ...] = ("applied", "n_a", "ignored", "contradicted", "violated")


def receipt_hash(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "hash"}
    return hashlib.sha256(dumps_js(body).encode("utf-8")).hexdigest()


@dataclass
class LedgerState:
    """What the journal says so far (rebuilt from it; never a separate authority)."""

    seq: int = 0
    last_hash: str = GENESIS
    offset: int = 0
    ino: int = -1
    traces: dict[str, dict[str, Any]] = field(default_factory=dict)
    terminals: dict[tuple[str, str], str] = field(default_factory=dict)

    def apply(self, record: dict[str, Any]) -> None:
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
        assert isinstance(payload, dict)
        if record.get("kind") == "retrieval_committed" and isinstance(payload.get("trace"), dict):
            trace = payload["trace"]
            self.traces[str(trace.get("trace_id"))] = trace
        elif record.get("kind") == "terminal_committed" and "outcome" in payload:
            self.terminals[(str(payload.get("trace_id")), str(payload.get("entry_id")))] = str(
                payload["outcome"]
            )


@dataclass(frozen=True, slots=True)
class TerminalResult:
    status: Literal["committed", "duplicate", "rejected"]
    reason: str | None = None
    trace: dict[str, Any] | None = None


def verify_lines(path: Path, data: bytes, state: LedgerState) -> None:
    """Check ``data`` (the journal from ``state.offset``) and fold it into ``state``."""
    position = 0
    while position < len(data):
        newline = data.find(b"\n", position)
        expected = state.seq + 1
        if newline < 0:
            raise ReceiptChainBroken(str(path), expected, "unterminated final line")
        raw = data[position:newline]
        position = newline + 1
        try:
            record = loads_js(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ReceiptChainBroken(str(path), expected, f"corrupt line ({exc})") from exc
        if not isinstance(record, dict):
            raise ReceiptChainBroken(str(path), expected, "line is not a JSON object")
        if record.get("seq") != expected:
            raise ReceiptChainBroken(str(path), expected, f"seq is {record.get('seq')!r}")
        if record.get("prev_hash") != state.last_hash:
            raise ReceiptChainBroken(
                str(path), expected, "prev_hash does not match the previous hash"
            )
        if record.get("hash") != receipt_hash(record):
            raise ReceiptChainBroken(str(path), expected, "hash does not match the record")
        state.seq = expected
        state.last_hash = str(record["hash"])
        state.apply(record)
    state.offset += position


class ReceiptLedger:
    """Append-only, hash-chained, lock-protected; verified incrementally as it is read."""

    def __init__(
        self,
        path: Path,
        *,
        locks: StoreLocks,
        clock: Callable[[], datetime] | None = None,
        grace_days: int = 7,
    ) -> None:
        self.path = Path(path)
        self.locks = locks
        self.clock = clock or (lambda: datetime.now(UTC))
        self.grace = timedelta(days=grace_days)
        self._state = LedgerState()
        self._mutex = threading.RLock()

    @property
    def resource(self) -> str:
        return file_resource(self.path)

    def state(self) -> LedgerState:
        """The verified state; raises :class:`ReceiptChainBroken` on any defect."""
        with self._mutex:
            try:
                handle = self.path.open("rb")
            except FileNotFoundError:
                self._state = LedgerState()
                return self._state
            with handle:
                st = os.fstat(handle.fileno())
                if st.st_ino != self._state.ino or st.st_size < self._state.offset:
                    self._state = LedgerState(ino=st.st_ino)
                handle.seek(self._state.offset)
                data = handle.read()
            if data:
                scratch = LedgerState(
                    self._state.seq,
                    self._state.last_hash,
                    self._state.offset,
                    self._state.ino,
                    dict(self._state.traces),
                    dict(self._state.terminals),
                )
                verify_lines(self.path, data, scratch)
                self._state = scratch
            return self._state

    def verify(self) -> LedgerState:
        """Full verification from the first line (ignores any cached progress)."""
        with self._mutex:
            self._state = LedgerState()
            return self.state()

    def records(self) -> Iterator[dict[str, Any]]:
        self.verify()
        with self.path.open("rb") as handle:
            for line in handle:
                yield loads_js(line.decode("utf-8"))

    def _append(self, kind: str, payload: dict[str, Any], lease: Any) -> dict[str, Any]:
        state = self.state()
        record: dict[str, Any] = {
            "schema_version": 2,
            "cutover_version": 1,
            "seq": state.seq + 1,
            "prev_hash": state.last_hash,
            "event_id": str(uuid.uuid4()),
            "timestamp": iso(self.clock()),
            "kind": kind,
            "payload": payload,
        }
        record["hash"] = receipt_hash(record)
        append_lines(self.path, [dumps_js(record)], lease=lease)
        self.state()
        return record

    def commit_retrieval(self, trace: dict[str, Any]) -> dict[str, Any]:
        """Record a trace's membership (``trace_id``, ``entry_ids`` …) before it is shown."""
        with self.locks.hold(self.resource) as lease, self._mutex:
            body = {**trace, "committed_at": iso(self.clock())}
            return self._append("retrieval_committed", {"trace": body}, lease)

    def commit_terminal(
        self,
        trace_id: str,
        entry_id: str,
        outcome: str,
        *,
        reason: str | None = None,
        source: str = "unknown",
        agent: str | None = None,
    ) -> TerminalResult:
        """Validate and commit one terminal outcome for a ``(trace, entry)`` pair."""
        if outcome not in OUTCOMES:
            return TerminalResult("rejected", f"unknown outcome {outcome!r}")
        with self.locks.hold(self.resource) as lease, self._mutex:
            state = self.state()
            trace = state.traces.get(trace_id)
            if trace is None:
                return TerminalResult("rejected", f"unknown trace {trace_id}")
            if entry_id not in trace.get("entry_ids", []):
                return TerminalResult(
                    "rejected", f"entry {entry_id} was not shown in trace {trace_id}", trace
                )
            previous = state.terminals.get((trace_id, entry_id))
            if previous == outcome:
                return TerminalResult("duplicate", f"already {previous}", trace)
            if previous is not None:
                return TerminalResult(
                    "rejected", f"conflicting terminal: already {previous}", trace
                )
            committed = try_parse_iso(trace.get("committed_at"))
            if committed is not None and self.clock() - committed > self.grace:
                return TerminalResult(
                    "rejected", f"late: trace committed at {trace.get('committed_at')}", trace
                )
            if outcome in ("ignored", "n_a") and not reason:
                return TerminalResult("rejected", f"{outcome} needs reason=...", trace)
            payload = {
                "trace_id": trace_id,
                "entry_id": entry_id,
                "outcome": outcome,
                "reason": reason,
                "source": source,
                "agent": agent,
            }
            self._append("terminal_committed", payload, lease)
            return TerminalResult("committed", None, trace)
