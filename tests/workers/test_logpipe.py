"""Worker logs are size-capped: the log pipe rotates whole lines into <log>.1 … <log>.N."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from swarmq.workers import logpipe


def test_rotates_whole_lines_and_keeps_n_backups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "logs" / "swarm-a.log"
    lines = [f"line {n:04d} {'x' * 90}\n".encode() for n in range(200)]  # 100 bytes each
    monkeypatch.setenv("SWARMQ_LOG_MAX_BYTES", "2048")
    monkeypatch.setenv("SWARMQ_LOG_BACKUPS", "2")
    argv = logpipe.command(log)
    assert argv[-4:] == ["--max-bytes", "2048", "--backups", "2"]
    done = subprocess.run(argv, input=b"".join(lines), capture_output=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    files = sorted(p.name for p in log.parent.iterdir())
    assert files == ["swarm-a.log", "swarm-a.log.1", "swarm-a.log.2"]
    for path in log.parent.iterdir():
        data = path.read_bytes()
        assert 0 < len(data) <= 2048 and data.endswith(b"\n")
        assert all(line in lines for line in data.splitlines(keepends=True))
    # The newest lines are in the live file, the ones before them in .1, then .2.
    kept = b"".join(
        log.with_name(n).read_bytes() for n in ("swarm-a.log.2", "swarm-a.log.1", "swarm-a.log")
    )
    assert kept == b"".join(lines)[-len(kept) :] and lines[-1] in log.read_bytes().splitlines(
        keepends=True
    )


def test_appends_to_an_existing_log_and_rotates_it_first_when_full(tmp_path: Path) -> None:
    log = tmp_path / "w.log"
    log.write_bytes(b"old\n" * 300)  # 1200 bytes already there
    with subprocess.Popen(
        [*logpipe.command(log)[:3], "--max-bytes", "1024", "--backups", "1"], stdin=subprocess.PIPE
    ) as proc:
        assert proc.stdin is not None
        proc.stdin.write(b"new line\n")
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    assert (
        log.read_bytes() == b"new line\n"
        and log.with_name("w.log.1").read_bytes() == b"old\n" * 300
    )
