"""A full disk corrupts nothing: adds and reinforcements on a tiny tmpfs that is filled before
every round leave no torn line, no duplicate corrupt-sidecar record, no temp file, and every
write reported done on disk (and none reported failed); the CLI says "no space left on <path>"
with its own exit status.

The tmpfs is mounted in a private mount namespace (``unshare -m``, as root) over the test's
workspace, so nothing outside the test sees it and it vanishes with the namespace.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from swarmq.cli.errors import EXIT_NO_SPACE
from tests.support import write_roster

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="mounting a tmpfs in a private namespace needs root and unshare",
)

SEEDED = ['{"torn": tr', "not json at all", "[[[["]
"""Corrupt lines the store starts with: every rewrite moves them to the sidecar, once."""

CHILD = textwrap.dedent(
    """
    import json, os, random, sys
    from pathlib import Path
    from swarmq.knowledge.config import KnowledgeConfig
    from swarmq.knowledge.project import KnowledgeStore
    from swarmq.knowledge.reinforcement import NewLesson
    from swarmq.storage.locking import LocalLocks

    WORDS = (
        "alpha bravo cobalt delta ember falcon garnet harbor iris jasper kelp lumen marble "
        "nectar onyx pylon quartz raven sierra tundra umber vortex willow xenon yarrow zephyr "
        "anvil beacon cedar dune ferro glacier hollow indigo juniper krypton lantern meadow"
    ).split()

    def fill(filler, leave):
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            while True:
                os.write(fd, bytes(4096))
        except OSError:
            pass
        finally:
            os.close(fd)
        os.truncate(filler, max(0, os.stat(filler).st_size - leave))

    root, rounds, seed = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    swarm = root / ".swarm"
    swarm.mkdir()
    (swarm / "knowledge.jsonl").write_text("\\n".join(json.loads(sys.argv[4])) + "\\n")
    store = KnowledgeStore(swarm, locks=LocalLocks(root / "locks"),
                           config=KnowledgeConfig(hive_enabled=False), data_dir=root / "data")
    added, failed, reinforced, errors = [], [], {}, []
    for round_no in range(rounds):
        fill(root / "filler", rng.choice([0, 1, 2, 3, 4, 6]) * 4096)
        for _ in range(3):
            lesson = "Always run the " + " ".join(rng.sample(WORDS, 7)) + " check first"
            try:
                result = store.swarm.add(NewLesson(lesson), phase=round_no + 1)
            except OSError as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
                failed.append(lesson)
                continue
            if result.outcome == "added":
                added.append(result.entry.id)
            if added:
                target, phase = rng.choice(added), 100 + round_no
                try:
                    done = store.swarm.reinforce(target, phase)
                except OSError as exc:
                    errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                if done.outcome == "reinforced":
                    reinforced.setdefault(target, []).append(phase)
    (root / "filler").unlink()
    served = {e.id: sorted(e.phase_numbers()) for e in store.swarm.read().entries}
    print(json.dumps({"added": added, "failed": failed, "reinforced": reinforced,
                      "errors": errors, "served": served}))
    """
)


def in_tmpfs(mount: Path, size: str, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``sh -c script`` with a fresh tmpfs of ``size`` on ``mount`` (``$1``; the rest of
    ``args`` are ``$2``…), in a private mount namespace that ends with it."""
    mount.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [
            "unshare",
            "-m",
            "--propagation",
            "private",
            "sh",
            "-c",
            f'mount -t tmpfs -o size={size} tmpfs "$1" && {script}',
            "sh",
            str(mount),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=mount.parent,  # `python -c` imports from its cwd first
    )


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_adds_and_reinforcements_on_a_full_disk_corrupt_nothing(tmp_path: Path, seed: int) -> None:
    mount, kept = tmp_path / "mnt", tmp_path / "kept"
    kept.mkdir()
    done = in_tmpfs(
        mount,
        "256k",
        '"$2" -c "$3" "$1" 25 "$4" "$5" > "$6/out.json" && cp -a "$1/." "$6/tree"',
        sys.executable,
        CHILD,
        str(seed),
        json.dumps(SEEDED),
        str(kept),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, Any] = json.loads((kept / "out.json").read_text())
    tree = kept / "tree"
    swarm = tree / ".swarm"
    # the disk was full: writes failed, each as a DiskFull naming its file; some succeeded
    assert out["errors"] and all(e.startswith("DiskFull: no space left on ") for e in out["errors"])
    assert out["added"] and out["reinforced"]

    assert [p for p in tree.rglob("*") if ".tmp-" in p.name] == []  # no leaked temp file
    store_lines = lines_of(swarm / "knowledge.jsonl")
    entries = {}
    for line in store_lines:  # no torn line: every line an entry or a seeded corrupt one
        if line in SEEDED:
            continue
        entry = json.loads(line)
        entries[entry["id"]] = entry
    for sidecar in swarm.glob("*.jsonl"):
        if sidecar.name != "knowledge.jsonl":
            for line in lines_of(sidecar):
                json.loads(line)  # every sidecar line whole too
    records = [json.loads(line) for line in lines_of(swarm / "knowledge-corrupt.jsonl")]
    keys = Counter((r["source"], r["line"], r["text"]) for r in records)
    assert [k for k, n in keys.items() if n > 1] == []  # never recorded twice
    for text in SEEDED:  # nothing lost: each seeded line still in the store or quarantined
        assert text in store_lines or any(r["text"] == text for r in records)

    assert set(out["added"]) <= set(entries)  # every add reported done is there
    for entry_id, phases in out["reinforced"].items():
        confirmed = {c.get("phase_number") for c in entries[entry_id].get("confirmed_by", [])}
        assert set(phases) <= confirmed, (entry_id, phases, confirmed)
    on_disk = {
        entry_id: sorted({c["phase_number"] for c in e.get("confirmed_by", [])})
        for entry_id, e in entries.items()
    }
    assert out["served"] == on_disk  # the writer's own view holds nothing the disk does not
    lessons = {e["lesson"] for e in entries.values()}
    assert [lesson for lesson in out["failed"] if lesson in lessons] == []  # none reported failed


def test_the_cli_says_no_space_left_with_its_own_exit_status(
    tmp_path: Path, swarm_name: str, redis_url: str
) -> None:
    roster = write_roster(tmp_path, swarm_name, redis_url)
    (tmp_path / "kept").mkdir()
    swarmq = str(Path(sys.executable).with_name("swarmq"))
    done = in_tmpfs(
        tmp_path / "project",
        "128k",
        '"$2" -c "$3" knowledge add --plain "Run the python test suite before pushing to main" >/dev/null'
        ' && (head -c 1000000 /dev/zero > "$1/filler" 2>/dev/null; true)'
        ' && "$2" -c "$3" knowledge add --plain "Pin the ruff version in the lock file for CI runs";'
        ' echo "exit=$?"; cp -a "$1/." "$4/tree"',
        swarmq,
        str(roster),
        str(tmp_path / "kept"),
    )
    assert f"exit={EXIT_NO_SPACE}" in done.stdout, (done.stdout, done.stderr[-3000:])
    assert "no space left on " in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2, done.stderr
    swarm = tmp_path / "kept" / "tree" / ".swarm"
    lessons = [json.loads(line)["lesson"] for line in lines_of(swarm / "knowledge.jsonl")]
    assert lessons == ["Run the python test suite before pushing to main"]
    assert [p for p in (tmp_path / "kept" / "tree").rglob("*") if ".tmp-" in p.name] == []
