"""``swarmq mcp install | uninstall``: the swarmq server in Claude Code's or Codex's MCP config.

Claude Code reads stdio servers from ``mcpServers`` in ``.mcp.json`` at the project root
(project scope) or at the top of ``~/.claude.json`` (user scope; ``$CLAUDE_CONFIG_DIR`` moves
it). Codex reads ``[mcp_servers.<name>]`` tables from ``$CODEX_HOME/config.toml`` (default
``~/.codex``; a trusted project's ``.codex/config.toml`` for project scope).

Each edit keeps every other server and setting: JSON is re-serialised with the file's keys in
their order; TOML is edited as text (only the ``swarmq`` tables are replaced, comments and
layout elsewhere stay byte for byte) and parsed again to prove the result. Installing twice
leaves the file byte-identical; uninstall removes exactly what install wrote. A file that does
not parse is refused with its path, line and column, and nothing is written. Writes are atomic
(temp file, fsync, rename) and keep the file's permissions.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import sys
import tomllib
from enum import StrEnum
from pathlib import Path
from typing import Any

from swarmq.errors import InvalidInput
from swarmq.storage.atomic import write_atomic

NAME = "swarmq"


class Agent(StrEnum):
    CLAUDE_CODE = "claude-code"
    CODEX = "codex"


class InstallScope(StrEnum):
    PROJECT = "project"
    USER = "user"


class ConfigError(InvalidInput):
    """An agent config file that cannot be edited safely (it does not parse, or has an
    unexpected shape): nothing was written."""


def config_path(agent: Agent, scope: InstallScope, workspace: Path) -> Path:
    """Where ``agent`` reads MCP servers of ``scope``."""
    if agent is Agent.CLAUDE_CODE:
        if scope is InstallScope.PROJECT:
            return workspace / ".mcp.json"
        home = os.environ.get("CLAUDE_CONFIG_DIR")
        return Path(home) / ".claude.json" if home else Path.home() / ".claude.json"
    if scope is InstallScope.PROJECT:
        return workspace / ".codex" / "config.toml"
    home = os.environ.get("CODEX_HOME")
    return (Path(home) if home else Path.home() / ".codex") / "config.toml"


def server_command(roster_file: Path | None) -> list[str]:
    """How an agent starts this swarmq: the ``swarmq`` script beside this interpreter (else
    ``python -m swarmq.cli``), with the roster named when there is one."""
    script = Path(sys.executable).parent / "swarmq"
    found = str(script) if script.exists() else shutil.which("swarmq")
    argv = [found] if found else [sys.executable, "-m", "swarmq.cli"]
    if roster_file is not None:
        argv += ["--config", str(roster_file)]
    return [*argv, "mcp"]


# -- reading --------------------------------------------------------------------------------------


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc}); nothing was changed") from exc


def _json(path: Path, text: str) -> dict[str, Any]:
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); nothing was changed"
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object at the top; nothing was changed")
    servers = data.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise ConfigError(f"{path}: mcpServers is not an object; nothing was changed")
    return data


_TOML_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")


def _toml(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_POSITION.search(str(exc))
        where = f"{path}:{found.group(1)}:{found.group(2)}" if found else str(path)
        message = _TOML_POSITION.sub("", str(exc)).strip()
        raise ConfigError(f"{where}: not valid TOML ({message}); nothing was changed") from exc


def _write(path: Path, text: str) -> None:
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = 0o600 if path.name == ".claude.json" else 0o644
    write_atomic(path, text, mode=mode)
    os.chmod(path, mode)  # the temp file's mode went through the umask


# -- Claude Code (JSON) ---------------------------------------------------------------------------


def _claude_entry(argv: list[str]) -> dict[str, Any]:
    return {"type": "stdio", "command": argv[0], "args": argv[1:], "env": {}}


def _dump_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _install_json(path: Path, argv: list[str]) -> bool:
    text = _read(path)
    data = _json(path, text or "")
    servers = data.setdefault("mcpServers", {})
    entry = _claude_entry(argv)
    if servers.get(NAME) == entry and text is not None:
        return False
    servers[NAME] = entry
    _write(path, _dump_json(data))
    return True


def _uninstall_json(path: Path) -> bool:
    text = _read(path)
    if text is None:
        return False
    data = _json(path, text)
    servers = data.get("mcpServers")
    if not servers or NAME not in servers:
        return False
    del servers[NAME]
    _write(path, _dump_json(data))
    return True


# -- Codex (TOML, edited as text) ----------------------------------------------------------------

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")


def _table_path(header: str) -> list[str]:
    """The dotted key of a table header, with quoted parts unquoted."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)', header)
    return [a or b or c for a, b, c in parts]


def _ours(header: str) -> bool:
    key = _table_path(header)
    return len(key) >= 2 and key[0] == "mcp_servers" and key[1] == NAME


def _strip_ours(lines: list[str]) -> tuple[list[str], int | None]:
    """``lines`` without the ``[mcp_servers.swarmq…]`` tables, and where the first one was."""
    kept: list[str] = []
    inside, at = False, None
    for line in lines:
        header = _HEADER.match(line)
        if header is not None:
            inside = _ours(header.group(1))
            if inside and at is None:
                at = len(kept)
        if not inside:
            kept.append(line)
    return kept, at


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def _codex_block(argv: list[str]) -> list[str]:
    args = ", ".join(_toml_string(a) for a in argv[1:])
    return [
        f"[mcp_servers.{NAME}]\n",
        f"command = {_toml_string(argv[0])}\n",
        f"args = [{args}]\n",
    ]


def _codex_wanted(argv: list[str]) -> dict[str, Any]:
    return {"command": argv[0], "args": argv[1:]}


def _install_toml(path: Path, argv: list[str]) -> bool:
    text = _read(path)
    before = _toml(path, text or "")
    lines = (text or "").splitlines(keepends=True)
    kept, at = _strip_ours(lines)
    block = _codex_block(argv)
    if at is None:
        if kept and not kept[-1].endswith("\n"):
            kept[-1] += "\n"
        if kept and kept[-1].strip():
            kept.append("\n")
        at = len(kept)
    elif at < len(kept) and kept[at].strip():
        block = [*block, "\n"]
    new = "".join(kept[:at] + block + kept[at:])
    after = _toml(path, new)
    if after.get("mcp_servers", {}).get(NAME) != _codex_wanted(argv):
        raise ConfigError(
            f"{path}: mcp_servers.{NAME} is defined in a form this command does not edit (an "
            "inline table?); edit it by hand; nothing was changed"
        )
    _same_except_ours(path, before, after)
    if new == text:
        return False
    _write(path, new)
    return True


def _uninstall_toml(path: Path) -> bool:
    text = _read(path)
    if text is None:
        return False
    before = _toml(path, text)
    if NAME not in before.get("mcp_servers", {}):
        return False
    kept, at = _strip_ours(text.splitlines(keepends=True))
    if at is not None and 0 < at == len(kept) and not kept[at - 1].strip():
        kept.pop()  # the blank line install put before the table
    new = "".join(kept)
    after = _toml(path, new)
    if NAME in after.get("mcp_servers", {}):
        raise ConfigError(
            f"{path}: mcp_servers.{NAME} is defined in a form this command does not edit (an "
            "inline table?); edit it by hand; nothing was changed"
        )
    _same_except_ours(path, before, after)
    _write(path, new)
    return True


def _same_except_ours(path: Path, before: dict[str, Any], after: dict[str, Any]) -> None:
    """Proof that the text edit touched nothing but the swarmq server."""

    def others(data: dict[str, Any]) -> dict[str, Any]:
        rest = dict(data)
        servers = {k: v for k, v in rest.pop("mcp_servers", {}).items() if k != NAME}
        return {**rest, "mcp_servers": servers}

    if others(before) != others(after):
        raise ConfigError(
            f"{path}: editing the {NAME} server would change other settings (a key after its "
            "table?); edit it by hand; nothing was changed"
        )


# -- the two verbs ---------------------------------------------------------------------------------


def install_server(agent: Agent, path: Path, argv: list[str]) -> bool:
    """Write the server into ``path``; ``False`` when it was already exactly there."""
    if agent is Agent.CLAUDE_CODE:
        return _install_json(path, argv)
    return _install_toml(path, argv)


def uninstall_server(agent: Agent, path: Path) -> bool:
    """Remove the server from ``path``; ``False`` when it was not there."""
    if agent is Agent.CLAUDE_CODE:
        return _uninstall_json(path)
    return _uninstall_toml(path)
