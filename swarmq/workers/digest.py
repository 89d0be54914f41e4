"""What a running process was started from, so ``swarmq up`` / ``reload`` can tell it is stale.

A worker reads ``swarm.yaml`` once, at start: editing its agent command does nothing to a running
worker. Each process therefore gets a digest of everything it was started from (its command
line and environment, the roster sections every process reads, and for a worker its own roster
entry), kept next to its pid file as ``<session>.digest``. A changed digest names the parts that
changed, and only that process is restarted.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from swarmq.coord.connection import redact
from swarmq.roster.schema import Roster
from swarmq.workers.processes import Kind, ProcessSpec

SECRET_ENV = frozenset({"FLOWER_BASIC_AUTH", "REDIS_URL"})


def _hash(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def parts(roster: Roster, spec: ProcessSpec) -> dict[str, str]:
    """One hash per part a process depends on: ``command``, ``env``, each shared roster section
    and, for a worker, each field of its own entry (``worker.agent`` …)."""
    # Secrets are not hashed into a file: a changed password is not a roster change anyway.
    env = {k: ("<set>" if k in SECRET_ENV else v) for k, v in spec.env.items()}
    out = {"command": _hash(spec.argv), "env": _hash(env)}
    unread = {"workers"} | ({"flower", "api"} if spec.kind in (Kind.WORKER, Kind.BEAT) else set())
    shared = roster.model_dump(mode="json", exclude=unread)
    for url in ("redis_url", "broker_url"):  # no password in the file, not even hashed
        if shared.get(url):
            shared[url] = redact(str(shared[url]))
    out.update({f"roster.{key}": _hash(value) for key, value in shared.items()})
    if spec.kind is Kind.WORKER:
        entry = roster.worker(spec.name).model_dump(mode="json")
        out.update({f"worker.{key}": _hash(value) for key, value in entry.items()})
    return out


def digest_file(spec: ProcessSpec) -> Path:
    return spec.pidfile.with_name(spec.pidfile.name.removesuffix(".pid") + ".digest")


def record(roster: Roster, spec: ProcessSpec) -> None:
    path = digest_file(spec)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(
        json.dumps(parts(roster, spec), sort_keys=True, indent=1) + "\n", encoding="utf-8"
    )
    os.replace(tmp, path)


def recorded(spec: ProcessSpec) -> dict[str, str] | None:
    try:
        data = json.loads(digest_file(spec).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else None


def changes(roster: Roster, spec: ProcessSpec) -> list[str] | None:
    """The parts that differ from what the running process was started with; ``None`` when
    nothing was recorded (a process started before digests existed)."""
    old = recorded(spec)
    if old is None:
        return None
    new = parts(roster, spec)
    return sorted(key for key in old.keys() | new.keys() if old.get(key) != new.get(key))


def forget(spec: ProcessSpec) -> None:
    digest_file(spec).unlink(missing_ok=True)
