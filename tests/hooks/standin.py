"""A stand-in for Claude Code's hook runner, replaying a real recorded session.

It does what Claude Code does with hooks, from the settings file on disk: for each event it
finds the matcher groups under ``hooks.<Event>`` in ``.claude/settings.json``, and runs every
``command`` handler through the shell with the event's JSON on stdin, in the project directory,
``$CLAUDE_PROJECT_DIR`` set, killed after the handler's ``timeout`` (Claude Code's default: 60 s).
The session is a real one from ``eval/forge/sessions/``: its records are written one by one to
``<claude home>/projects/<encoded project dir>/<session id>.jsonl`` (Claude Code's layout), with
this replay's session id and working directory, and the events fire where Claude Code fires
them: ``SessionStart`` before the first record, ``UserPromptSubmit`` before each prompt,
``PostToolUseFailure`` after each tool result marked ``is_error`` (with its ``tool_use``'s name
and input), ``Stop`` when a turn ends (before the next prompt, and at the end), ``SessionEnd``
last. Payload fields follow https://code.claude.com/docs/en/hooks.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_TIMEOUT = 60.0
TOOL_EVENTS = {"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"}


@dataclass
class HookRun:
    event: str
    command: str
    payload: dict[str, Any]
    exit_code: int
    stdout: str
    stderr: str
    seconds: float

    def context(self) -> str | None:
        """The ``additionalContext`` this run handed to the model, if any."""
        if not self.stdout.strip():
            return None
        try:
            value = json.loads(self.stdout)
        except ValueError:
            return self.stdout  # plain stdout (SessionStart / UserPromptSubmit)
        out = value.get("hookSpecificOutput", {}).get("additionalContext")
        return out if isinstance(out, str) else None


@dataclass
class Replay:
    session_id: str
    transcript: Path
    runs: list[HookRun] = field(default_factory=list)
    ended_at: float = 0.0


def encode_project(path: Path) -> str:
    """Claude Code's directory name for a project under ``~/.claude/projects``."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(path))


def _matches(event: str, matcher: object, subject: str) -> bool:
    if matcher in (None, "", "*"):
        return True
    if not isinstance(matcher, str):
        return False
    if event in TOOL_EVENTS or event in {"SessionStart", "SessionEnd", "PreCompact"}:
        return re.fullmatch(matcher, subject) is not None
    return True  # the other events take no matcher


def run_hooks(
    settings: Path,
    event: str,
    payload: dict[str, Any],
    *,
    cwd: Path,
    env: Mapping[str, str],
    subject: str = "",
) -> list[HookRun]:
    """Run every hook of ``event`` in ``settings`` the way Claude Code does."""
    config = json.loads(settings.read_text(encoding="utf-8"))
    runs = []
    for group in config.get("hooks", {}).get(event, []):
        if not _matches(event, group.get("matcher"), subject):
            continue
        for handler in group.get("hooks", []):
            if handler.get("type", "command") != "command":
                continue
            started = time.monotonic()
            proc = subprocess.run(
                handler["command"],
                shell=True,
                input=json.dumps(payload).encode("utf-8"),
                capture_output=True,
                cwd=cwd,
                env={**env, "CLAUDE_PROJECT_DIR": str(cwd)},
                timeout=float(handler.get("timeout", DEFAULT_TIMEOUT)),
                check=False,
            )
            runs.append(
                HookRun(
                    event,
                    handler["command"],
                    payload,
                    proc.returncode,
                    proc.stdout.decode("utf-8", "replace"),
                    proc.stderr.decode("utf-8", "replace"),
                    time.monotonic() - started,
                )
            )
    return runs


def _records(source: Path) -> Iterator[dict[str, Any]]:
    for line in source.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            if isinstance(record, dict):
                yield record


def _prompt(record: dict[str, Any]) -> str | None:
    if record.get("type") != "user" or record.get("isMeta") or record.get("isCompactSummary"):
        return None
    content = record.get("message", {}).get("content")
    if isinstance(content, str):
        name = re.search(r"<command-name>(.*?)</command-name>", content, re.S)
        if name is not None:  # a slash command: Claude Code submits "/name args"
            args = re.search(r"<command-args>(.*?)</command-args>", content, re.S)
            return f"{name.group(1).strip()} {args.group(1).strip() if args else ''}".strip()
        return None if content.startswith("<local-command") else content
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        texts = [b.get("text", "") for b in content if isinstance(b, dict)]
        text = "\n".join(t for t in texts if t)
        return text or None
    return None


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("text")
        )
    return json.dumps(content)


def replay(
    source: Path,
    *,
    project: Path,
    claude_home: Path,
    env: Mapping[str, str],
    session_id: str | None = None,
) -> Replay:
    """Replay ``source`` as a live session of ``project`` with the hooks installed there."""
    settings = project / ".claude" / "settings.json"
    session_id = session_id or str(uuid.uuid4())
    transcript = claude_home / "projects" / encode_project(project) / f"{session_id}.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    out = Replay(session_id, transcript)
    base = {
        "session_id": session_id,
        "transcript_path": str(transcript),
        "cwd": str(project),
        "permission_mode": "default",
    }

    def fire(event: str, subject: str = "", **fields: Any) -> None:
        payload = {**base, "hook_event_name": event, **fields}
        out.runs += run_hooks(settings, event, payload, cwd=project, env=env, subject=subject)

    tool_uses: dict[str, dict[str, Any]] = {}
    turn_open = False
    fire("SessionStart", "startup", source="startup", model="claude-sonnet-4")
    with transcript.open("a", encoding="utf-8") as handle:
        for record in _records(source):
            record = {**record}
            if "sessionId" in record:
                record["sessionId"] = session_id
            if "cwd" in record:
                record["cwd"] = str(project)
            prompt = _prompt(record)
            if prompt is not None:
                if turn_open:
                    fire("Stop", stop_hook_active=False)
                fire("UserPromptSubmit", prompt=prompt)
                turn_open = True
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            handle.flush()
            if record.get("type") == "assistant":
                turn_open = True
                for block in record.get("message", {}).get("content", []) or []:
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        tool_uses[str(block.get("id"))] = block
            content = record.get("message", {}).get("content")
            if record.get("type") == "user" and isinstance(content, list):
                for block in content:
                    if not (isinstance(block, dict) and block.get("type") == "tool_result"):
                        continue
                    if not block.get("is_error"):
                        continue
                    use = tool_uses.get(str(block.get("tool_use_id")), {})
                    name = str(use.get("name", "unknown"))
                    fire(
                        "PostToolUseFailure",
                        name,
                        tool_name=name,
                        tool_input=use.get("input", {}),
                        tool_use_id=block.get("tool_use_id"),
                        error=_text(block.get("content")),
                        is_interrupt=False,
                    )
    if turn_open:
        fire("Stop", stop_hook_active=False)
    fire("SessionEnd", "other", reason="other")
    out.ended_at = time.monotonic()
    return out


def hook_env(state: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment the agent runs its hooks in: this one, without a pinned roster (the hook
    finds ``swarm.yaml`` from the session's directory), with the test's state directory."""
    env = {k: v for k, v in os.environ.items() if k not in ("SWARMQ_CONFIG", "REDIS_URL")}
    env["SWARMQ_STATE"] = str(state)
    env.update(extra or {})
    return env
