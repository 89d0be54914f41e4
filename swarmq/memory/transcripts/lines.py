"""Streaming a JSONL transcript line by line in bounded memory.

A transcript may be a gigabyte and may end in a torn line (the agent was still writing when it
was copied). Lines are read with a size cap so a single pathological line cannot exhaust memory;
a line over the cap is skipped and reported, never silently dropped. A last line without a
newline that does not parse is reported as truncated.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from swarmq.memory.transcripts.model import ReadReport

DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
"""Larger lines are skipped (and reported): no real transcript record comes close."""


def iter_lines(
    path: Path,
    report: ReadReport,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    keep_blank: bool = False,
) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_no, line)`` for each non-blank line (every line with ``keep_blank``),
    newline stripped.

    The last line is yielded even without a trailing newline; ``report.truncated_last_line``
    is set while it is being yielded, so a parser that fails on it can call it truncated.
    """
    line_no = 0
    with path.open("rb") as handle:
        readline = handle.readline
        while True:
            chunk = readline(max_line_bytes)
            if not chunk:
                return
            line_no += 1
            report.bytes_read += len(chunk)
            if len(chunk) == max_line_bytes and not chunk.endswith(b"\n"):
                skipped = len(chunk)
                while True:  # discard the rest of the overlong line
                    more = readline(max_line_bytes)
                    report.bytes_read += len(more)
                    skipped += len(more)
                    if not more or more.endswith(b"\n"):
                        break
                report.lines = line_no
                report.problem(line_no, f"line of {skipped} bytes exceeds {max_line_bytes}; skipped")
                continue
            report.lines = line_no
            if chunk.endswith(b"\n"):
                chunk = chunk[:-1]
                if chunk.endswith(b"\r"):
                    chunk = chunk[:-1]
            elif not chunk.strip():
                return
            else:
                # Only the last line can lack its newline; mark it so a parse failure is
                # reported as truncation rather than corruption.
                report.truncated_last_line = True
            if keep_blank or chunk.strip():
                yield line_no, chunk


def iter_json_records(
    path: Path, report: ReadReport, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_no, object)`` for each line holding a JSON object; report the rest."""
    loads = json.loads
    for line_no, raw in iter_lines(path, report, max_line_bytes=max_line_bytes):
        try:
            value = loads(raw)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
            if report.truncated_last_line:
                report.problem(line_no, f"truncated last line ({len(raw)} bytes, no newline)")
            else:
                report.problem(line_no, f"invalid JSON: {_short(exc)}")
            continue
        if report.truncated_last_line:
            # The unterminated last line parsed: it is complete, not torn.
            report.truncated_last_line = False
        if not isinstance(value, dict):
            report.problem(line_no, f"expected a JSON object, got {type(value).__name__}")
            continue
        yield line_no, value


def _short(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) <= 120 else text[:117] + "..."
