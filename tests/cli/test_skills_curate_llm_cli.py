"""`swarmq curate`, `swarmq skills ...` and `swarmq llm usage` in-process, against the real
chat-completions test server and the real Redis quota gate."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from typer.testing import CliRunner

from swarmq.cli import app
from swarmq.skills.improver import SECTIONS
from tests.curation.conftest import enrichment_reply
from tests.llm_server import FakeLLMServer, running_llm_server
from tests.skills.factory import entry, lines, write_store
from tests.support import write_roster

runner = CliRunner()
PROPOSAL = "\n\n".join(f"## {title}\n\n- noted" for title in SECTIONS)


def reply(body: dict[str, Any]) -> str:
    if body["messages"][0]["content"].startswith("You are skill_improver"):
        return PROPOSAL
    return enrichment_reply(body)


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    with running_llm_server(reply) as server:
        yield server


def roster(tmp_path: Path, swarm: str, redis_url: str, **extra: Any) -> Path:
    path = write_roster(tmp_path, swarm, redis_url, **extra)
    write_store(
        tmp_path / "project",
        [
            entry("p1", "Always run the database migration check before merging a schema change."),
            entry(
                "k1",
                "Run the biome lint config check before committing changes.",
                confidence=0.8,
                phases=2,
                tags=["lint"],
                triggers=["biome"],
                required_actions=["run biome check"],
                applies_to_agents=["coder"],
            ),
            entry(
                "k2",
                "Run the biome lint config check before pushing to CI.",
                confidence=0.8,
                phases=2,
                tags=["lint"],
                required_actions=["run biome in CI"],
                applies_to_agents=["coder"],
            ),
        ],
    )
    return path


def run(config: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["--config", str(config), *args])
    return result.exit_code, result.output + (
        result.stderr if result.stderr_bytes is not None else ""
    )


def test_curate_with_a_model_then_usage(
    tmp_path: Path,
    swarm_name: str,
    redis_url: str,
    redis_client: redis.Redis,
    llm_server: FakeLLMServer,
) -> None:
    config = roster(
        tmp_path,
        swarm_name,
        redis_url,
        llm={
            "provider": "openai",
            "base_url": llm_server.base_url,
            "model": "fake-model",
            "api_key_env": None,
        },
    )
    code, out = run(config, "curate", "--json")
    assert code == 0, out
    report = json.loads(out)
    assert (
        report["enriched"] == ["p1"]
        and report["sources"] == ["llm"]
        and report["quota"]["used"] == 1
    )
    code, out = run(config, "llm", "usage", "--json")
    [row] = json.loads(out)
    assert (row["quota"], row["model"], row["attempts"], row["counted"], row["ok"]) == (
        "enrichment",
        "fake-model",
        1,
        1,
        1,
    )
    code, out = run(config, "llm", "usage")
    assert code == 0 and "enrichment" in out and "fake-model" in out


def test_curate_without_a_model(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    config = roster(tmp_path, swarm_name, redis_url, llm={"allow_deterministic_fallback": False})
    before = (tmp_path / "project" / ".swarm" / "knowledge.jsonl").read_bytes()
    code, out = run(config, "curate")
    assert code == 1 and "no_llm_client" in out
    assert (tmp_path / "project" / ".swarm" / "knowledge.jsonl").read_bytes() == before
    config = roster(tmp_path, swarm_name, redis_url)  # the default allows the tagged fallback
    code, out = run(config, "curate")
    assert code == 0 and "deterministic_fallback" in out
    stored = {e["id"]: e for e in lines(tmp_path / "project" / ".swarm" / "knowledge.jsonl")}
    assert stored["p1"]["enrichment_source"] == "deterministic_fallback"


def test_skills_generate_apply_inspect_list(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    config = roster(tmp_path, swarm_name, redis_url)
    code, out = run(config, "skills", "generate", "--json")
    assert code == 0, out
    [draft] = json.loads(out)
    assert (
        draft["slug"] == "biome"
        and draft["mode"] == "draft"
        and draft["source_ids"] == ["k1", "k2"]
    )
    code, out = run(config, "skills", "list", "--json")
    assert [d["slug"] for d in json.loads(out)["drafts"]] == ["biome"]
    code, out = run(config, "skills", "apply", "biome")
    assert code == 0 and "yes" in out
    code, out = run(config, "skills", "inspect", "biome", "--json")
    assert json.loads(out)["kind"] == "active" and json.loads(out)["source_ids"] == ["k1", "k2"]
    code, out = run(config, "skills", "list")
    assert code == 0 and "biome" in out and "active" in out
    code, out = run(config, "skills", "regenerate", "biome", "--no-eval", "--json")
    assert code == 0 and json.loads(out)[0]["written"]
    code, out = run(config, "skills", "apply", "../../etc")
    assert code == 1 and "not allowed" in out
    code, out = run(config, "skills", "inspect", "nothing-here")
    assert code == 1 and "no draft or active skill" in out


def test_skills_improve_in_process(
    tmp_path: Path,
    swarm_name: str,
    redis_url: str,
    redis_client: redis.Redis,
    llm_server: FakeLLMServer,
) -> None:
    config = roster(
        tmp_path,
        swarm_name,
        redis_url,
        llm={
            "provider": "openai",
            "base_url": llm_server.base_url,
            "model": "fake-model",
            "api_key_env": None,
        },
        skill_improver={"enabled": True},
    )
    code, out = run(config, "skills", "improve", "--json")
    assert code == 0, out
    report = json.loads(out)
    assert report["source"] == "llm" and report["quota"]["used"] == 1
    assert Path(report["proposal"]).read_text().startswith("---\nsource: llm\n")
    disabled = roster(tmp_path, swarm_name, redis_url)
    code, out = run(disabled, "skills", "improve")
    assert code == 1 and "skill_improver.enabled is false" in out
