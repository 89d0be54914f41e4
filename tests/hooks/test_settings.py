"""``swarmq hooks install | uninstall | status`` on real settings files, through the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swarmq.hooks.events import EVENTS
from swarmq.hooks.settings import HookSettingsError, install, is_ours, read_settings, uninstall

THEIRS = {
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}
        ],
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "cat NOTES.md"}]}
        ],
    },
}


def swarmq(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "swarmq.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_install_is_idempotent_keeps_theirs_in_order_and_uninstall_removes_exactly_ours(
    tmp_path: Path,
) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(THEIRS, indent=2) + "\n", encoding="utf-8")

    first = swarmq(
        "hooks", "install", "--agent", "claude-code", "--dir", str(tmp_path), cwd=tmp_path
    )
    assert first.returncode == 0, first.stderr
    after_first = settings.read_bytes()
    second = swarmq(
        "hooks", "install", "--agent", "claude-code", "--dir", str(tmp_path), cwd=tmp_path
    )
    assert second.returncode == 0, second.stderr
    assert settings.read_bytes() == after_first  # byte-identical
    assert "nothing to install" in second.stdout

    merged = json.loads(after_first)
    assert merged["permissions"] == THEIRS["permissions"]
    for event, groups in THEIRS["hooks"].items():  # theirs first, untouched, in their order
        assert merged["hooks"][event][: len(groups)] == groups
    for event in EVENTS["claude-code"]:
        ours = [h for g in merged["hooks"][event] for h in g["hooks"] if is_ours(h)]
        assert len(ours) == 1 and ours[0]["command"].endswith("claude-code")
        assert merged["hooks"][event][-1]["hooks"] == ours  # our own group, last

    status = swarmq(
        "hooks", "status", "--agent", "claude-code", "--dir", str(tmp_path), "--json", cwd=tmp_path
    )
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["installed"] is True

    gone = swarmq(
        "hooks", "uninstall", "--agent", "claude-code", "--dir", str(tmp_path), cwd=tmp_path
    )
    assert gone.returncode == 0, gone.stderr
    assert json.loads(settings.read_text(encoding="utf-8")) == THEIRS
    assert settings.read_text(encoding="utf-8") == json.dumps(THEIRS, indent=2) + "\n"


def test_install_into_nothing_and_back_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / ".codex" / "hooks.json"
    change = install("codex", path, "/opt/bin/swarmq-hook codex")
    assert change.added == list(EVENTS["codex"])
    data = json.loads(path.read_text(encoding="utf-8"))
    assert set(data) == {"hooks"}  # Codex refuses any other top-level key
    assert "PostToolUseFailure" not in data["hooks"] and "SessionEnd" not in data["hooks"]
    assert install("codex", path, "/opt/bin/swarmq-hook codex").changed is False
    moved = install("codex", path, "/usr/local/bin/swarmq-hook codex")  # a new install path
    assert moved.updated == list(EVENTS["codex"])
    assert uninstall("codex", path).removed
    assert not path.exists()


def test_a_settings_file_that_is_not_json_is_refused_with_its_line_and_left_alone(
    tmp_path: Path,
) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    broken = '{\n  "hooks": {\n    "Stop": [\n  }\n}\n'
    settings.write_text(broken, encoding="utf-8")
    result = swarmq(
        "hooks", "install", "--agent", "claude-code", "--dir", str(tmp_path), cwd=tmp_path
    )
    assert result.returncode == 1
    assert f"{settings}:4:" in result.stderr + result.stdout
    assert settings.read_text(encoding="utf-8") == broken
    with pytest.raises(HookSettingsError, match="must be an object"):
        bad = tmp_path / "bad.json"
        bad.write_text('{"hooks": []}', encoding="utf-8")
        read_settings(bad)


def test_user_scope_follows_the_agents_own_config_homes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from swarmq.hooks.settings import settings_path

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    assert settings_path("claude-code", "user", tmp_path) == tmp_path / "claude" / "settings.json"
    assert settings_path("codex", "user", tmp_path) == tmp_path / "codex" / "hooks.json"
    assert settings_path("codex", "project", tmp_path) == tmp_path / ".codex" / "hooks.json"
    (tmp_path / "codex").mkdir()
    (tmp_path / "codex" / "config.toml").write_text("[features]\nhooks = false\n")
    env = {**os.environ, "CODEX_HOME": str(tmp_path / "codex")}
    shown = swarmq("hooks", "install", "--agent", "codex", "--scope", "user", cwd=tmp_path, env=env)
    assert shown.returncode == 0, shown.stderr
    said = " ".join(shown.stdout.split())  # the console wraps long lines
    assert "[features] hooks = false turns hooks off" in said  # what keeps Codex from running them
    assert json.loads((tmp_path / "codex" / "hooks.json").read_text())["hooks"]["Stop"]
