"""Gather the failing tool calls of the real sessions in eval/forge/sessions into a fixture.

Each case: the session file and line of the result, the source repository / path / commit
(from eval/forge/SOURCES*.md), the tool, the call (command or path, clipped) and the error text
(clipped), in the form a hook hands to recall ("$ <call>" then the output). Calls are matched
to results by id (Claude Code ``tool_use_id``, Codex ``call_id``). A result counts as failing
when the transcript reader says so (error flag, non-zero exit code, refused call).

Run from the repository root: python eval/recall/gather_failures.py > eval/recall/failures.json
(then label each case's ``group`` by hand; the script keeps labels already in the file).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from swarmq.transcripts.values import reports_failure

SESSIONS = Path("eval/forge/sessions")
OUT = Path("eval/recall/failures.json")
CALL_CHARS = 300
HEAD_CHARS = 2500
TAIL_CHARS = 1500
"""A long output keeps its start and its end (where a stack trace puts the error)."""
_ROW = re.compile(r"^\| `([^`]+\.jsonl)` \| ([^|]+) \| `([^`]+)` \| `([0-9a-f]{40})` \|")


def sources() -> dict[str, dict[str, str]]:
    out = {}
    for name in ("SOURCES.md", "SOURCES-fresh.md"):
        for line in (SESSIONS.parent / name).read_text(encoding="utf-8").splitlines():
            match = _ROW.match(line)
            if match:
                out[match[1]] = {
                    "repository": match[2].strip(),
                    "path": match[3],
                    "commit": match[4],
                }
    return out


def call_text(name: str, value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    if isinstance(value, dict):
        for key in ("command", "cmd", "file_path", "path", "url", "pattern", "query", "input"):
            if value.get(key):
                found = value[key]
                text = " ".join(map(str, found)) if isinstance(found, list) else str(found)
                return text if key in ("command", "cmd", "input") else f"{name} {text}"
    return name


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            text_of(c.get("text", "")) if isinstance(c, dict) else str(c) for c in content
        )
    return json.dumps(content) if content is not None else ""


def failures(path: Path) -> list[dict[str, Any]]:
    calls: dict[str, tuple[str, str]] = {}
    out = []
    for line_no, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else record
        message = record.get("message") if isinstance(record.get("message"), dict) else None
        if message and isinstance(message.get("content"), list):
            for block in message["content"]:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use":
                    calls[block.get("id", "")] = (
                        block.get("name", ""),
                        call_text(block.get("name", ""), block.get("input")),
                    )
                elif block.get("type") == "tool_result":
                    text = text_of(block.get("content"))
                    if block.get("is_error") is True or reports_failure(text):
                        name, call = calls.get(block.get("tool_use_id", ""), ("", ""))
                        out.append((line_no, name, call, text))
            continue
        kind = payload.get("type")
        if kind in ("function_call", "custom_tool_call", "local_shell_call"):
            name = payload.get("name", kind)
            value = payload.get("arguments") or payload.get("input") or payload.get("action")
            calls[payload.get("call_id", "")] = (name, call_text(name, value))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = payload.get("output")
            text = output if isinstance(output, str) else text_of(output)
            failed = reports_failure(text) or text.startswith(
                (
                    "failed in sandbox",
                    "execution error",
                    "error:",
                    "apply_patch verification failed",
                    "failed to parse",
                    "exec_command failed",
                )
            )
            if failed:
                name, call = calls.get(payload.get("call_id", ""), ("", ""))
                out.append((line_no, name, call, text))
    return [
        {
            "file": path.name,
            "line": n,
            "tool": name,
            "call": call[:CALL_CHARS],
            "error": clip(text),
        }
        for n, name, call, text in out
    ]


def clip(text: str) -> str:
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return text
    return text[:HEAD_CHARS] + "\n[…]\n" + text[-TAIL_CHARS:]


def main() -> None:
    known = {}
    if OUT.exists():
        for case in json.loads(OUT.read_text(encoding="utf-8"))["cases"]:
            known[(case["file"], case["line"])] = case.get("group")
    where = sources()
    cases = []
    for path in sorted(SESSIONS.glob("*.jsonl")):
        for case in failures(path):
            case["source"] = where.get(path.name, {})
            case["group"] = known.get((case["file"], case["line"]))
            cases.append(case)
    json.dump({"version": 1, "cases": cases}, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
