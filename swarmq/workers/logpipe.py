"""Size-capped process logs: copies stdin to a log file, rotating it as ``logging`` would.

A worker runs for weeks and echoes every mission's agent output, so its log must not grow without
bound. Its output is piped through this script (from the tmux pane, or from the plain child's
stdout): when the file would pass ``--max-bytes`` it becomes ``<log>.1`` (``.1`` → ``.2`` …,
the oldest beyond ``--backups`` removed) and a new file starts. Lines are never split across
files, and each line is flushed as it arrives, so ``tail -f`` and crash forensics still work.

Standalone (standard library only), so it runs by path from any Python.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import BinaryIO

MAX_BYTES = 10 * 1024 * 1024
BACKUPS = 3


def rotate(path: Path, backups: int) -> None:
    """``log`` → ``log.1`` → … → ``log.<backups>`` (the oldest dropped)."""
    if backups <= 0:
        path.unlink(missing_ok=True)
        return
    oldest = path.with_name(f"{path.name}.{backups}")
    oldest.unlink(missing_ok=True)
    for index in range(backups - 1, 0, -1):
        older = path.with_name(f"{path.name}.{index}")
        if older.exists():
            os.replace(older, path.with_name(f"{path.name}.{index + 1}"))
    if path.exists():
        os.replace(path, path.with_name(f"{path.name}.1"))


def copy(
    source: BinaryIO, path: Path, *, max_bytes: int = MAX_BYTES, backups: int = BACKUPS
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    out = path.open("ab")
    size = out.tell()
    try:
        for line in iter(source.readline, b""):
            if size and size + len(line) > max_bytes:
                out.close()
                rotate(path, backups)
                out = path.open("ab")
                size = 0
            out.write(line)
            out.flush()
            size += len(line)
    finally:
        out.close()


def command(log: Path) -> list[str]:
    """The argv that pipes into ``log`` with the caps of this environment
    (``SWARMQ_LOG_MAX_BYTES``, ``SWARMQ_LOG_BACKUPS``)."""
    max_bytes = int(os.environ.get("SWARMQ_LOG_MAX_BYTES") or MAX_BYTES)
    backups = int(os.environ.get("SWARMQ_LOG_BACKUPS") or BACKUPS)
    return [
        sys.executable,
        str(Path(__file__).resolve()),
        str(log),
        "--max-bytes",
        str(max_bytes),
        "--backups",
        str(backups),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("log", type=Path)
    parser.add_argument("--max-bytes", type=int, default=MAX_BYTES)
    parser.add_argument("--backups", type=int, default=BACKUPS)
    args = parser.parse_args(argv)
    copy(
        sys.stdin.buffer,
        args.log,
        max_bytes=max(1024, args.max_bytes),
        backups=max(0, args.backups),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
