"""The README's roster, as pasted: it validates with no error and needs no RabbitMQ."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from swarmq.roster.loader import load_report
from tests.support import REPO


def readme_roster() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## The roster: `swarm.yaml`", 1)[1]
    found = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert found is not None, "the README's roster section has no yaml block"
    return found.group(1)


def test_the_readme_roster_validates_as_pasted(tmp_path: Path) -> None:
    path = tmp_path / "swarm.yaml"
    path.write_text(readme_roster(), encoding="utf-8")
    report = load_report(path, env={"HOME": str(tmp_path)})
    assert report.roster is not None and report.errors == [], [str(p) for p in report.problems]
    assert report.roster.broker_url is None  # RabbitMQ is opt-in: a new machine has none
    consumed = {q for w in report.roster.workers for q in w.all_queues()}
    assert {"consolidation", "maturity", "forge", "missions"} <= consumed


@pytest.mark.slow
def test_the_readme_roster_runs(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    """Pasted into an empty directory with nothing but the swarm name and Redis database
    changed (this suite's own), `swarmq up` starts both workers and the beat, and `down` stops
    them."""
    text = readme_roster()
    text = text.replace("swarm: demo ", f"swarm: {swarm_name} ", 1)
    text = text.replace("redis_url: redis://127.0.0.1:6379/0", f"redis_url: {redis_url}", 1)
    assert swarm_name in text and redis_url in text
    (tmp_path / "swarm.yaml").write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "SWARMQ_CONFIG")}
    env.update({"HOME": str(tmp_path), "PYTHONPATH": str(REPO)})

    def swarmq(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "swarmq.cli", *args],
            capture_output=True,
            text=True,
            timeout=150,
            env=env,
            cwd=tmp_path,
        )

    try:
        up = swarmq("up", "--no-tmux", "--wait", "90", "--json")
        assert up.returncode == 0, up.stderr + up.stdout
        assert json.loads(up.stdout)["answered"] == {"swarm1": True, "keeper": True}
    finally:
        down = swarmq("down", "--no-tmux", "--timeout", "20")
    assert down.returncode == 0, down.stderr
