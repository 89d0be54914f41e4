"""Writers killed mid-commit, holders stalled past their lease, Redis gone during CLI writes:
every write reported done is on disk, and nothing on disk is torn."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from swarmq.storage.jsonl import read_jsonl
from tests.coord.redis_server import RedisServer
from tests.coord.test_lock_identity import _env, stalled_commit_once, writer
from tests.support import REPO, write_roster


def test_a_holder_stalled_between_check_and_rename_never_reports_success_10_runs(
    redis_url: str, swarm_name: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    false_successes = 0
    for run in range(10):
        path = tmp_path / f"entries{run}.json"
        path.write_text("[]")
        stalled, other = stalled_commit_once(redis_url, swarm_name, path)
        on_disk = json.loads(path.read_text())
        false_successes += sum(1 for item in stalled["ok"] + other["ok"] if item not in on_disk)
        assert stalled["ok"] == [] and stalled["unconfirmed"] == ["stalled"], (run, stalled)
    assert false_successes == 0


def test_writers_killed_mid_commit_lose_no_reported_write(
    redis_url: str, swarm_name: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    path = tmp_path / "entries.json"
    rng = random.Random(16)
    reported: list[str] = []
    killed = 0
    for run in range(5):
        procs = [
            writer("many", redis_url, swarm_name, str(path), "400", "2", f"r{run}w{i}")
            for i in range(2)
        ]
        # Start-up (imports) can outlast the kill delay on a loaded machine: kill only once the
        # writers are committing, so the kill lands mid-commit, not mid-import.
        deadline = time.monotonic() + 60
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(rng.uniform(0.6, 1.2))
        for proc in procs:
            proc.send_signal(signal.SIGKILL)  # wherever it is: reading, writing, renaming
        for proc in procs:
            out, _ = proc.communicate(timeout=30)
            killed += proc.returncode == -signal.SIGKILL
            reported += [line[3:] for line in out.splitlines() if line.startswith("ok ")]
    on_disk = json.loads(path.read_text())  # never torn: the rename is atomic
    assert len(on_disk) == len(set(on_disk))
    missing = [item for item in reported if item not in on_disk]
    assert reported and missing == [], missing[:5]
    assert killed > 0  # at least some died mid-run, not after their last write


def _cli(roster: Path, *args: str) -> subprocess.Popen[str]:
    code = "import sys; from swarmq.cli import main; sys.argv[0] = 'swarmq'; main()"
    return subprocess.Popen(
        [sys.executable, "-c", code, "-c", str(roster), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=REPO,
    )


@pytest.fixture
def server(tmp_path: Path) -> RedisServer:
    with RedisServer(tmp_path) as running:
        yield running


def test_cli_writes_while_redis_goes_away_report_nothing_that_is_not_on_disk(
    server: RedisServer, tmp_path: Path, swarm_name: str
) -> None:
    roster = write_roster(tmp_path, swarm_name, server.url)
    # Eight lessons no two of which are near-duplicates (one differing word would make the later
    # ones "duplicate", which is a correct answer but not the one this test is about).
    lessons = [
        "Run the integration suite before tagging a release",
        "Pin the Redis image digest in docker-compose files",
        "Regenerate the lock file whenever pyproject dependencies change",
        "Never log raw API tokens; redact them at the handler",
        "Use fsync on the directory after renaming a temp file",
        "Prefer httpx timeouts over signal alarms in worker code",
        "Keep migrations backward compatible for one release",
        "Bound every retry loop with a deadline and jitter",
    ]
    procs = [
        _cli(roster, "knowledge", "add", "--plain", lesson, "--json") for lesson in lessons[:4]
    ]
    time.sleep(1.0)
    server.stop()  # mid-burst: some adds hold locks, some have not connected yet
    procs += [
        _cli(roster, "knowledge", "add", "--plain", lesson, "--json") for lesson in lessons[4:]
    ]
    results = []
    for lesson, proc in zip(lessons, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        results.append((lesson, proc.returncode, out, err))
    stored = {
        line.value.get("lesson")
        for line in read_jsonl(tmp_path / "project" / ".swarm" / "knowledge.jsonl").lines
    }
    for lesson, code, out, err in results:
        if code == 0:
            assert json.loads(out)["outcome"] == "added" and lesson in stored, (lesson, out, err)
        else:
            assert "Traceback" not in err and (server.url in err or "refused" in err), err
    refused_after_stop = [r for r in results[4:] if r[1] != 0]
    assert len(refused_after_stop) == 4  # Redis gone: every later add refused, none "added"
