"""Helpers for the hook tests: the real CLI, the hook server a hook started, forge's output."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from swarmq.hooks._wire import request
from swarmq.storage.statedir import swarm_state_dir

REPO = Path(__file__).resolve().parents[2]
SESSIONS = REPO / "eval" / "forge" / "sessions"


def swarmq(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "swarmq.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


def stop_hook_server(roster_file: Path, state_root: Path) -> None:
    """End the hook server a hook of this test started (found by its own answer's pid)."""
    old = os.environ.get("SWARMQ_STATE")
    os.environ["SWARMQ_STATE"] = str(state_root)
    try:
        state = swarm_state_dir(roster_file)
    finally:
        if old is None:
            os.environ.pop("SWARMQ_STATE", None)
        else:
            os.environ["SWARMQ_STATE"] = old
    answer = request(state, {"op": "ping"}, 2.0)
    if answer and isinstance(answer.get("pid"), int):
        with contextlib.suppress(ProcessLookupError):
            os.kill(answer["pid"], signal.SIGTERM)


def session_ledger(runtime: Path) -> list[dict[str, Any]]:
    path = runtime / "hooks" / "sessions.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def forged_to(runtime: Path, transcript: Path) -> int:
    """How far ``transcript`` has been forged by ``forge.session``."""
    return max(
        (r["end"] for r in session_ledger(runtime) if r["transcript"] == str(transcript.resolve())),
        default=0,
    )


def wait_until(predicate: Any, timeout: float, step: float = 0.5) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())


def forged_lessons(agents: Path, session_id: str) -> list[tuple[str, str]]:
    """``(learning id, what was learned)`` of the forged candidates of ``session_id``, pending
    or already ingested: the close loop the session's end sends moves them from ``pending/`` to
    ``processed/``, and on a loaded machine it may do so before they are looked at."""
    out = []
    knowledge = agents / "knowledge"
    paths = [*knowledge.glob("pending/*.md"), *knowledge.glob("processed/*.md")]
    for path in sorted(paths, key=lambda p: p.name):
        text = path.read_text(encoding="utf-8")
        if f"session_id: {session_id}" not in text:
            continue
        for block in text.split("# Learning: ")[1:]:
            ident = next(
                (
                    line.split(":", 1)[1].strip()
                    for line in block.splitlines()
                    if line.startswith("**ID**")
                ),
                "",
            )
            body = block.split("## What We Learned", 1)[-1].split("## Source", 1)[0].strip()
            out.append((ident, body))
    return out
