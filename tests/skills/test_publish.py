"""Active skills are published where Claude Code and Codex read skills, with their front matter."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import redis
import yaml
from typer.testing import CliRunner

from swarmq.cli import app
from swarmq.roster.loader import load_roster
from swarmq.skills.compiler import SkillCompiler
from swarmq.skills.layout import SkillLayout
from swarmq.skills.publish import SkillPublisher
from swarmq.storage.locking import LocalLocks
from swarmq.wiring.llm import compiler_for
from tests.skills.factory import swarm_store, write_store
from tests.skills.test_compiler import LESSONS
from tests.support import write_roster

NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def make(
    tmp_path: Path, publisher_dirs: dict[str, Path] | None = None, link: bool = False
) -> SkillCompiler:
    workspace = tmp_path / "project"
    write_store(workspace, LESSONS)
    locks = LocalLocks(tmp_path / "locks")
    layout = SkillLayout(workspace)
    publisher = (
        SkillPublisher(layout, publisher_dirs, link=link) if publisher_dirs is not None else None
    )
    return SkillCompiler(layout, locks, [swarm_store(workspace, locks)], publisher=publisher)


def front(path: Path) -> tuple[dict[str, object], str]:
    text = path.read_text(encoding="utf-8")
    match = re.match(r"\A---\n(.*?)\n---\n(.*)\Z", text, re.DOTALL)
    assert match, text[:200]
    return yaml.safe_load(match.group(1)), match.group(2)


def test_active_skill_lands_where_each_agent_reads_it(tmp_path: Path) -> None:
    compiler = make(tmp_path)  # the defaults
    [result] = compiler.generate(mode="active")
    assert result.written
    workspace = compiler.layout.workspace
    canonical = compiler.layout.active_path(result.slug)
    for agent, rel in (("claude-code", ".claude/skills"), ("codex", ".agents/skills")):
        skill = workspace / rel / result.slug / "SKILL.md"
        assert any(
            p.agent == agent and p.written and p.path == str(skill) for p in result.published
        )
        meta, body = front(skill)
        # Claude Code and Codex: name = directory, lower-case and hyphens, <= 64;
        # description <= 1024; anything else under metadata (a string map).
        assert set(meta) == {"name", "description", "metadata"}
        assert meta["name"] == result.slug == skill.parent.name and NAME.match(result.slug)
        assert isinstance(meta["description"], str) and 0 < len(meta["description"]) <= 1024
        assert meta["description"].startswith("Use this skill when")
        metadata = meta["metadata"]
        assert isinstance(metadata, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
        )
        assert metadata["status"] == "active" and "k1" in metadata["source_knowledge_ids"]
        assert body == canonical.read_text(encoding="utf-8").split("\n---\n", 1)[1]
    assert "triggers:" in canonical.read_text()  # opencode-swarm's copy keeps its own fields


def test_own_skill_of_the_same_name_is_left_alone_and_retire_withdraws(tmp_path: Path) -> None:
    compiler = make(tmp_path)
    [draft] = compiler.generate(mode="draft")
    mine = compiler.layout.workspace / ".claude" / "skills" / draft.slug / "SKILL.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("---\nname: biome\ndescription: my own\n---\nmine\n")
    applied = compiler.apply(draft.slug)
    assert applied.written
    refused = [p for p in applied.published if p.agent == "claude-code"]
    assert refused and not refused[0].written and "marker" in (refused[0].reason or "")
    assert mine.read_text().endswith("mine\n")
    codex = compiler.layout.workspace / ".agents" / "skills" / draft.slug / "SKILL.md"
    assert codex.is_file()
    compiler.retire(draft.slug, "test")
    assert not codex.exists() and mine.is_file()


def test_configured_directories_and_links(tmp_path: Path) -> None:
    compiler = make(tmp_path, {"claude-code": Path("agents-here/skills")}, link=True)
    [result] = compiler.generate(mode="active")
    link = compiler.layout.workspace / "agents-here" / "skills" / result.slug
    assert link.is_symlink() and not os.path.isabs(os.readlink(link))
    assert (link / "SKILL.md").read_text() == compiler.layout.active_path(result.slug).read_text()
    assert not (compiler.layout.workspace / ".claude").exists()
    compiler.retire(result.slug, "test")
    assert not link.exists() and not link.is_symlink()
    none = make(tmp_path / "none", {})
    [only] = none.generate(mode="active")
    assert only.written and only.published == []
    assert not (none.layout.workspace / ".claude").exists()


def test_roster_setting_reaches_the_compiler(tmp_path: Path) -> None:
    roster_file = write_roster(
        tmp_path,
        "s",
        "redis://127.0.0.1:6379/9",
        skills={"agent_dirs": {"codex": "~/codex-skills"}},
    )
    roster = load_roster(roster_file, env={"HOME": str(tmp_path / "home")})
    assert roster.skills.agent_dirs == {"codex": Path("~/codex-skills")}
    compiler = compiler_for(roster, LocalLocks(tmp_path / "locks"))
    assert list(compiler.publisher.dirs) == ["codex"]
    assert load_roster(
        write_roster(tmp_path / "d", "s", "redis://x/9"), env={}
    ).skills.agent_dirs == {
        "claude-code": Path(".claude/skills"),
        "codex": Path(".agents/skills"),
    }
    with pytest.raises(Exception, match="agent_dir"):
        load_roster(
            write_roster(tmp_path / "e", "s", "redis://x/9", skills={"agent_dir": {}}), env={}
        )


def test_cli_says_where_a_skill_was_published(
    tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    config = write_roster(tmp_path, swarm_name, redis_url)
    write_store(tmp_path / "project", LESSONS)
    result = CliRunner().invoke(app, ["--config", str(config), "skills", "generate", "--active"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "published for claude-code" in flat and "published for codex" in flat
    assert (tmp_path / "project" / ".claude" / "skills").is_dir()
