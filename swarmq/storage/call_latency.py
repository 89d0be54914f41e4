"""How long the hook and MCP servers took to answer their calls, as histograms on disk that the
metrics exporter (another process) reads at scrape time.

A call only adds one to an in-memory bucket (a lock, a bisect: about a microsecond), so the
hook's critical path does not pay for a file write; a daemon thread rewrites the process's own
file (``<runtime>/call-latency/<kind>-<pid>-<start>.json``) atomically at most every
:data:`FLUSH_SECONDS` while calls came, and once more at exit. Each file holds the cumulative
counts of one process, so a scrape sums the files and a counter never goes back.

MCP servers over stdio start one per agent session, so files of processes that are gone (on
this host: each file names its host) are folded into ``<kind>-retired.json`` by the next
recorder that starts (under a file lock). The
retired file names the files it holds, and is written durably before they are removed, so a
crash between the two never counts a process twice.
"""

from __future__ import annotations

import atexit
import bisect
import contextlib
import json
import os
import socket
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import filelock

from swarmq.storage.atomic import write_atomic
from swarmq.storage.procs import pid_alive

DIRECTORY = "call-latency"
"""Under the runtime directory."""
BUCKETS: tuple[float, ...] = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
)
"""Upper bounds in seconds (the last bucket, +Inf, is implied)."""
FLUSH_SECONDS = 1.0
OTHER = "other"
"""The label of a call whose name is not in the recorder's closed set."""


@dataclass
class Histogram:
    """Per-bucket (not cumulative) counts and the sum of the observed seconds."""

    counts: list[int] = field(default_factory=lambda: [0] * (len(BUCKETS) + 1))
    total: float = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(BUCKETS, seconds)] += 1
        self.total += seconds

    def add(self, other: Histogram) -> None:
        self.counts = [a + b for a, b in zip(self.counts, other.counts, strict=True)]
        self.total += other.total

    def cumulative(self) -> list[int]:
        out, running = [], 0
        for count in self.counts:
            running += count
            out.append(running)
        return out


def _to_json(histograms: dict[str, Histogram]) -> dict[str, Any]:
    return {
        "host": socket.gethostname(),
        "buckets": list(BUCKETS),
        "calls": {k: {"counts": h.counts, "sum": h.total} for k, h in sorted(histograms.items())},
    }


def _from_json(doc: object, where: Path) -> dict[str, Histogram]:
    """A file's histograms; one written with other buckets or another shape is refused."""
    if not isinstance(doc, dict) or doc.get("buckets") != list(BUCKETS):
        raise ValueError(f"{where}: not a call-latency file with buckets {list(BUCKETS)}")
    out: dict[str, Histogram] = {}
    for name, item in (doc.get("calls") or {}).items():
        counts, total = item.get("counts"), item.get("sum")
        if (
            not isinstance(counts, list)
            or len(counts) != len(BUCKETS) + 1
            or not all(isinstance(c, int) and c >= 0 for c in counts)
            or not isinstance(total, int | float)
        ):
            raise ValueError(f"{where}: call {name!r} has no valid counts and sum")
        out[str(name)] = Histogram(list(counts), float(total))
    return out


def read_file(path: Path) -> dict[str, Histogram]:
    return _from_json(json.loads(path.read_bytes()), path)


def read_all(runtime: Path, kind: str) -> dict[str, Histogram]:
    """Every process's histograms of ``kind`` summed, retired ones included.

    The process files are read before the retired file, and those the retired file names are
    skipped: a fold running meanwhile neither drops a process nor counts it twice."""
    directory = runtime / DIRECTORY
    live: dict[str, dict[str, Histogram]] = {}
    for path in sorted(directory.glob(f"{kind}-*-*.json")):
        with contextlib.suppress(FileNotFoundError):  # folded since the glob: read below
            live[path.name] = read_file(path)
    retired_path = directory / f"{kind}-retired.json"
    held: set[str] = set()
    out: dict[str, Histogram] = {}
    sources: list[dict[str, Histogram]] = []
    with contextlib.suppress(FileNotFoundError):
        doc = json.loads(retired_path.read_bytes())
        sources.append(_from_json(doc, retired_path))
        held = set(doc.get("files") or [])
    sources.extend(h for name, h in live.items() if name not in held)
    for histograms in sources:
        for name, histogram in histograms.items():
            out.setdefault(name, Histogram()).add(histogram)
    return out


def _parse_name(path: Path, kind: str) -> int | None:
    """The pid in ``<kind>-<pid>-<start>.json`` (None for the retired file)."""
    parts = path.stem[len(kind) + 1 :].split("-")
    if len(parts) != 2 or not parts[0].isdigit():
        return None
    return int(parts[0])


def retire_gone(runtime: Path, kind: str) -> int:
    """Fold the files of processes that are gone into the retired file; how many were folded."""
    directory = runtime / DIRECTORY
    directory.mkdir(parents=True, exist_ok=True)
    retired_path = directory / f"{kind}-retired.json"
    host = socket.gethostname()
    with filelock.FileLock(str(directory / f".{kind}.lock"), timeout=10):
        if retired_path.exists():
            doc = json.loads(retired_path.read_bytes())
            retired = _from_json(doc, retired_path)
            held = set(doc.get("files") or [])
        else:
            retired, held = {}, set()
        present = {p.name for p in directory.glob(f"{kind}-*-*.json")}
        # Names of files an earlier fold removed are forgotten (the list stays short); those
        # removed by this fold stay listed until the next, for a scrape reading meanwhile.
        held &= present
        gone = []
        for path in sorted(directory.glob(f"{kind}-*-*.json")):
            pid = _parse_name(path, kind)
            if pid is None or pid_alive(pid):
                continue
            doc = json.loads(path.read_bytes())
            if doc.get("host") != host:  # a pid of another host sharing the runtime directory
                continue
            gone.append(path)
            if path.name not in held:
                for name, histogram in _from_json(doc, path).items():
                    retired.setdefault(name, Histogram()).add(histogram)
                held.add(path.name)
        if not gone:
            return 0
        doc = _to_json(retired)
        doc["files"] = sorted(held)
        write_atomic(retired_path, json.dumps(doc))
        for path in gone:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        return len(gone)


class LatencyRecorder:
    """One process's call latencies of one ``kind`` (``hook``, ``mcp``), flushed to its file."""

    def __init__(
        self,
        runtime: Path,
        kind: str,
        names: Iterable[str],
        *,
        flush_seconds: float = FLUSH_SECONDS,
    ) -> None:
        self.kind = kind
        self.names = set(names)
        self.path = runtime / DIRECTORY / f"{kind}-{os.getpid()}-{time.time_ns()}.json"
        self.flush_seconds = flush_seconds
        self._histograms: dict[str, Histogram] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        """Serialises flushes, so an older snapshot never replaces a newer one."""
        self._dirty = threading.Event()
        self._stopped = threading.Event()
        # Best effort: a runtime directory that cannot be written or a damaged retired file
        # costs figures (the scrape says so for its section), never a server that will not start.
        with contextlib.suppress(OSError, ValueError, filelock.Timeout):
            retire_gone(runtime, kind)
        self._thread = threading.Thread(
            target=self._flush_forever, name=f"{kind}-latency", daemon=True
        )
        self._thread.start()
        atexit.register(self.close)

    def allow(self, name: str) -> None:
        """Add a label to the closed set (a server names the calls it defines)."""
        self.names.add(name)

    def observe(self, name: str, seconds: float) -> None:
        """Count one call (never raises on an unknown name: it is counted as ``other``)."""
        label = name if name in self.names else OTHER
        with self._lock:
            histogram = self._histograms.get(label)
            if histogram is None:
                histogram = self._histograms[label] = Histogram()
            histogram.observe(seconds)
        self._dirty.set()

    def flush(self) -> None:
        """Write the counts now (durably: the file outlives a crash of the process). A runtime
        directory removed meanwhile (a test's, a workspace torn down) is not made again."""
        if not self.path.parent.is_dir():
            return
        with self._write_lock:
            with self._lock:
                doc = _to_json(self._histograms)
            write_atomic(self.path, json.dumps(doc))

    def _flush_forever(self) -> None:
        while not self._stopped.is_set():
            self._dirty.wait()
            if self._stopped.is_set():
                return
            self._dirty.clear()
            with contextlib.suppress(OSError):  # a full disk loses figures, never a call
                self.flush()
            self._stopped.wait(self.flush_seconds)

    def close(self) -> None:
        """Stop the flusher and write what is left (once: at exit, or when called first)."""
        if self._stopped.is_set():
            return
        atexit.unregister(self.close)
        self._stopped.set()
        self._dirty.set()
        if self._histograms:
            with contextlib.suppress(OSError):
                self.flush()
