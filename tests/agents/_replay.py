"""Shared by the stand-in ``claude`` and ``codex`` executables: reading a recorded session.

The stand-ins replay a REAL recorded session (``$STANDIN_REPLAY``, a file of
``eval/forge/sessions/``) into the place the real CLI writes it, rewritten only where the real
CLI would have written this run's values (session id, working directory, times).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any


def records(env_name: str = "STANDIN_REPLAY") -> list[dict[str, Any]]:
    source = os.environ.get(env_name)
    if not source:
        sys.stderr.write(f"stand-in: set {env_name} to a recorded session to replay\n")
        raise SystemExit(2)
    out = []
    with open(source, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                out.append(json.loads(line))
    return out


def write_jsonl(path: Path, items: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        for item in items:
            handle.write(json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n")


def home() -> Path:
    return Path(os.environ.get("HOME") or os.path.expanduser("~"))


def emit(line: str, stream: Any = None) -> None:
    (stream or sys.stdout).write(line + "\n")
    (stream or sys.stdout).flush()
