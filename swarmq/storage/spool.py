"""A durable local spool: work a short-lived process hands to whichever long-lived one comes next.

An agent's hook must return at once and must never lose what it was handed, whether or not Redis
and the workers answer. It writes one small JSON file per piece of work (fsync'd file and
directory, through :func:`swarmq.storage.atomic.write_atomic`) and leaves; a drainer (the hook
server, a worker at start and every few seconds after) claims files by renaming them, which only
one process can do, sends the work on, and deletes a file only once the work was accepted. A
drainer that dies holding a claim leaves a ``.claim`` file that the next drainer takes back after
:data:`STALE_CLAIM_SECONDS`, so nothing is lost and at worst something is sent twice (the work
itself must be idempotent).

The spool of a swarm lives in its state directory (:func:`swarmq.storage.statedir.swarm_state_dir`),
which a hook (which finds the roster from its working directory, without loading it) and the
workers of that roster (which know their config path) agree on without reading anything.
Standard library only, and light: the hook path imports this.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from swarmq.storage.boundedjson import loads_bounded

SUFFIX = ".json"
CLAIM = ".claim"
STALE_CLAIM_SECONDS = 120.0
"""A claim older than this belongs to a drainer that died: it is taken back."""


class Claimed:
    """A spooled record taken by one drainer: :meth:`done` deletes it, :meth:`release` puts it
    back for the next drainer."""

    __slots__ = ("original", "path", "record")

    def __init__(self, path: Path, original: Path, record: dict[str, Any]) -> None:
        self.path, self.original, self.record = path, original, record

    def done(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    def release(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.replace(self.path, self.original)


class Spool:
    """One directory of pending records (see the module docstring)."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)

    def put(self, record: dict[str, Any]) -> Path:
        """Write ``record`` durably (file and directory fsync'd) and return its file; the name
        starts with the time so drainers send the oldest first."""
        import uuid  # here: uuid imports platform, and a reading process never writes

        from swarmq.storage.atomic import write_atomic  # here: a hook that only reads skips it

        name = f"{time.time_ns():020d}-{uuid.uuid4().hex[:12]}{SUFFIX}"
        path = self.directory / name
        write_atomic(path, json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        return path

    def pending(self) -> list[Path]:
        """Unclaimed records, oldest first (stale claims are taken back first)."""
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return []
        now = time.time()
        for name in names:
            if name.endswith(CLAIM):
                claim = self.directory / name
                with contextlib.suppress(FileNotFoundError):
                    if now - claim.stat().st_mtime > STALE_CLAIM_SECONDS:
                        os.replace(claim, self.directory / (name.split(SUFFIX)[0] + SUFFIX))
        return sorted(
            self.directory / n
            for n in os.listdir(self.directory)
            if n.endswith(SUFFIX) and not n.startswith(".")
        )

    def claim(self) -> Iterator[Claimed]:
        """Claim pending records one by one (a rename only one drainer wins); a record that is
        not valid JSON is renamed ``.bad`` and kept, never dropped."""
        for path in self.pending():
            target = path.with_name(f"{path.name}.{os.getpid()}{CLAIM}")
            try:
                os.replace(path, target)
            except FileNotFoundError:
                continue  # another drainer took it
            os.utime(target)  # the claim's age counts from now, not from the spool write
            try:
                record = loads_bounded(target.read_text(encoding="utf-8"))
                if not isinstance(record, dict):
                    raise ValueError("not a JSON object")
            except ValueError:
                os.replace(target, path.with_name(path.name + ".bad"))
                continue
            yield Claimed(target, path, record)

    def __len__(self) -> int:
        return len(self.pending())
