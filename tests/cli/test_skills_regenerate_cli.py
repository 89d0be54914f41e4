"""A stale generated skill can always be refreshed from the command line: ``--no-eval`` skips
the fixtures and the rejected-edits list they feed, ``--force`` writes past a refusal, and the
staleness clears once the new skill is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import redis
from typer.testing import CliRunner

from swarmq.cli import app
from tests.skills.factory import entry, write_store
from tests.support import write_roster


def run(config: Path, *args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(app, ["--config", str(config), *args])
    assert result.exit_code == code, result.output
    return json.loads(result.stdout) if "--json" in args else result.output


def stale(config: Path) -> list[str]:
    [skill] = run(config, "skills", "list", "--json")["active"]
    return list(skill["stale"])


def test_a_stale_skill_regenerates(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    config = write_roster(tmp_path, swarm_name, redis_url)
    project = tmp_path / "project"
    write_store(
        project,
        [
            entry(
                "k1",
                "Run the biome lint config check before committing changes.",
                confidence=0.8,
                phases=2,
                tags=["lint"],
                triggers=["biome"],
                required_actions=["run biome check"],
            ),
            entry(
                "k2",
                "Run the biome lint config check before pushing to CI.",
                confidence=0.8,
                phases=2,
                tags=["lint"],
                required_actions=["run biome in CI"],
            ),
        ],
    )
    [made] = run(config, "skills", "generate", "--active", "--json")
    assert made["written"] and made["slug"] == "biome" and stale(config) == []
    evals = project / ".swarm" / "skills" / "evals" / "biome"
    evals.mkdir(parents=True)
    (evals / "cases.json").write_text(json.dumps([{"required_phrases": ["biome"]}]))
    # the knowledge moves on: k2 is confirmed in a new phase, the skill is now stale
    assert (
        run(config, "knowledge", "reinforce", "k2", "--phase", "5", "--json")["outcome"]
        == "reinforced"
    )
    assert stale(config) == ["updated_after_generation:k2"]
    # the regenerated skill ties with the incumbent on the fixtures: refused, and remembered
    [refused] = run(config, "skills", "regenerate", "biome", "--json", code=1)
    assert not refused["written"] and "strictly improve" in refused["reason"]
    assert "--force writes it anyway" in run(config, "skills", "regenerate", "biome", code=1)
    # --no-eval skips the evaluation and the rejected-edits list it fed
    [fresh] = run(config, "skills", "regenerate", "biome", "--no-eval", "--json")
    assert fresh["written"] and fresh["evaluation"] is None
    assert stale(config) == []
    assert (
        "version: 2"
        in (project / ".opencode" / "skills" / "generated" / "biome" / "SKILL.md").read_text()
    )
    # stale again; --force writes past the refusal and reports the evaluation it overrode
    run(config, "knowledge", "reinforce", "k1", "--phase", "6", "--json")
    assert stale(config) == ["updated_after_generation:k1"]
    run(config, "skills", "regenerate", "biome", "--json", code=1)
    [forced] = run(config, "skills", "regenerate", "biome", "--force", "--json")
    assert forced["written"] and forced["evaluation"]["status"] == "rejected"
    assert forced["reason"].startswith("forced past the eval gate")
    assert stale(config) == []
