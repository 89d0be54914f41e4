"""Starting ``swarmq mcp`` as a real process, the way an agent's config starts it."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters
from mcp.types import CallToolResult


def stdio_params(
    roster_file: Path, *, worker: str | None = None, session: str | None = None
) -> StdioServerParameters:
    """``python -m swarmq.cli -c <roster> mcp`` with the variables a mission exports."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k in ("HOME", "PATH", "LANG", "TMPDIR", "PYTHONPATH", "XDG_DATA_HOME")
    }
    if worker:
        env["SWARMQ_WORKER_ID"] = worker
    if session:
        env["SWARMQ_ASSIGNMENT_ID"] = session
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "swarmq.cli", "-c", str(roster_file), "mcp"],
        env=env,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def data(result: CallToolResult) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)  # type: ignore[union-attr]


def error_text(result: CallToolResult) -> str:
    assert result.is_error, result
    return " ".join(getattr(c, "text", "") for c in result.content)
