"""swarmq's entries in the agents' hook settings: install, uninstall, status.

Claude Code reads hooks from ``.claude/settings.json`` (project) or ``~/.claude/settings.json``
(user; ``$CLAUDE_CONFIG_DIR`` when set); Codex from ``.codex/hooks.json`` or
``~/.codex/hooks.json`` (``$CODEX_HOME``). Both use one shape: ``{"hooks": {"<Event>":
[{"matcher": ..., "hooks": [{"type": "command", "command": ..., "timeout": seconds}]}]}}``
(https://code.claude.com/docs/en/hooks; Codex: ``codex-rs/config`` ``HooksFile``, which refuses
any other top-level key).

swarmq adds one matcher group of its own per event, at the end of that event's list, so nobody
else's hook moves (Codex keys a hook's trust by its position). Its entries are recognised by
their command (``swarmq-hook`` or ``-m swarmq.hooks``): installing again changes nothing (the
file is not even rewritten), uninstalling removes exactly those handlers (and the groups, event
lists and ``hooks`` object they leave empty), and every write is atomic and fsync'd. A file that
is not valid JSON is refused with its line and column, and left as it is.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from swarmq.errors import InvalidInput
from swarmq.hooks.events import EVENTS, Agent
from swarmq.storage.atomic import write_atomic

Scope = Literal["project", "user"]
TIMEOUT_SECONDS = 30
"""The agents' per-hook time limit for swarmq's commands (they return well within it)."""
_OURS = re.compile(r"(?:^|[\s/\\'\"])swarmq-hook(?:\.exe)?(?:['\"\s]|$)|-m\s+swarmq\.hooks\b")


class HookSettingsError(InvalidInput):
    """A settings file swarmq cannot merge into (not JSON, or not the agents' shape)."""


def settings_path(agent: Agent, scope: Scope, project: Path) -> Path:
    if agent == "claude-code":
        if scope == "project":
            return project / ".claude" / "settings.json"
        root = os.environ.get("CLAUDE_CONFIG_DIR")
        return (Path(root).expanduser() if root else Path.home() / ".claude") / "settings.json"
    if scope == "project":
        return project / ".codex" / "hooks.json"
    return codex_home() / "hooks.json"


def codex_home() -> Path:
    root = os.environ.get("CODEX_HOME")
    return Path(root).expanduser() if root else Path.home() / ".codex"


def default_command(agent: Agent) -> str:
    """The hook command: the ``swarmq-hook`` script of this installation (an absolute path, so
    the agent finds it without this virtualenv on its PATH), else this interpreter's module."""
    script = Path(sys.executable).parent / "swarmq-hook"
    found = str(script) if script.is_file() else shutil.which("swarmq-hook")
    if found:
        return f"{shlex.quote(found)} {agent}"
    return f"{shlex.quote(sys.executable)} -m swarmq.hooks {agent}"


def is_ours(handler: object) -> bool:
    if not isinstance(handler, dict):
        return False
    command = handler.get("command")
    return isinstance(command, str) and _OURS.search(command) is not None


def _handler(command: str) -> dict[str, Any]:
    return {"type": "command", "command": command, "timeout": TIMEOUT_SECONDS}


@dataclass
class Change:
    """What an install or uninstall did to one file."""

    path: Path
    changed: bool
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "changed": self.changed,
            "added": self.added,
            "updated": self.updated,
            "removed": self.removed,
            "notes": self.notes,
        }


def read_settings(path: Path) -> tuple[dict[str, Any], str]:
    """The settings object and the indentation of the file (``{}``, two spaces when absent)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, "  "
    if not text.strip():
        return {}, "  "
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HookSettingsError(
            f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); "
            "fix it and run the command again (nothing was changed)"
        ) from exc
    if not isinstance(value, dict):
        raise HookSettingsError(
            f"{path}:1:1: expected a JSON object, found {type(value).__name__} (nothing was changed)"
        )
    hooks = value.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        line = _line_of(text, '"hooks"')
        raise HookSettingsError(
            f'{path}:{line}: "hooks" must be an object of events, '
            f"found {type(hooks).__name__} (nothing was changed)"
        )
    for event, groups in (hooks or {}).items():
        if not isinstance(groups, list):
            raise HookSettingsError(
                f"{path}:{_line_of(text, json.dumps(event))}: hooks.{event} must be a list of "
                f"matcher groups, found {type(groups).__name__} (nothing was changed)"
            )
    return value, _indent_of(text)


def _line_of(text: str, needle: str) -> int:
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def _indent_of(text: str) -> str:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def _write(path: Path, value: dict[str, Any], indent: str) -> None:
    if not value:
        path.unlink(missing_ok=True)
        return
    text = json.dumps(value, indent=indent if indent.strip(" ") == "" else "\t", ensure_ascii=False)
    write_atomic(path, text + "\n")


def install(agent: Agent, path: Path, command: str) -> Change:
    """Merge swarmq's hook for each of ``agent``'s events into ``path`` (see the module)."""
    value, indent = read_settings(path)
    hooks: dict[str, Any] = value.setdefault("hooks", {})
    change = Change(path, False)
    wanted = EVENTS[agent]
    for event in wanted:
        groups: list[Any] = hooks.setdefault(event, [])
        handlers = [h for g in groups if isinstance(g, dict) for h in _handlers(g) if is_ours(h)]
        if not handlers:
            groups.append({"hooks": [_handler(command)]})
            change.added.append(event)
            continue
        for handler in handlers:
            if handler.get("command") != command:
                handler["command"] = command
                change.updated.append(event)
    for event in list(hooks):
        if event not in wanted and _remove_ours(hooks, event):
            change.removed.append(event)
    change.changed = bool(change.added or change.updated or change.removed)
    if change.changed:
        _write(path, value, indent)
    return change


def uninstall(agent: Agent, path: Path) -> Change:
    """Remove exactly swarmq's handlers from ``path``; everything else stays as it was."""
    if not path.exists():
        return Change(path, False)
    value, indent = read_settings(path)
    hooks = value.get("hooks")
    change = Change(path, False)
    if isinstance(hooks, dict):
        for event in list(hooks):
            if _remove_ours(hooks, event):
                change.removed.append(event)
        if not hooks and change.removed:
            del value["hooks"]
    change.changed = bool(change.removed)
    if change.changed:
        _write(path, value, indent)
    return change


def _handlers(group: dict[str, Any]) -> list[Any]:
    handlers = group.get("hooks")
    return handlers if isinstance(handlers, list) else []


def _remove_ours(hooks: dict[str, Any], event: str) -> bool:
    """Drop swarmq's handlers of ``event`` (and what that leaves empty); whether any was."""
    groups = hooks.get(event)
    if not isinstance(groups, list):
        return False
    removed = False
    kept_groups = []
    for group in groups:
        if not isinstance(group, dict):
            kept_groups.append(group)
            continue
        handlers = _handlers(group)
        kept = [h for h in handlers if not is_ours(h)]
        if len(kept) == len(handlers):
            kept_groups.append(group)
            continue
        removed = True
        if kept:
            kept_groups.append({**group, "hooks": kept})
    if removed:
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    return removed


@dataclass
class Status:
    agent: Agent
    path: Path
    events: dict[str, str | None]
    """Each of swarmq's events → its installed command (None: not installed)."""
    notes: list[str] = field(default_factory=list)

    @property
    def installed(self) -> bool:
        return all(self.events.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "path": str(self.path),
            "installed": self.installed,
            "events": self.events,
            "notes": self.notes,
        }


def status(agent: Agent, path: Path) -> Status:
    value, _ = read_settings(path)
    hooks = value.get("hooks") or {}
    events: dict[str, str | None] = {}
    for event in EVENTS[agent]:
        found = [
            h.get("command")
            for g in hooks.get(event, [])
            if isinstance(g, dict)
            for h in _handlers(g)
            if is_ours(h)
        ]
        events[event] = found[0] if found else None
    out = Status(agent, path, events)
    for command in {c for c in events.values() if c}:
        program = shlex.split(command)[0] if command.strip() else ""
        if program and shutil.which(program) is None and not Path(program).is_file():
            out.notes.append(f"{program}: not found; run `swarmq hooks install` again")
    if agent == "codex":
        out.notes.extend(codex_notes())
    return out


def codex_notes() -> list[str]:
    """Codex's own switches that decide whether the hooks run: ``[features] hooks`` (named
    ``codex_hooks`` before Codex 0.124, when hooks were off by default) and the review of new
    hooks (``/hooks``) that current Codex asks for before running a hook it has not seen."""
    notes = []
    config = codex_home() / "config.toml"
    try:
        features = tomllib.loads(config.read_text(encoding="utf-8")).get("features", {})
    except (FileNotFoundError, tomllib.TOMLDecodeError):
        features = {}
    if isinstance(features, dict):
        for key in ("hooks", "codex_hooks"):
            if features.get(key) is False:
                notes.append(f"{config}: [features] {key} = false turns hooks off; set it to true")
        if "hooks" not in features and "codex_hooks" not in features:
            notes.append(
                f"Codex before 0.124 runs hooks only with `[features] codex_hooks = true` in "
                f"{config}; later versions run them by default"
            )
    notes.append("Codex runs a new or changed hook only once you have reviewed it: open /hooks")
    return notes
