"""A real writer process for lock tests: ``python -m tests.coord.lock_writer MODE ...``.

Each write adds one unique item to a JSON list under the file's store lock, the way a
reinforcement adds one phase to an entry. It prints one JSON line: the items it reported as
written (``ok``), refused (``fenced``) and written-but-unconfirmed (``unconfirmed``), so the
test can check that every reported success is on disk.

Modes:
  many URL SWARM PATH TIMES LEASE TAG   TIMES writes, each under its own lock hold.
  stall URL SWARM PATH LEASE TAG        one write that SIGSTOPs itself between the fence check
                                        and the rename (the parent sends SIGCONT).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import redis

from swarmq.coord.locks import RedisLocks
from swarmq.storage.atomic import write_atomic
from swarmq.storage.locking import CommitUnconfirmed, FencedOff, Lease, LockError, file_resource


class StopAfterCheck:
    """A real lease that stops its process right after its fence check passed (test hook)."""

    def __init__(self, inner: Lease) -> None:
        self.inner = inner

    @property
    def resource(self) -> str:
        return self.inner.resource

    @property
    def fencing_token(self) -> int:
        return self.inner.fencing_token

    def validate(self, recorded_token: int) -> int:
        token = self.inner.validate(recorded_token)
        os.kill(os.getpid(), signal.SIGSTOP)  # between the check and the rename
        return token

    def confirm(self) -> None:
        self.inner.confirm()


def add_item(path: Path, item: str, lease: Lease) -> None:
    items = json.loads(path.read_text()) if path.exists() else []
    items.append(item)
    write_atomic(path, json.dumps(items), lease=lease)


def main(argv: list[str]) -> None:
    mode, url, swarm, path = argv[0], argv[1], argv[2], Path(argv[3])
    result: dict[str, list[str]] = {"ok": [], "fenced": [], "unconfirmed": [], "errors": []}
    client = redis.Redis.from_url(url)
    if mode == "many":
        times, lease_s, tag = int(argv[4]), float(argv[5]), argv[6]
        locks = RedisLocks(client, swarm, lease_seconds=lease_s)
        for i in range(times):
            item = f"{tag}-{i}"
            try:
                with locks.hold(file_resource(path), timeout=60) as lease:
                    if times == 1:
                        print("held", flush=True)
                    add_item(path, item, lease)
                result["ok"].append(item)
                print(f"ok {item}", flush=True)  # reported the moment it is done
            except CommitUnconfirmed:
                result["unconfirmed"].append(item)
            except FencedOff:
                result["fenced"].append(item)
            except LockError as exc:
                result["errors"].append(f"{item}: {exc}")
    elif mode == "stall":
        lease_s, tag = float(argv[4]), argv[5]
        locks = RedisLocks(client, swarm, lease_seconds=lease_s)
        try:
            with locks.hold(file_resource(path), timeout=60) as lease:
                print("held", flush=True)
                add_item(path, tag, StopAfterCheck(lease))
            result["ok"].append(tag)
        except CommitUnconfirmed:
            result["unconfirmed"].append(tag)
        except FencedOff:
            result["fenced"].append(tag)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
