"""The LLM ledger: one JSONL line per attempt (and per refused reply), under the runtime dir.

It answers "what did we spend, on what, and how did it go" without Redis: quota and window,
provider and model, tokens, latency, outcome, and whether the attempt spent a quota slot
(``counted``). Lines are appended with one ``write`` + fsync (O_APPEND), so concurrent workers
on one host never interleave; the summary skips a torn line instead of failing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from swarmq.storage.atomic import append_jsonl
from swarmq.storage.clock import iso
from swarmq.storage.jsonl import JsonlLine, iter_jsonl

LEDGER_FILE = "llm-ledger.jsonl"

ATTEMPT = "attempt"
REPLY_REJECTED = "reply_rejected"


@dataclass(frozen=True, slots=True)
class LedgerRecord:
    """One attempt at a provider (``event: attempt``) or one refused reply."""

    call_id: str
    attempt: int
    quota: str
    window: str | None
    provider: str
    model: str
    outcome: str
    counted: bool
    """The attempt spent a quota slot (its request left this process)."""
    input_hash: str | None = None
    task_id: str | None = None
    purpose: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_ms: float | None = None
    status_code: int | None = None
    error: str | None = None
    event: str = ATTEMPT
    at: str = field(default_factory=iso)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        return {"at": data.pop("at"), "event": data.pop("event"), **data}


class LLMLedger:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @classmethod
    def in_runtime(cls, runtime_dir: Path) -> LLMLedger:
        return cls(Path(runtime_dir) / LEDGER_FILE)

    def append(self, record: LedgerRecord) -> None:
        append_jsonl(self.path, [record.as_json()])

    def records(self) -> Iterable[dict[str, Any]]:
        if not self.path.exists():
            return
        for line in iter_jsonl(self.path):
            if isinstance(line, JsonlLine) and isinstance(line.value, dict):
                yield line.value


@dataclass
class UsageRow:
    day: str
    quota: str
    model: str
    provider: str
    attempts: int = 0
    counted: int = 0
    ok: int = 0
    failed: int = 0
    rejected_replies: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms_total: float = 0.0
    outcomes: dict[str, int] = field(default_factory=dict)

    @property
    def mean_latency_ms(self) -> float | None:
        return round(self.latency_ms_total / self.attempts, 1) if self.attempts else None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("latency_ms_total")
        data["mean_latency_ms"] = self.mean_latency_ms
        return data


def summarise_usage(records: Iterable[dict[str, Any]], *, day: str | None = None) -> list[UsageRow]:
    """Per (quota window day, quota, model): attempts, slots spent, outcomes and tokens."""
    rows: dict[tuple[str, str, str], UsageRow] = {}
    outcome_counts: dict[tuple[str, str, str], dict[str, int]] = defaultdict(dict)
    for record in records:
        at = record.get("at")
        window = record.get("window")
        key_day = (
            window if isinstance(window, str) else (at[:10] if isinstance(at, str) else "unknown")
        )
        if day is not None and key_day != day:
            continue
        quota, model = str(record.get("quota", "?")), str(record.get("model", "?"))
        key = (key_day, quota, model)
        row = rows.get(key)
        if row is None:
            row = rows[key] = UsageRow(key_day, quota, model, str(record.get("provider", "?")))
        if record.get("event") == REPLY_REJECTED:
            row.rejected_replies += 1
            continue
        row.attempts += 1
        outcome = str(record.get("outcome", "?"))
        counts = outcome_counts[key]
        counts[outcome] = counts.get(outcome, 0) + 1
        if record.get("counted") is True:
            row.counted += 1
        if outcome == "ok":
            row.ok += 1
        else:
            row.failed += 1
        row.tokens_in += _count(record.get("tokens_in"))
        row.tokens_out += _count(record.get("tokens_out"))
        latency = record.get("latency_ms")
        if isinstance(latency, int | float) and not isinstance(latency, bool):
            row.latency_ms_total += float(latency)
    for key, row in rows.items():
        row.outcomes = dict(sorted(outcome_counts[key].items()))
    return [rows[k] for k in sorted(rows)]


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
