"""A probe observation reaches the failing call that misses the same path in a later session,
and nothing else: not the session that made it, not another project, not an unrelated failure,
not a session's start or a task's words. Real files, real Redis locks, the hook service and the
CLI as an agent's hooks and a person call them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis
from typer.testing import CliRunner

from swarmq.cli import app
from swarmq.coord.cluster import Cluster
from swarmq.flywheel.probes import observations
from swarmq.forge.extract import forge_transcript
from swarmq.hooks.server import HookService
from swarmq.roster.loader import load_roster
from swarmq.wiring.flywheel import layout_for
from tests.forge.test_probe_observations import VITE, codex_session
from tests.support import write_roster

LATER = "$ cat apps/web/vite.config.js\ncat: apps/web/vite.config.js: No such file or directory"
OTHER_PATH = "$ cat vite.config.ts\ncat: vite.config.ts: No such file or directory"
UNRELATED = "$ cargo build\nerror: linker `cc` not found"
STATEMENT = "`vite.config.js` does not exist here; the file is `apps/web/vite.config.mjs`"


def _roster(directory: Path, swarm: str, redis_url: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    return write_roster(directory, swarm, redis_url)


@pytest.fixture
def forged(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> Path:
    """A project whose first session probed ``vite.config.js`` and found the ``.mjs``."""
    roster_file = _roster(tmp_path / "one", swarm_name, redis_url)
    roster = load_roster(roster_file)
    (roster.workspace_dir / ".swarm").mkdir(parents=True, exist_ok=True)
    cluster = Cluster.connect(roster.cluster_config())
    transcript = codex_session(tmp_path / "rollout-first.jsonl", "sess-first", VITE)
    forge_transcript(transcript, layout_for(roster), cluster.locks, roster.forge)
    assert len(list(observations(layout_for(roster)))) == 1
    return roster_file


def cli(roster: Path, *args: str) -> Any:
    result = CliRunner().invoke(app, ["-c", str(roster), *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_shown_at_the_same_missing_path_in_a_later_session(forged: Path) -> None:
    service = HookService(forged)
    answer = service.answer({"op": "failure", "text": LATER, "session_id": "sess-later"})
    assert answer["context"] and STATEMENT in answer["context"]
    assert len(answer["shown"]) == 1 and answer["shown"][0].startswith("probe-")
    recalled = cli(forged, "knowledge", "recall", "--error", LATER, "--preview", "--json")
    assert [s["store"] for s in recalled["shown"]] == ["observation"]
    assert STATEMENT in recalled["shown"][0]["lesson"]


def test_silent_everywhere_else(forged: Path, tmp_path: Path, redis_url: str) -> None:
    service = HookService(forged)
    own = next(iter(observations(layout_for(load_roster(forged))))).session_id
    for text, session in ((LATER, own), (OTHER_PATH, "s2"), (UNRELATED, "s3")):
        assert service.answer({"op": "failure", "text": text, "session_id": session}) == {
            "context": None
        }
    assert service.answer({"op": "session-start", "session_id": "s4"}) == {"context": None}
    prompt = service.answer(
        {"op": "prompt", "text": "allow the host in vite.config.js", "session_id": "s5"}
    )
    assert prompt["context"] is None or "vite.config.mjs" not in prompt["context"]
    other = _roster(tmp_path / "two", "other-project", redis_url)
    elsewhere = cli(other, "knowledge", "recall", "--error", LATER, "--preview", "--json")
    assert elsewhere["shown"] == []
