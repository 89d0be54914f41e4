"""``swarmq mcp install | uninstall``: Claude Code's .mcp.json and ~/.claude.json, Codex's
config.toml; other servers and settings kept, idempotent, reversible, bad files refused."""

from __future__ import annotations

import json
import stat
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from swarmq.cli import app
from swarmq.roster.loader import load_roster


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(home / "codex"))
    return home


def run(roster_file: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(app, ["-c", str(roster_file), "mcp", *args])
    assert result.exit_code == code, result.output
    return result.output


def test_claude_code_project_scope(roster_file: Path, homes: Path) -> None:
    path = load_roster(roster_file).workspace_dir / ".mcp.json"
    original = {"mcpServers": {"github": {"command": "npx", "args": ["gh-mcp"]}}, "x": 1}
    path.write_text(json.dumps(original, indent=2) + "\n")
    assert "wrote" in run(roster_file, "install", "--agent", "claude-code")
    first = path.read_bytes()
    data = json.loads(first)
    assert data["x"] == 1 and data["mcpServers"]["github"] == original["mcpServers"]["github"]
    ours = data["mcpServers"]["swarmq"]
    assert ours["type"] == "stdio"
    assert ours["args"][-3:] == ["--config", str(roster_file.resolve()), "mcp"]
    assert "already up to date" in run(roster_file, "install", "--agent", "claude-code")
    assert path.read_bytes() == first
    assert "removed" in run(roster_file, "uninstall", "--agent", "claude-code")
    assert json.loads(path.read_text()) == original
    assert "no swarmq MCP server" in run(roster_file, "uninstall", "--agent", "claude-code")


def test_claude_code_user_scope_keeps_the_file_private(roster_file: Path, homes: Path) -> None:
    path = homes / "claude" / ".claude.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"numStartups": 3, "projects": {"/p": {"mcpServers": {}}}}))
    path.chmod(0o600)
    run(roster_file, "install", "--agent", "claude-code", "--scope", "user")
    data = json.loads(path.read_text())
    assert data["numStartups"] == 3 and data["projects"] == {"/p": {"mcpServers": {}}}
    assert "swarmq" in data["mcpServers"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


CODEX = """\
# my codex settings
model = "gpt-5-codex"   # keep this comment

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]

[mcp_servers.context7.env]
KEY = "v"

[profiles.fast]
model = "o4-mini"
"""


def test_codex_user_scope_edits_only_its_table(roster_file: Path, homes: Path) -> None:
    path = homes / "codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX)
    run(roster_file, "install", "--agent", "codex")
    first = path.read_text()
    assert first.startswith(CODEX)
    parsed = tomllib.loads(first)
    assert parsed["mcp_servers"]["swarmq"]["args"][-1] == "mcp"
    assert parsed["mcp_servers"]["context7"]["env"] == {"KEY": "v"}
    assert parsed["profiles"] == {"fast": {"model": "o4-mini"}}
    run(roster_file, "install", "--agent", "codex")
    assert path.read_text() == first
    run(roster_file, "uninstall", "--agent", "codex")
    assert path.read_text() == CODEX


def test_codex_replaces_an_older_entry_in_place(roster_file: Path, homes: Path) -> None:
    path = homes / "codex" / "config.toml"
    path.parent.mkdir()
    old = '[mcp_servers.swarmq]\ncommand = "old"\n\n[mcp_servers.swarmq.env]\nA = "1"\n\n'
    path.write_text('model = "m"\n\n' + old + '[profiles.fast]\nmodel = "x"\n')
    run(roster_file, "install", "--agent", "codex")
    text = path.read_text()
    assert '"old"' not in text and "A = " not in text
    assert text.startswith('model = "m"\n\n[mcp_servers.swarmq]\n')
    assert text.endswith('\n[profiles.fast]\nmodel = "x"\n')
    assert tomllib.loads(text)["profiles"]["fast"] == {"model": "x"}


@pytest.mark.parametrize(
    ("agent", "name", "bad", "where"),
    [
        ("claude-code", ".mcp.json", '{\n  "mcpServers": {\n    "a": 1,\n  }\n}\n', ":4:3:"),
        ("codex", "config.toml", 'model = "m"\n[mcp_servers.x\ncommand = 1\n', ":2:"),
    ],
)
def test_a_file_that_does_not_parse_is_refused_untouched(
    roster_file: Path, homes: Path, agent: str, name: str, bad: str, where: str
) -> None:
    path = (
        load_roster(roster_file).workspace_dir / name
        if agent == "claude-code"
        else homes / "codex" / name
    )
    path.parent.mkdir(exist_ok=True)
    path.write_text(bad)
    output = run(roster_file, "install", "--agent", agent, code=1)
    assert f"{path}{where}" in output.replace("\n", "") and "nothing was changed" in output
    assert path.read_text() == bad
    run(roster_file, "uninstall", "--agent", agent, code=1)
    assert path.read_text() == bad


def test_bad_agent_or_scope(roster_file: Path, homes: Path) -> None:
    assert "--agent must be" in run(roster_file, "install", "--agent", "cursor", code=1)
    out = run(roster_file, "install", "--agent", "codex", "--scope", "team", code=1)
    assert "--scope must be" in out
