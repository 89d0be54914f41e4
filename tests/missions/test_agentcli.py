"""What swarmq knows about the Claude Code and Codex CLIs: detection, the argv it runs, where
each writes its session, and the text each prints, against the stand-in executables in
``tests/agents/`` (which accept the real flags and write the real on-disk layout)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from swarmq.missions.agentcli import (
    OutputReader,
    SessionFound,
    SessionMissing,
    claude_project_key,
    detect,
    locate,
    prepare,
)
from swarmq.missions.config import AgentConfig, TranscriptSource
from swarmq.wiring.missions import marker_lines

T = TranscriptSource
REPO = Path(__file__).resolve().parents[2]
AGENTS = REPO / "tests" / "agents"
CLAUDE_SESSION = REPO / "eval" / "forge" / "sessions" / "cc-edmb-claude-sync.jsonl"
CODEX_SESSION = REPO / "eval" / "forge" / "sessions" / "cx-qna-speckit-specify.jsonl"
README_CLAUDE = ["claude", "-p", "{prompt}", "--permission-mode", "acceptEdits"]


def env_for(home: Path, replay: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
    env.update(
        HOME=str(home),
        PATH=f"{AGENTS}{os.pathsep}{os.environ['PATH']}",
        STANDIN_REPLAY=str(replay),
        **extra,
    )
    return env


def run(argv: list[str], env: dict[str, str], cwd: Path, log: Path) -> int:
    with log.open("wb") as out:
        return subprocess.run(
            argv, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, check=False
        ).returncode


def test_detect_by_program_name() -> None:
    assert detect(README_CLAUDE) is T.CLAUDE_CODE
    assert detect(["/opt/bin/claude", "-p", "x"]) is T.CLAUDE_CODE
    assert detect(["codex", "exec", "--full-auto", "{prompt}"]) is T.CODEX
    assert detect(["codex", "--help"]) is T.STDOUT  # not a non-interactive run
    assert detect(["python3", "tools/my_agent.py", "{prompt_file}"]) is T.STDOUT
    assert AgentConfig(command=README_CLAUDE).transcript is T.AUTO
    with pytest.raises(ValueError):
        AgentConfig(command=README_CLAUDE, transcript="claude")  # type: ignore[arg-type]


def test_claude_project_key_matches_claude_code() -> None:
    # Real directory names: eval/forge/SOURCES.md (KaceyBui/Claude-global-test) and the
    # underscore case of anthropics/claude-code#24067.
    assert claude_project_key("/Users/akatsukijin/.claude") == "-Users-akatsukijin--claude"
    assert (
        claude_project_key("/Users/akatsukijin/Downloads/bussiness-template-main")
        == "-Users-akatsukijin-Downloads-bussiness-template-main"
    )
    assert (
        claude_project_key("/home/chris/2_project-files/projects/m2-clients/101-cal")
        == "-home-chris-2-project-files-projects-m2-clients-101-cal"
    )
    assert claude_project_key("/tmp/ü b") == "-tmp---b"
    long = "/" + "a" * 250
    key = claude_project_key(long)
    assert key.startswith("-" + "a" * 199 + "-") and len(key) > 201
    assert key == claude_project_key(long)  # stable


def test_prepare_gives_claude_a_session_id_unless_the_command_has_one(tmp_path: Path) -> None:
    plan = prepare(
        T.CLAUDE_CODE, ["claude", "-p", "do it"], cwd=tmp_path, env={}, started=0, new_id="x"
    )
    assert plan.argv == ["claude", "--session-id", "x", "-p", "do it"] and plan.session_id == "x"
    own = "6f1c2c6e-0d5b-4f4e-9d3a-0e3c5b1a2b3c"
    kept = prepare(
        T.CLAUDE_CODE, ["claude", f"--session-id={own}", "-p", "y"], cwd=tmp_path, env={}, started=0
    )
    assert kept.argv == ["claude", f"--session-id={own}", "-p", "y"] and kept.session_id == own
    resumed = prepare(
        T.CLAUDE_CODE, ["claude", "-p", "y", "--resume", own], cwd=tmp_path, env={}, started=0
    )
    assert resumed.session_id == own and "--session-id" not in resumed.argv
    off = prepare(
        T.CLAUDE_CODE,
        ["claude", "-p", "y", "--no-session-persistence"],
        cwd=tmp_path,
        env={},
        started=0,
    )
    assert isinstance(locate(off, tmp_path / "none.log"), SessionMissing)
    assert "persistence" in str(locate(off, tmp_path / "none.log"))
    codex = prepare(T.CODEX, ["codex", "exec", "y"], cwd=tmp_path, env={}, started=0)
    assert codex.argv == ["codex", "exec", "y"]


@pytest.mark.parametrize("fmt", ["text", "json", "stream-json"])
def test_claude_session_found_for_every_output_format(tmp_path: Path, fmt: str) -> None:
    project = tmp_path / "my_project.v2"
    project.mkdir()
    home = tmp_path / "home"
    env = env_for(home, CLAUDE_SESSION, STANDIN_APPEND="STATE: DONE")
    argv = ["claude", "-p", "fix it", "--permission-mode", "acceptEdits", "--output-format", fmt]
    if fmt == "stream-json":
        argv.append("--verbose")
    plan = prepare(T.CLAUDE_CODE, argv, cwd=project, env=env, started=time.time())
    log = tmp_path / "out.log"
    assert run(plan.argv, env, project, log) == 0
    found = locate(plan, log)
    assert isinstance(found, SessionFound), found
    assert found.session_id == plan.session_id
    assert found.path == (
        home
        / ".claude"
        / "projects"
        / claude_project_key(str(project))
        / f"{plan.session_id}.jsonl"
    )
    first = json.loads(found.path.read_text().splitlines()[0])
    assert first["sessionId"] == plan.session_id
    # The marker reader sees the final answer in every format, once.
    lines = log.read_text().splitlines()
    reader = OutputReader(T.CLAUDE_CODE)
    decoded = [t for line in lines for t in reader.texts(line)]
    assert decoded.count("STATE: DONE") == 1
    assert reader.streamed is (fmt == "stream-json")  # stream-json: each message as it streams
    assert not any(t.lstrip().startswith('{"type"') for t in decoded)


def test_claude_config_dir_and_a_session_id_chosen_by_the_command(tmp_path: Path) -> None:
    config = tmp_path / "claude-config"
    env = env_for(tmp_path / "home", CLAUDE_SESSION, CLAUDE_CONFIG_DIR=str(config))
    own = "0b5e1c7a-3f1d-4c52-9a8e-2d7f6b1e4c30"
    plan = prepare(
        T.CLAUDE_CODE,
        ["claude", "--session-id", own, "-p", "go"],
        cwd=tmp_path,
        env=env,
        started=time.time(),
    )
    assert run(plan.argv, env, tmp_path, tmp_path / "out.log") == 0
    found = locate(plan, tmp_path / "out.log")
    assert isinstance(found, SessionFound) and found.path.parent.parent == config / "projects"


def test_claude_session_missing_says_why(tmp_path: Path) -> None:
    env = env_for(tmp_path / "home", CLAUDE_SESSION)
    plan = prepare(T.CLAUDE_CODE, ["claude", "-p", "go"], cwd=tmp_path, env=env, started=0)
    missing = locate(plan, tmp_path / "out.log")  # the agent never ran
    assert isinstance(missing, SessionMissing)
    assert plan.session_id is not None and plan.session_id in missing.reason


@pytest.mark.parametrize("json_output", [True, False])
def test_codex_rollout_found_by_the_printed_session_id(tmp_path: Path, json_output: bool) -> None:
    home = tmp_path / "home"
    env = env_for(home, CODEX_SESSION)
    argv = ["codex", "exec", "--full-auto", "--skip-git-repo-check", "fix it"]
    if json_output:
        argv.insert(2, "--json")
    plan = prepare(T.CODEX, argv, cwd=tmp_path, env=env, started=time.time())
    log = tmp_path / "out.log"
    assert run(plan.argv, env, tmp_path, log) == 0
    found = locate(plan, log)
    assert isinstance(found, SessionFound), found
    assert found.path.parent.parent.parent.parent == home / ".codex" / "sessions"
    assert found.session_id is not None and found.path.name.endswith(f"-{found.session_id}.jsonl")
    meta = json.loads(found.path.read_text().splitlines()[0])
    assert meta["payload"]["id"] == found.session_id
    if json_output:
        reader = OutputReader(T.CODEX)
        texts = [t for line in log.read_text().splitlines() for t in reader.decode(line) or []]
        assert texts  # the agent messages, for the marker reader


def test_codex_rollout_found_by_cwd_when_no_id_was_printed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    other = tmp_path / "other"
    other.mkdir()
    env = env_for(home, CODEX_SESSION)
    started = time.time()
    for cwd in (tmp_path, other):  # two runs in two directories: only ours is taken
        argv = ["codex", "exec", "--skip-git-repo-check", "-C", str(cwd), "go"]
        assert run(argv, env, tmp_path, tmp_path / "ignored.log") == 0
    plan = prepare(T.CODEX, ["codex", "exec", "go"], cwd=tmp_path, env=env, started=started)
    (tmp_path / "silent.log").write_text("")
    found = locate(plan, tmp_path / "silent.log")
    assert isinstance(found, SessionFound)
    assert json.loads(found.path.read_text().splitlines()[0])["payload"]["cwd"] == str(tmp_path)
    late = prepare(
        T.CODEX, ["codex", "exec", "go"], cwd=tmp_path, env=env, started=time.time() + 60
    )
    assert isinstance(locate(late, tmp_path / "silent.log"), SessionMissing)


def test_codex_refuses_outside_git_without_the_flag(tmp_path: Path) -> None:
    env = env_for(tmp_path / "home", CODEX_SESSION)
    log = tmp_path / "out.log"
    assert run(["codex", "exec", "go"], env, tmp_path, log) == 1
    assert "--skip-git-repo-check" in log.read_text()


@pytest.mark.parametrize("fmt", ["text", "json", "stream-json"])
def test_acknowledgements_are_read_once_from_every_output_format(tmp_path: Path, fmt: str) -> None:
    ack = "KNOWLEDGE_APPLIED:trace-1:entry-1 reason=followed it"
    env = env_for(tmp_path / "home", CLAUDE_SESSION, STANDIN_APPEND=ack)
    argv = ["claude", "-p", "go", "--output-format", fmt, "--verbose"]
    log = tmp_path / "out.log"
    assert run(argv, env, tmp_path, log) == 0
    assert marker_lines(log) == ack + "\n"
