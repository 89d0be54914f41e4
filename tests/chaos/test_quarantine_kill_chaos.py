"""Quarantine and restore killed mid-move (issue 31 item 8d): 5 entries were left both live and
quarantined. Each is now one atomic move (an intent settled by the next quarantine or restore):
after 20 SIGKILLs at random moments and one more move, every entry is in exactly one place."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from swarmq.knowledge.project import KnowledgeStore
from swarmq.storage.jsonl import read_jsonl
from swarmq.storage.locking import LocalLocks

WORDS = [
    "alpha",
    "bravo",
    "cobalt",
    "delta",
    "ember",
    "falcon",
    "garnet",
    "harbor",
    "iris",
    "jasper",
    "kelp",
    "lumen",
    "marble",
    "nectar",
    "onyx",
    "pylon",
    "quartz",
    "raven",
    "sierra",
    "tundra",
    "umber",
    "vortex",
    "willow",
    "xenon",
    "yarrow",
    "zephyr",
    "anvil",
    "beacon",
]

MOVER = textwrap.dedent(
    """
    import random, sys
    from pathlib import Path
    from swarmq.knowledge.project import KnowledgeStore
    from swarmq.storage.locking import LocalLocks
    root = Path(sys.argv[1])
    store = KnowledgeStore(root / ".swarm", locks=LocalLocks(root / "locks"),
                           data_dir=root / "hive", project_name="repo")
    ids = [line.split('"id":"', 1)[1][:36] if '"id":"' in line else None
           for line in (root / "ids.txt").read_text().splitlines()]
    rng = random.Random(int(sys.argv[2]))
    print("ready", flush=True)
    while True:  # quarantine and restore entries until killed
        entry_id = rng.choice(ids)
        try:
            store.swarm.quarantine(entry_id, "chaos")
        except Exception:
            pass
        try:
            store.swarm.restore(entry_id)
        except Exception:
            pass
    """
)


def _store(root: Path) -> KnowledgeStore:
    return KnowledgeStore(
        root / ".swarm",
        locks=LocalLocks(root / "locks"),
        data_dir=root / "hive",
        project_name="repo",
    )


def _ids(path: Path) -> list[str]:
    if not path.exists():
        return []
    read = read_jsonl(path)
    assert read.corrupt == [], read.corrupt  # no torn line either
    return [line.value["id"] for line in read.lines if isinstance(line.value, dict)]


def test_killed_quarantine_and_restore_leave_every_entry_in_exactly_one_place(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    store = _store(root)
    rng = random.Random(8)
    added = []
    for _ in range(12):
        result = store.add_lesson("Check the " + " ".join(rng.sample(WORDS, 7)) + " settings first")
        added.append(result.entry.id)
    (root / "ids.txt").write_text("\n".join(f'"id":"{i}"' for i in added) + "\n")
    swarm = root / ".swarm"
    for run in range(20):
        child = subprocess.Popen(
            [sys.executable, "-c", MOVER, str(root), str(run)], stdout=subprocess.PIPE, text=True
        )
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.01, 0.25))
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    # the next move settles what the last kill left
    store = _store(root)
    store.swarm.quarantine(added[0], "after the kills")
    store.swarm.restore(added[0])
    live = _ids(swarm / "knowledge.jsonl")
    held = _ids(swarm / "knowledge-quarantined.jsonl")
    assert set(live) & set(held) == set()
    assert sorted(live + held) == sorted(added)  # nothing lost, nothing doubled
    assert not (swarm / ".swarmq" / "knowledge.jsonl.moves.jsonl").exists()
    assert json.loads((swarm / "knowledge.jsonl").read_text().splitlines()[0])["id"] in added
