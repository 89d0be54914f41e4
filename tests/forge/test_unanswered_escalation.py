"""A Codex call the sandbox refused, asked again with escalated permissions as the transcript's
last call: the answer is never seen, but the way out the agent took is the lesson's cure (the
parameter that leaves the sandbox), not a bare "refused here"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.extract import forge_transcript
from swarmq.storage.locking import LocalLocks

_DENIED = (
    'exec_command failed: CreateProcess { message: "Codex(Sandbox(Denied { output: '
    'ExecToolCallOutput { exit_code: 255, stdout: StreamOutput { text: \\"\\", '
    'truncated_after_lines: None }, stderr: StreamOutput { text: \\"error: cannot open '
    "'.git/FETCH_HEAD': Operation not permitted\\\\n\\\", truncated_after_lines: None }, "
    'duration: 0ns, timed_out: false }, network_policy_decision: None }))" }'
)


def _rollout(path: Path, calls: list[tuple[dict[str, Any], str | None]]) -> Path:
    lines: list[dict[str, Any]] = [
        {"timestamp": "2026-04-14T14:20:00.000Z", "type": "session_meta",
         "payload": {"id": "019d8c2a-0001", "cwd": "/work/app", "originator": "codex_cli_rs"}},
        {"timestamp": "2026-04-14T14:20:01.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": "create the feature branch"}]}},
    ]  # fmt: skip
    for number, (arguments, output) in enumerate(calls, 1):
        stamp = f"2026-04-14T14:21:{number:02d}.000Z"
        lines.append({"timestamp": stamp, "type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command",
            "arguments": json.dumps(arguments), "call_id": f"call_{number}"}})  # fmt: skip
        if output is not None:
            lines.append({"timestamp": stamp, "type": "response_item", "payload": {
                "type": "function_call_output", "call_id": f"call_{number}",
                "output": output}})  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _found(path: Path, layout: AgentsLayout, locks: LocalLocks) -> list[str]:
    return [
        c.content for c in forge_transcript(path, layout, locks).found if c.extractor == "sequence"
    ]


FETCH = {"cmd": "git fetch --all --prune", "workdir": "/work/app", "yield_time_ms": 1000}


def test_a_refusal_asked_again_with_escalation_at_the_end_names_the_escalation(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    escalated = {**FETCH, "sandbox_permissions": "require_escalated", "justification": "fetch?"}
    found = _found(
        _rollout(tmp_path / "r.jsonl", [(FETCH, _DENIED), (escalated, None)]), layout, locks
    )
    assert len(found) == 1
    assert "cannot open '.git/FETCH_HEAD': Operation not permitted" in found[0]
    assert "the agent asked to run it again with escalated permissions" in found[0]
    assert 'sandbox_permissions: "require_escalated"' in found[0]


def test_a_refusal_left_alone_is_not_said_to_be_escalated(
    tmp_path: Path, layout: AgentsLayout, locks: LocalLocks
) -> None:
    other = {
        "cmd": "git status",
        "workdir": "/work/app",
        "sandbox_permissions": "require_escalated",
    }
    found = _found(_rollout(tmp_path / "r.jsonl", [(FETCH, _DENIED), (other, None)]), layout, locks)
    assert len(found) == 1
    assert "escalated" not in found[0]
