"""kill -9 of a writer process in the middle of group commits: every add it acknowledged is on
disk and every line of the store parses; the next writer carries on from the file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

WRITER = textwrap.dedent(
    """
    import sys, threading
    from pathlib import Path
    from swarmq.knowledge.config import KnowledgeConfig
    from swarmq.knowledge.project import KnowledgeStore
    from swarmq.knowledge.reinforcement import NewLesson
    from swarmq.storage.locking import LocalLocks

    root, run = Path(sys.argv[1]), int(sys.argv[2])
    knowledge = KnowledgeStore(root / ".swarm", locks=LocalLocks(root / "locks"),
                               config=KnowledgeConfig(swarm_max_entries=None),
                               data_dir=root / "data", project_name="crash")
    topics = ["pytest", "docker", "postgres", "redis", "celery", "ruff", "mypy", "nginx"]
    out = threading.Lock()

    def lesson(w, key):
        return (f"always pin {topics[w]} client {key} with flag {key * 7} and path "
                f"src/{key}/mod_{key}.py before deploy")

    def writer(w):
        for n in range(100000):
            key = (run * 8 + w) * 100000 + n
            first = (run * 8 + w) * 100000
            if n % 3 == 2:  # a twin of this writer's first lesson, confirmed in a new phase
                text = "Please " + lesson(w, first)
            else:
                text = lesson(w, key).capitalize()
            result = knowledge.swarm.add(NewLesson(text, id=f"k{key}"), phase=key)
            with out:
                print(result.outcome, result.entry.id, key, flush=True)

    for w in range(8):
        threading.Thread(target=writer, args=(w,), daemon=True).start()
    threading.Event().wait()
    """
)


def kill_after(root: Path, run: int, acks: int) -> list[tuple[str, str, int]]:
    """Start a writer, SIGKILL it after ``acks`` acknowledgements; every acknowledgement."""
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root), str(run)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    seen: list[tuple[str, str, int]] = []
    deadline = time.monotonic() + 60
    try:
        while len(seen) < acks and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line.endswith("\n"):  # the end of the output (a cut line: see below)
                break
            outcome, entry_id, key = line.split()
            seen.append((outcome, entry_id, int(key)))
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    # Acknowledged before the kill, still in the pipe: read through the same buffered file
    # (communicate() with a timeout reads the raw pipe and would skip what readline buffered).
    # The last piece is empty, or a line the kill cut short: its add counts as unacknowledged.
    for line in proc.stdout.read().split("\n")[:-1]:
        outcome, entry_id, key = line.split()
        seen.append((outcome, entry_id, int(key)))
    assert len(seen) >= acks, f"only {len(seen)} adds acknowledged within 60 s"
    return seen


def test_kill_9_mid_group_loses_no_acknowledged_add(tmp_path: Path) -> None:
    acknowledged: list[tuple[str, str, int]] = []
    for run, acks in enumerate((150, 90, 220)):
        acknowledged += kill_after(tmp_path, run, acks)
        lines = (tmp_path / ".swarm" / "knowledge.jsonl").read_bytes().split(b"\n")
        assert lines[-1] == b"", "the store ends with a whole line"
        entries = {}
        for raw in lines[:-1]:
            entry = json.loads(raw)  # every line parses
            entries[entry["id"]] = entry
        for outcome, entry_id, key in acknowledged:
            assert entry_id in entries, f"acknowledged {outcome} of {entry_id} is not on disk"
            if outcome == "reinforced":  # confirmations are capped: the oldest drop out
                phases = {c["phase_number"] for c in entries[entry_id]["confirmed_by"]}
                assert key in phases or key < min(phases), f"reinforcement {key} of {entry_id} lost"
        newest: dict[str, int] = {}
        for outcome, entry_id, key in acknowledged:
            if outcome == "reinforced":
                newest[entry_id] = max(key, newest.get(entry_id, key))
        for entry_id, key in newest.items():
            assert key in {c["phase_number"] for c in entries[entry_id]["confirmed_by"]}
    outcomes = {outcome for outcome, _, _ in acknowledged}
    assert {"added", "reinforced"} <= outcomes
