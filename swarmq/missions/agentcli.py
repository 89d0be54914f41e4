"""What swarmq knows about the coding-agent CLIs it runs: Claude Code and Codex.

A mission's stdout is what the agent *prints*; with ``claude -p`` that is the final answer
alone. The session itself (every tool call, every error and the retry that fixed it, which is
where forge finds its best lessons) is a file the CLI writes on its own:

* **Claude Code** writes ``<CLAUDE_CONFIG_DIR or ~/.claude>/projects/<key>/<session id>.jsonl``,
  ``<key>`` being the working directory with every character outside ``[A-Za-z0-9]`` (per
  UTF-16 code unit) replaced by ``-``; a key over 200 characters is cut to 200 and followed by
  ``-`` and the base-36 of the absolute 32-bit string hash of the path. The session id is ours
  to choose: :func:`prepare` adds ``--session-id <uuid4>`` unless the command sets it (or
  resumes one, or turns persistence off). Lookup falls back to ``projects/*/<id>.jsonl`` so a
  key computed differently (a symlinked cwd, a future rule) still finds the file.
* **Codex** (``codex exec``) writes ``<CODEX_HOME or ~/.codex>/sessions/YYYY/MM/DD/
  rollout-YYYY-MM-DDThh-mm-ss-<session id>.jsonl`` (local date). Its id cannot be chosen; it is
  read from the output (``{"type":"thread.started","thread_id":…}`` with ``--json``, the header
  line ``session id: <uuid>`` otherwise), else the rollout is the one created during the run
  whose ``session_meta`` names this run's working directory.

Nothing here imports Celery or touches swarmq's stores: :func:`prepare` rewrites the argv before
the run, :func:`locate` finds the file after it and says why when it cannot.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from dataclasses import replace as _replace
from datetime import datetime
from pathlib import Path
from typing import Any

from swarmq.missions.config import TranscriptSource

T = TranscriptSource

CLAUDE_PROGRAMS = frozenset({"claude", "claude-code"})
CODEX_PROGRAMS = frozenset({"codex"})
_KEY_LIMIT = 200
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_CODEX_HEADER_ID = re.compile(r"^\s*session id:\s*(" + _UUID.pattern + r")\s*$", re.IGNORECASE)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_SCAN_BYTES = 4 << 20
"""How much of the output log is searched for a session id (it comes first)."""


def program_name(command: list[str]) -> str:
    """The program's base name, without a Windows ``.exe``/``.cmd`` suffix, lower-cased."""
    name = os.path.basename(command[0]).lower() if command else ""
    for suffix in (".exe", ".cmd", ".js"):
        name = name.removesuffix(suffix)
    return name


def detect(command: list[str]) -> TranscriptSource:
    """``claude`` is Claude Code; ``codex exec`` (or ``codex e``) is Codex; anything else
    (a script, a wrapper) keeps its stdout as the transcript."""
    name = program_name(command)
    if name in CLAUDE_PROGRAMS:
        return T.CLAUDE_CODE
    if name in CODEX_PROGRAMS and any(arg in ("exec", "e") for arg in command[1:]):
        return T.CODEX
    return T.STDOUT


def resolve(setting: TranscriptSource, command: list[str]) -> TranscriptSource:
    """The transcript source a worker's ``agent.transcript`` setting means for its command."""
    return detect(command) if setting is T.AUTO else setting


def _option(argv: list[str], *names: str) -> str | None:
    """The value of the last ``--name value`` / ``--name=value`` among ``names``."""
    found = None
    for index, arg in enumerate(argv):
        for name in names:
            if arg == name and index + 1 < len(argv):
                found = argv[index + 1]
            elif name.startswith("--") and arg.startswith(name + "="):
                found = arg[len(name) + 1 :]
    return found


def _flag(argv: list[str], *names: str) -> bool:
    return any(arg in names or any(arg.startswith(n + "=") for n in names) for arg in argv)


def claude_project_key(cwd: str) -> str:
    """The directory name Claude Code gives the project at ``cwd`` under ``projects/``."""
    units = cwd.encode("utf-16-le")
    out = []
    for i in range(0, len(units), 2):
        code = int.from_bytes(units[i : i + 2], "little")
        char = chr(code) if code < 0xD800 or code > 0xDFFF else ""
        out.append(char if char.isascii() and char.isalnum() else "-")
    key = "".join(out)
    if len(key) <= _KEY_LIMIT:
        return key
    return f"{key[:_KEY_LIMIT]}-{_base36(abs(_js_hash(cwd)))}"


def _js_hash(text: str) -> int:
    """Java/JavaScript's 32-bit string hash over UTF-16 code units."""
    h = 0
    units = text.encode("utf-16-le")
    for i in range(0, len(units), 2):
        h = (((h << 5) - h) + int.from_bytes(units[i : i + 2], "little")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _base36(value: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, rest = divmod(value, 36)
        out = digits[rest] + out
        if value == 0:
            return out


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def claude_config_dir(env: Mapping[str, str]) -> Path:
    configured = env.get("CLAUDE_CONFIG_DIR")
    return Path(os.path.expanduser(configured)) if configured else _home(env) / ".claude"


def codex_home(env: Mapping[str, str]) -> Path:
    configured = env.get("CODEX_HOME")
    return Path(os.path.expanduser(configured)) if configured else _home(env) / ".codex"


@dataclass(frozen=True)
class SessionPlan:
    """How one run's own session will be found: made before the run by :func:`prepare`."""

    source: TranscriptSource
    argv: list[str]
    """The command to run (Claude Code's gets ``--session-id`` when it had none)."""
    cwd: Path
    env: Mapping[str, str]
    started: float
    """Epoch seconds just before the run (rollouts created before it are not this run's)."""
    session_id: str | None = None
    unavailable: str | None = None
    """Why no session file will exist, known before the run (``--no-session-persistence``)."""


@dataclass(frozen=True)
class SessionFound:
    path: Path
    session_id: str | None


@dataclass(frozen=True)
class SessionMissing:
    reason: str


def prepare(
    source: TranscriptSource,
    argv: list[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    started: float,
    new_id: str | None = None,
) -> SessionPlan:
    """The plan for a run of ``argv`` (already substituted) whose transcript is ``source``."""
    plan = SessionPlan(source, list(argv), cwd, env, started)
    if source is T.CLAUDE_CODE:
        return _prepare_claude(plan, new_id or str(uuid.uuid4()))
    return plan


def _prepare_claude(plan: SessionPlan, new_id: str) -> SessionPlan:
    argv = plan.argv
    if _flag(argv, "--no-session-persistence"):
        return _replace(
            plan, unavailable="the command turns persistence off (--no-session-persistence)"
        )
    chosen = _option(argv, "--session-id")
    if chosen:
        return _replace(plan, session_id=chosen)
    resumed = _option(argv, "--resume", "-r")
    forks = _flag(argv, "--fork-session")
    if resumed and _UUID.fullmatch(resumed) and not forks:
        return _replace(plan, session_id=resumed)  # appended to the resumed session's file
    if _flag(argv, "--continue", "-c", "--resume", "-r") and not forks:
        return plan  # the id is Claude Code's choice: read from the output, or the newest file
    return _replace(plan, argv=[argv[0], "--session-id", new_id, *argv[1:]], session_id=new_id)


def locate(plan: SessionPlan, output: Path) -> SessionFound | SessionMissing:
    """This run's own session file, or why it cannot be found. ``output`` is the run's
    stdout/stderr log (a session id printed there is used when the plan has none)."""
    if plan.source is T.STDOUT or plan.source is T.AUTO:
        return SessionMissing("the agent's transcript is its stdout (agent.transcript: stdout)")
    if plan.unavailable:
        return SessionMissing(plan.unavailable)
    if plan.source is T.CLAUDE_CODE:
        return _locate_claude(plan, output)
    return _locate_codex(plan, output)


def _locate_claude(plan: SessionPlan, output: Path) -> SessionFound | SessionMissing:
    projects = claude_config_dir(plan.env) / "projects"
    session_id = plan.session_id or _printed_id(output, T.CLAUDE_CODE)
    names = sorted({str(plan.cwd), os.path.realpath(plan.cwd)})
    if session_id is None:  # ``--continue`` in text mode: the newest session of this project
        mine = (p for n in names for p in (projects / claude_project_key(n)).glob("*.jsonl"))
        newest = _newest(mine, since=plan.started, cwd=None)
        if newest is not None:
            return SessionFound(newest, newest.stem)
        return SessionMissing(
            f"no session id (the command resumes or continues without one) and no session of "
            f"{plan.cwd} in {projects} was written during the run"
        )
    if not _UUID.fullmatch(session_id):
        return SessionMissing(f"session id {session_id!r} is not a UUID")
    for name in names:
        path = projects / claude_project_key(name) / f"{session_id}.jsonl"
        if path.is_file():
            return SessionFound(path, session_id)
    for path in sorted(projects.glob(f"*/{session_id}.jsonl")):
        if path.is_file():
            return SessionFound(path, session_id)
    return SessionMissing(
        f"Claude Code session {session_id} not found: no "
        f"{projects / claude_project_key(os.path.realpath(plan.cwd)) / (session_id + '.jsonl')} "
        f"nor any {projects}/*/{session_id}.jsonl (CLAUDE_CONFIG_DIR and HOME as the agent saw them)"
    )


def _locate_codex(plan: SessionPlan, output: Path) -> SessionFound | SessionMissing:
    sessions = codex_home(plan.env) / "sessions"
    session_id = _printed_id(output, T.CODEX)
    if session_id is not None:
        for day in _days(plan.started):
            for path in sorted(sessions.glob(f"{day}/rollout-*-{session_id}.jsonl")):
                return SessionFound(path, session_id)
        for path in sorted(sessions.glob(f"*/*/*/rollout-*-{session_id}.jsonl")):
            return SessionFound(path, session_id)
        return SessionMissing(
            f"Codex printed session id {session_id} but no {sessions}/YYYY/MM/DD/"
            f"rollout-*-{session_id}.jsonl exists (CODEX_HOME and HOME as the agent saw them)"
        )
    rollouts = (p for day in _days(plan.started) for p in sessions.glob(f"{day}/rollout-*.jsonl"))
    newest = _newest(rollouts, since=plan.started, cwd=os.path.realpath(plan.cwd))
    if newest is not None:
        found = _UUID.search(newest.name)
        return SessionFound(newest, found.group(0) if found else None)
    return SessionMissing(
        f"Codex printed no session id and no rollout under {sessions} was written during the run "
        f"in {plan.cwd}"
    )


def _days(started: float) -> list[str]:
    """The local-date directories a run that started at ``started`` may have written."""
    days = []
    for stamp in (started, datetime.now().timestamp()):
        day = datetime.fromtimestamp(stamp).strftime("%Y/%m/%d")
        if day not in days:
            days.append(day)
    return days


def _newest(paths: Iterator[Path], *, since: float, cwd: str | None) -> Path | None:
    """The most recently written file among ``paths`` written after ``since`` (and, for Codex
    rollouts, whose ``session_meta`` names ``cwd``)."""
    best: tuple[float, Path] | None = None
    for path in paths:
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if mtime + 1 < since:
            continue
        if cwd is not None and _rollout_cwd(path) not in (cwd, None):
            continue
        if best is None or mtime > best[0]:
            best = (mtime, path)
    return best[1] if best else None


def _rollout_cwd(path: Path) -> str | None:
    try:
        with path.open("rb") as handle:
            first = json.loads(handle.readline(1 << 20) or b"null")
    except (OSError, ValueError):
        return None
    payload = first.get("payload") if isinstance(first, dict) else None
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    return os.path.realpath(cwd) if isinstance(cwd, str) else None


def _printed_id(output: Path, source: TranscriptSource) -> str | None:
    """A session id the agent printed: the JSON outputs' ``session_id``/``thread_id``, or
    Codex's human header line ``session id: <uuid>``."""
    try:
        with output.open("rb") as handle:
            data = handle.read(_SCAN_BYTES)
    except OSError:
        return None
    for raw in data.decode("utf-8", errors="replace").splitlines():
        line = _ANSI.sub("", raw)
        stripped = line.strip()
        if stripped.startswith(("{", "[")):
            try:
                value = json.loads(stripped)
            except ValueError:
                continue
            key = "thread_id" if source is T.CODEX else "session_id"
            for record in value if isinstance(value, list) else [value]:
                found = record.get(key) if isinstance(record, dict) else None
                if isinstance(found, str) and _UUID.fullmatch(found):
                    return found
        elif source is T.CODEX:
            match = _CODEX_HEADER_ID.match(line)
            if match:
                return match.group(1)
    return None


class OutputReader:
    """The text the marker reader sees in an agent's output, line by line, in order.

    Plain lines are read as they are. The CLIs' JSON events are read for the text they carry,
    each text once: Claude Code's ``stream-json`` assistant messages as they stream (so
    checkpoints arrive live), its final ``result`` only when nothing streamed (``json``, which
    prints that one object; the result repeats the last streamed message); Codex ``exec
    --json``'s ``agent_message`` items. Other events carry no text.
    """

    def __init__(self, source: TranscriptSource) -> None:
        self.source = source
        self.streamed = False

    def texts(self, line: str) -> list[str]:
        decoded = self.decode(line)
        return [line] if decoded is None else decoded

    def decode(self, line: str) -> list[str] | None:
        """The text lines of a JSON event, or ``None`` when the line is not one."""
        stripped = line.strip()
        if self.source not in (T.CLAUDE_CODE, T.CODEX) or not stripped.startswith(("{", "[")):
            return None
        try:
            record = json.loads(stripped)
        except ValueError:
            return None
        if isinstance(record, list):  # ``--output-format json --verbose``: one array
            results = [r for r in record if isinstance(r, dict) and r.get("type") == "result"]
            record = results[-1] if results else None
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            return None
        kind = record["type"]
        if self.source is T.CLAUDE_CODE:
            return self._claude(kind, record)
        if kind == "item.completed":
            item = record.get("item")
            if isinstance(item, dict) and item.get("type") == "agent_message":
                text = item.get("text")
                return text.splitlines() if isinstance(text, str) else []
        return [] if "." in kind or kind == "error" else None

    def _claude(self, kind: str, record: dict[str, Any]) -> list[str] | None:
        if kind == "result":
            text = record.get("result")
            if self.streamed or not isinstance(text, str):
                return []
            return text.splitlines()
        if kind == "assistant" and "session_id" in record:
            message = record.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            blocks = [content] if isinstance(content, str) else content or []
            lines = [
                text
                for block in blocks
                for text in (
                    block.splitlines()
                    if isinstance(block, str)
                    else str(block.get("text", "")).splitlines()
                    if isinstance(block, dict) and block.get("type") == "text"
                    else []
                )
            ]
            self.streamed = self.streamed or bool(lines)
            return lines
        return [] if "session_id" in record else None
