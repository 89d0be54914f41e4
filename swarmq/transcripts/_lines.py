"""Streaming a JSONL transcript line by line in bounded memory.

A transcript may be a gigabyte and may end in a torn line (the agent was still writing when it
was copied). Lines are read with a size cap so a single pathological line cannot exhaust memory;
a line over the cap is skipped and reported, never silently dropped. A last line without a
newline that does not parse is reported as truncated.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from swarmq.transcripts.model import ReadReport

DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
"""Larger lines are skipped (and reported): no real transcript record comes close."""


BLOCK_BYTES = 1024 * 1024
"""Read size: lines are cut out of blocks, so a long file costs no call per line."""


def iter_lines(
    path: Path,
    report: ReadReport,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    keep_blank: bool = False,
) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_no, line)`` for each non-blank line (every line with ``keep_blank``),
    newline (and a CR before it) stripped.

    The last line is yielded even without a trailing newline; ``report.truncated_last_line``
    is set while it is being yielded, so a parser that fails on it can call it truncated.
    A line longer than ``max_line_bytes`` is dropped as it is read (memory stays bounded) and
    reported. ``report.lines`` and ``report.bytes_read`` follow block by block.
    """
    line_no = 0
    read = 0
    partial = b""
    overlong = 0  # bytes of an overlong line discarded so far (0: not inside one)
    try:
        with path.open("rb") as handle:
            while True:
                block = handle.read(BLOCK_BYTES)
                if not block:
                    break
                read += len(block)
                report.bytes_read = read
                parts = block.split(b"\n")
                tail = parts.pop()
                if overlong:
                    if not parts:  # still inside the overlong line
                        overlong += len(tail)
                        continue
                    line_no += 1
                    report.problem(
                        line_no,
                        f"line of {overlong + len(parts[0]) + 1} bytes exceeds "
                        f"{max_line_bytes}; skipped",
                    )
                    parts = parts[1:]
                    overlong = 0
                elif partial and parts:
                    parts[0] = partial + parts[0]
                    partial = b""
                elif partial:
                    tail = partial + tail
                    partial = b""
                for line in parts:
                    line_no += 1
                    if line[-1:] == b"\r":
                        line = line[:-1]
                    if len(line) > max_line_bytes:
                        report.problem(
                            line_no,
                            f"line of {len(line) + 1} bytes exceeds {max_line_bytes}; skipped",
                        )
                    elif keep_blank or line[:1] == b"{" or line.strip():
                        yield line_no, line
                report.lines = line_no
                if len(tail) > max_line_bytes:
                    overlong = len(tail)
                else:
                    partial = tail
            if overlong:
                line_no += 1
                report.problem(
                    line_no, f"line of {overlong} bytes exceeds {max_line_bytes}; skipped"
                )
            elif partial.strip():
                line_no += 1
                # Only the last line can lack its newline; mark it so a parse failure is
                # reported as truncation rather than corruption.
                report.truncated_last_line = True
                yield line_no, partial
    finally:
        report.lines, report.bytes_read = line_no, read


def iter_json_records(
    path: Path, report: ReadReport, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_no, object)`` for each line holding a JSON object; report the rest.

    Each line is parsed by orjson (a third of :func:`json.loads`'s time on a real transcript,
    where parsing is most of forge's cost); a line orjson refuses (a byte-order mark, ``NaN``, a
    lone surrogate, bad UTF-8, a torn or broken record) is parsed again by :mod:`json`, so what
    is accepted and every error reported stay ``json``'s. One value differs: an integer beyond
    64 bits is read as a float, which is what it is to the agents that write these files (Claude
    Code is JavaScript, whose numbers are doubles; Codex writes 64-bit integers).

    Depth is bounded by the parsers' own guards (orjson refuses past 1024 levels, json's C
    scanner raises ``RecursionError``, caught here): a pre-scan of every line (as
    :mod:`swarmq.storage.boundedjson` does for knowledge lines) costs a tenth of forge's time on
    a real transcript, and nothing in forge walks a record recursively except
    :func:`~swarmq.transcripts.values.compact`, which refuses what it cannot encode."""
    fast, refused = orjson.loads, orjson.JSONDecodeError
    for line_no, raw in iter_lines(path, report, max_line_bytes=max_line_bytes):
        try:
            value = fast(raw)
            if value.__class__ is not dict:  # rare: json's answer, its depth guard included
                raise refused("not an object", "", 0)
        except refused:
            try:
                value = _json_loads(raw, first=line_no == 1)
            except RecursionError:  # json's own depth guard: a record of hundreds of levels
                report.problem(line_no, "invalid JSON: nested too deeply to parse")
                continue
            except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
                if report.truncated_last_line:
                    report.problem(line_no, f"truncated last line ({len(raw)} bytes, no newline)")
                else:
                    report.problem(line_no, f"invalid JSON: {_short(exc)}")
                continue
        if report.truncated_last_line:
            # The unterminated last line parsed: it is complete, not torn.
            report.truncated_last_line = False
        if value.__class__ is not dict:
            report.problem(line_no, f"expected a JSON object, got {type(value).__name__}")
            continue
        yield line_no, value


def _json_loads(raw: bytes, *, first: bool) -> Any:
    """:func:`json.loads` of one line, a byte-order mark allowed on the first."""
    text = raw.decode("utf-8")
    if first and text.startswith("\ufeff"):
        text = text[1:]
    return _scanned(text, _SCAN) if text[:1] == "{" else _DECODER.decode(text)


_DECODER = json.JSONDecoder()
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]


def _scanned(text: str, scan: Callable[[str, int], tuple[Any, int]]) -> Any:
    """``json.loads`` of a line opening with ``{``, without its two whitespace regex matches
    (most lines have no whitespace around the object): the C scanner alone, then the full
    decoder whenever anything follows the object, so errors and edge cases stay ``json``'s.
    The scanner raises ``JSONDecodeError`` itself for a broken object."""
    value, end = scan(text, 0)
    return value if end == len(text) else _DECODER.decode(text)


def _short(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) <= 120 else text[:117] + "..."
