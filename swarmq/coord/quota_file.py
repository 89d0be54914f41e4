"""opencode-swarm's daily quota files (``.swarm/knowledge-enrichment-quota.json`` and kin).

The cluster counts calls in Redis; these files mirror the count in opencode-swarm's format so
its own tools keep reading them, and so a Redis that lost its keys can be re-seeded from disk
instead of granting a fresh day's worth of calls.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import filelock

from swarmq.names import ENRICHMENT_QUOTA, IMPROVER_QUOTA
from swarmq.storage.atomic import side_path, write_atomic
from swarmq.storage.clock import iso

QUOTA_FILES = {
    ENRICHMENT_QUOTA: "knowledge-enrichment-quota.json",
    IMPROVER_QUOTA: "skill-improver-quota.json",
}


def quota_file_name(quota: str) -> str:
    """opencode-swarm's file for its two quotas; ``<name>-quota.json`` for any other."""
    return QUOTA_FILES.get(quota, f"{quota.replace('_', '-')}-quota.json")


@dataclass(frozen=True)
class QuotaFileState:
    """The file's fields, in opencode-swarm's order."""

    date: str
    calls_used: int
    max_calls: int
    window: str
    last_run_at: str | None = None

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "date": self.date,
            "calls_used": self.calls_used,
            "max_calls": self.max_calls,
        }
        if self.last_run_at is not None:
            data["last_run_at"] = self.last_run_at
        data["window"] = self.window
        return data


def read_quota_file(path: Path) -> QuotaFileState | None:
    """The stored state, or ``None`` when missing or invalid (opencode-swarm's validity rule)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    date, used, top, window = (data.get(k) for k in ("date", "calls_used", "max_calls", "window"))
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (used, top))
    if not isinstance(date, str) or not numeric or window not in ("utc", "local"):
        return None
    assert isinstance(used, int | float) and isinstance(top, int | float)
    last = data.get("last_run_at")
    return QuotaFileState(
        date, int(used), int(top), window, last if isinstance(last, str) else None
    )


def used_in_window(path: Path, window_key: str, window: str) -> int:
    """Calls the file records for ``window_key`` (0 for another day or window kind)."""
    state = read_quota_file(path)
    if state is None or state.date != window_key or state.window != window:
        return 0
    return max(0, state.calls_used)


def record_usage(
    path: Path, *, window_key: str, window: str, calls_used: int, max_calls: int
) -> QuotaFileState:
    """Mirror a count to disk without ever moving it backwards within a window.

    Concurrent writers on one host serialise on a file lock and keep the larger count, so a
    slow writer carrying an older count cannot lower what a faster one wrote.
    """
    lock_path = side_path(path, ".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(lock_path)):
        current = read_quota_file(path)
        if current is not None and current.window == window and current.date > window_key:
            return current  # a late write of an earlier day never replaces a later day's count
        if current is not None and current.date == window_key and current.window == window:
            calls_used = max(calls_used, current.calls_used)
        state = QuotaFileState(window_key, calls_used, max_calls, window, iso())
        # Not fsynced: the mirror guards against Redis losing its keys (a restart, a flush), and
        # a Redis restart leaves this host's page cache intact. Redis's own AOF covers power loss.
        write_atomic(path, json.dumps(state.as_json(), indent=2), durable=False)
    return state


class MirrorWriter:
    """Write-behind for quota mirrors: the newest count per file, coalesced by a daemon thread.

    A start must not wait for the filesystem (that would cost more than the two Redis round
    trips of the gate itself), yet the file must not lag much: a Redis that lost its keys is
    re-seeded from it. Writes land within ``delay`` seconds; ``flush()`` writes synchronously
    (the gate calls it, and waits ``settle``, before it seeds from the file), and a process that
    exits normally flushes at exit.
    """

    def __init__(self, delay: float = 0.1) -> None:
        self.delay = delay
        self._pending: dict[Path, tuple[str, str, int, int]] = {}
        self._guard = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        atexit.register(self.flush)

    def record(
        self, path: Path, *, window_key: str, window: str, calls_used: int, max_calls: int
    ) -> None:
        with self._guard:
            previous = self._pending.get(path)
            if previous is not None and previous[0] == window_key and previous[2] > calls_used:
                calls_used = previous[2]
            self._pending[path] = (window_key, window, calls_used, max_calls)
            self._ensure_thread()
            wake = previous is None  # a write already pending will carry this count too
        if wake:
            self._wake.set()

    def flush(self) -> None:
        with self._guard:
            pending, self._pending = self._pending, {}
        for path, (window_key, window, used, top) in pending.items():
            record_usage(path, window_key=window_key, window=window, calls_used=used, max_calls=top)

    def _ensure_thread(self) -> None:
        if self._pid != os.getpid():  # forked: the parent's thread does not exist here
            self._pid, self._thread = os.getpid(), None
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="quota-mirror", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            time.sleep(self.delay)
            try:
                self.flush()
            except OSError:  # pragma: no cover - disk full or gone: keep the counts for a retry
                continue


JOURNAL_DIR = "quota-starts"
"""Under the mirror's side directory (``.swarm/.swarmq/quota-starts/``): one append-only file
per quota, window and process, one line per started call."""


class StartJournal:
    """Every started call, appended before it counts, where a re-seed will find it.

    The disk mirror above is written behind the gate (it must not slow it down), so a process
    killed right after ``start()`` and a Redis that lost its keys together could grant a call
    twice. The journal closes that gap: a start appends ``s <token>`` with one ``write`` (no
    fsync: the threat is Redis losing keys and processes dying, and the page cache survives
    both) *before* Redis counts it, and a refused start appends ``r <token>``. Each process
    appends to its own file (no interleaving, even on a shared filesystem across hosts), so
    concurrent starters never wait for each other; the cost is one small write per start.
    A re-seed counts the distinct started tokens of the window across every file.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self._files: dict[tuple[str, str], int] = {}
        self._pid = os.getpid()
        self._guard = threading.Lock()

    def _fd(self, quota: str, window_key: str) -> int:
        if self._pid != os.getpid():  # forked: the parent's descriptors name the parent's files
            self._pid, self._files = os.getpid(), {}
        fd = self._files.get((quota, window_key))
        if fd is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            host = _SAFE_HOST.sub("_", os.uname().nodename)[:40] or "host"
            name = f"{quota}.{window_key}.{host}-{os.getpid()}.log"
            fd = os.open(self.directory / name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            self._files[(quota, window_key)] = fd
        return fd

    def _append(self, quota: str, window_key: str, line: str) -> None:
        data = line.encode("ascii")
        with self._guard:
            written = os.write(self._fd(quota, window_key), data)
        if written != len(data):  # pragma: no cover - a regular file takes a small write whole
            raise OSError(f"{self.directory}: short journal append")

    def started(self, quota: str, window_key: str, token: str) -> None:
        """Record a start before Redis counts it (a crash in between over-counts, never under)."""
        self._append(quota, window_key, f"s {token}\n")

    def refused(self, quota: str, window_key: str, token: str) -> None:
        """Take back a journaled start that Redis refused (its reservation was gone)."""
        self._append(quota, window_key, f"r {token}\n")

    def count(self, quota: str, window_key: str) -> int:
        """Distinct calls started in the window, as every process's journal records them."""
        started: set[str] = set()
        refused: set[str] = set()
        for path in self.directory.glob(f"{quota}.{window_key}.*.log"):
            try:
                text = path.read_text(encoding="ascii", errors="replace")
            except FileNotFoundError:
                continue
            for line in text.splitlines():  # a torn last line has no token: it is skipped
                kind, _, token = line.partition(" ")
                if len(token) >= 8:
                    (started if kind == "s" else refused).add(token)
        return len(started - refused)

    def prune(self, quota: str, *, before: str) -> int:
        """Remove ``quota``'s journals of windows before ``before`` (a ``YYYY-MM-DD`` key that
        Redis ``TIME`` confirmed: never a day from this host's own clock); returns how many."""
        with self._guard:
            for key in [k for k in self._files if k[0] == quota and k[1] < before]:
                with contextlib.suppress(OSError):
                    os.close(self._files.pop(key))
        removed = 0
        for path in self.directory.glob(f"{quota}.*.log"):
            parts = path.name[len(quota) + 1 :].split(".")
            if len(parts) >= 2 and _DAY.fullmatch(parts[0]) and parts[0] < before:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                    removed += 1
        return removed


_SAFE_HOST = re.compile(r"[^A-Za-z0-9_-]+")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
