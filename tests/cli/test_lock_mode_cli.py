"""One lock discipline per workspace: no silent fallback to same-host locks, no mixing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import redis
from typer.testing import CliRunner

from swarmq.cli import app
from swarmq.cli.errors import EXIT_REFUSED
from swarmq.storage.workspace_id import ID_FILE
from tests.coord.redis_server import free_port
from tests.support import REPO, write_roster

LESSON = "Run the python test suite before pushing to main"


def add(roster: Path) -> tuple[int, str]:
    result = CliRunner().invoke(
        app, ["-c", str(roster), "knowledge", "add", "--plain", LESSON, "--json"]
    )
    return result.exit_code, result.output


def test_unreachable_redis_is_an_error_naming_the_url_and_nothing_is_written(
    tmp_path: Path, swarm_name: str
) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    roster = write_roster(tmp_path, swarm_name, url)
    code = "import sys; from swarmq.cli import main; sys.argv[0] = 'swarmq'; main()"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "-c",
            str(roster),
            "knowledge",
            "add",
            "--plain",
            LESSON,
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=60,
    )
    err = done.stderr.replace("\n", "")
    assert done.returncode == EXIT_REFUSED, (done.stdout, done.stderr)
    assert f"Redis at {url} is unreachable" in err and "nothing was written" in err
    assert "added" not in done.stdout and "Traceback" not in done.stderr
    assert not (tmp_path / "project" / ".swarm" / "knowledge.jsonl").exists()
    listed = CliRunner().invoke(app, ["-c", str(roster), "knowledge", "list", "--json"])
    assert listed.exit_code == 0 and json.loads(listed.stdout)["entries"] == []  # reading goes on


def test_single_host_mode_is_explicit_recorded_and_never_mixed_with_cluster_locks(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    down = f"redis://127.0.0.1:{free_port()}/0"
    single = write_roster(tmp_path, swarm_name, down, locks="single-host")
    code, output = add(single)
    assert code == 0 and json.loads(output)["outcome"] == "added", output
    record = json.loads((tmp_path / "project" / ID_FILE).read_text())
    assert record["locks"] == "single-host"
    knowledge = tmp_path / "project" / ".swarm" / "knowledge.jsonl"
    before = knowledge.read_bytes()

    cluster = write_roster(tmp_path, swarm_name, redis_url)  # same workspace, cluster locks
    code, output = add(cluster)  # a write refused by the lock discipline: nothing written (3)
    flat = " ".join(output.split())
    assert code == EXIT_REFUSED and "records locks: single-host" in flat, output
    assert "nothing was written" in flat and "`swarmq workspace set-locks cluster`" in flat
    assert knowledge.read_bytes() == before
    listed = CliRunner().invoke(app, ["-c", str(cluster), "knowledge", "list", "--json"])
    assert listed.exit_code == 0 and len(json.loads(listed.stdout)["entries"]) == 1  # reads on
