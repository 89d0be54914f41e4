"""Forging many small transcripts in one ``swarmq forge DIR`` run: time must grow linearly.

    python bench/forge_many.py [--files 2000 10000] [--empty]

Each file is a tiny Markdown session with one distinct lesson (``--empty``: zero-byte files
instead). The command runs twice in a scratch project with no roster (file-level locks): the
first run forges every file (ledger, forge index and passage memory grow with each), the
second finds every file unchanged (a ledger lookup each). Printed: wall-clock and CPU seconds
per run and CPU seconds per thousand files (CPU time: steadier than wall clock on a shared
machine); a linear run keeps the per-thousand figure flat as the count grows. Wall clock is
mostly fsync: three appends and an atomic pending-file write per forged transcript.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

LESSON = (
    "# Session {n}\n\n## User\n\nWhy does job {n} fail?\n\n## Assistant\n\n"
    "Root cause: the worker {n} read `config/job{n}.yaml` before the lock was taken, so two "
    "runs wrote line {n} at once. Fixed by taking the lock first.\n"
)


def generate(folder: Path, count: int, *, empty: bool) -> None:
    folder.mkdir(parents=True)
    for n in range(count):
        (folder / f"s{n:05d}.md").write_text("" if empty else LESSON.format(n=n))


def forge(project: Path, folder: Path, home: Path) -> tuple[float, float]:
    """Wall-clock and CPU seconds (user + system) of one ``swarmq forge`` run."""
    env = {k: v for k, v in os.environ.items() if k not in ("SWARMQ_CONFIG", "REDIS_URL")}
    env.update(PYTHONPATH=str(REPO), HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "swarmq.cli", "forge", str(folder), "--json"],
        cwd=project,
        env=env,
        stdout=subprocess.DEVNULL,
        check=True,
    )
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--empty", action="store_true")
    args = parser.parse_args()
    for count in args.files:
        with tempfile.TemporaryDirectory() as scratch:
            root = Path(scratch)
            project = root / "project"
            (project / ".swarm").mkdir(parents=True)
            (project / ".agents").mkdir()
            generate(root / "sessions", count, empty=args.empty)
            for label in ("first run", "second run (all unchanged)"):
                wall, cpu = forge(project, root / "sessions", root / "home")
                print(
                    f"{count} files, {label}: {wall:.1f} s wall, {cpu:.1f} s CPU "
                    f"({cpu / count * 1000:.2f} CPU s per 1000 files)",
                    flush=True,
                )


if __name__ == "__main__":
    main()
