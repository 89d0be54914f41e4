"""The consolidation events file: every change of every run, written ahead of the store.

A run appends, in one write + fsync, a ``run_started`` record, one record per action
(``merged``, ``superseded``, ``linked``) and one ``entry_changed`` record per changed entry with
its text before and after; then it commits the store; then it appends ``run_committed``. A
crash leaves a started run without an end: the next run, under the same store lock, looks at
the store and appends ``run_committed`` (the store has the run's changes; a multi-file store is
first rolled forward to the recorded "after" texts) or ``run_aborted`` (it has none). So the
events file always tells what happened, and it alone is enough to restore any entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swarmq.storage.atomic import append_jsonl
from swarmq.storage.jsonl import JsonlLine, iter_jsonl
from swarmq.storage.locking import Lease

SCHEMA_VERSION = 1
RUN_STARTED = "run_started"
RUN_COMMITTED = "run_committed"
RUN_ABORTED = "run_aborted"
ENTRY_CHANGED = "entry_changed"


@dataclass
class OpenRun:
    """A run that started but never recorded its end."""

    run_id: str
    started: dict[str, Any]
    changes: list[dict[str, Any]] = field(default_factory=list)


class EventLog:
    """Append-only JSONL journal beside a store (``<store>-consolidation.jsonl``)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def append(self, records: Iterable[Mapping[str, Any]], lease: Lease | None) -> None:
        lines = [{"schema_version": SCHEMA_VERSION, **record} for record in records]
        if lines:
            append_jsonl(self.path, lines, lease=lease)

    def open_runs(self) -> list[OpenRun]:
        """Runs with a ``run_started`` and no ``run_committed``/``run_aborted``, oldest first."""
        runs: dict[str, OpenRun] = {}
        for item in iter_jsonl(self.path):
            if not isinstance(item, JsonlLine) or not isinstance(item.value, dict):
                continue  # a torn last line from a crash mid-append: that run never started
            record = item.value
            run_id = record.get("run_id")
            kind = record.get("type")
            if not isinstance(run_id, str):
                continue
            if kind == RUN_STARTED:
                runs[run_id] = OpenRun(run_id, record)
            elif kind in (RUN_COMMITTED, RUN_ABORTED):
                runs.pop(run_id, None)
            elif kind == ENTRY_CHANGED and run_id in runs:
                runs[run_id].changes.append(record)
        return list(runs.values())

    def records(self, run_id: str | None = None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for item in iter_jsonl(self.path):
            if (
                isinstance(item, JsonlLine)
                and isinstance(item.value, dict)
                and (run_id is None or item.value.get("run_id") == run_id)
            ):
                out.append(item.value)
        return out
