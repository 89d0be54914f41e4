"""Writers of small transcripts shaped like the real ones in eval/forge/sessions (same records)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.config import ForgeConfig
from swarmq.forge.extract import forge_transcript
from swarmq.storage.locking import LocalLocks

SESSION = "5f0c1d2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f"

NARRATED = ForgeConfig(narration_needs_witness=False, narration_needs_limit=False)
"""For tests of other mechanics whose small sessions narrate lessons with no failed call to
witness them (the witness rule has its own tests, tests/forge/test_witness.py)."""


class ClaudeSession:
    """Builds a Claude Code session file record by record."""

    def __init__(self, session: str = SESSION) -> None:
        self.session = session
        self.records: list[dict[str, Any]] = []
        self.calls = 0

    def _add(self, kind: str, role: str, content: Any, **extra: Any) -> None:
        n = len(self.records)
        self.records.append(
            {
                "type": kind,
                "sessionId": self.session,
                "uuid": f"u{n}",
                "timestamp": f"2026-03-01T10:{n // 60:02d}:{n % 60:02d}.000Z",
                "isSidechain": False,
                "message": {"role": role, "content": content},
                **extra,
            }
        )

    def user(self, text: str) -> ClaudeSession:
        self._add("user", "user", text)
        return self

    def say(self, text: str) -> ClaudeSession:
        self._add("assistant", "assistant", [{"type": "text", "text": text}])
        return self

    def bash(
        self, command: str, output: str, *, error: bool = False, tool: str = "Bash"
    ) -> ClaudeSession:
        return self.call(tool, {"command": command}, output, error=error)

    def call(
        self, name: str, given: dict[str, Any], output: str, *, error: bool = False
    ) -> ClaudeSession:
        """A call of any tool with its own input (``Edit``'s path and strings, ``TaskStop``'s
        ``task_id``, an MCP tool's) and its result."""
        self.calls += 1
        call_id = f"toolu_{self.calls:04d}"
        self._add(
            "assistant",
            "assistant",
            [{"type": "tool_use", "id": call_id, "name": name, "input": given}],
        )
        self._add(
            "user",
            "user",
            [{"type": "tool_result", "tool_use_id": call_id, "content": output, "is_error": error}],
        )
        return self

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records), encoding="utf-8")
        return path


def codex_old_rollout(path: Path, steps: list[tuple[str, Any]]) -> Path:
    """An older, bare-form Codex rollout: ``("user"|"assistant", text)`` or ``("shell", (argv, output,
    exit_code))`` steps (``(argv, output, exit_code, True)`` for a call that asked to leave the
    sandbox)."""
    lines: list[dict[str, Any]] = [
        {
            "id": "3cf49b45-003a-44d0-a6b7-498a5a35c810",
            "timestamp": "2025-08-21T06:29:22Z",
            "instructions": None,
        },
        {"record_type": "state"},
    ]
    for i, (kind, value) in enumerate(steps):
        if kind in ("user", "assistant"):
            block = "input_text" if kind == "user" else "output_text"
            lines.append(
                {
                    "type": "message",
                    "id": None,
                    "role": kind,
                    "content": [{"type": block, "text": value}],
                }
            )
        else:
            argv, output, code, *escalated = value
            arguments: dict[str, Any] = {"command": argv, "timeout_ms": 10000}
            if escalated and escalated[0]:
                arguments["with_escalated_permissions"] = True
            lines.append(
                {
                    "type": "function_call",
                    "id": f"fc{i}",
                    "name": "shell",
                    "arguments": json.dumps(arguments, separators=(",", ":"))
                    if escalated and escalated[0]
                    else json.dumps(arguments),
                    "call_id": f"call{i}",
                }
            )
            lines.append(
                {
                    "type": "function_call_output",
                    "call_id": f"call{i}",
                    "output": json.dumps(
                        {"output": output, "metadata": {"exit_code": code, "duration_seconds": 0.1}}
                    ),
                }
            )
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path


def sequences(path: Path, layout: AgentsLayout, locks: LocalLocks) -> list[str]:
    """What the failure -> fix miner forged from the session at ``path`` (its lessons' text)."""
    found = forge_transcript(path, layout, locks).found
    return [c.content for c in found if c.extractor == "sequence"]


def forged(session: ClaudeSession, tmp_path: Path, layout: AgentsLayout) -> list[str]:
    """Every candidate forge made of ``session`` (written to ``tmp_path``), as its text."""
    path = session.write(tmp_path / "s.jsonl")
    return [c.content for c in forge_transcript(path, layout, LocalLocks(tmp_path / "l")).found]
