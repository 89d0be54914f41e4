"""Reading JSONL canonical files without ever losing a line.

Every line keeps its raw text, so a rewrite can put back unchanged lines byte for byte. A line
that is not valid JSON (or not UTF-8, or nested or sized past the bounds of
:mod:`~swarmq.storage.boundedjson`) is reported with its line number and, when the file is
rewritten, moved to ``<stem>.corrupt.jsonl`` beside it instead of being dropped.

A UTF-8 byte-order mark at the start of a file (Windows editors add one) is not part of the
first line: it is skipped on read, so the first entry is served, and kept on rewrite.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swarmq.storage.atomic import append_jsonl, write_atomic
from swarmq.storage.boundedjson import loads_line
from swarmq.storage.clock import iso
from swarmq.storage.locking import Lease

BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class JsonlLine:
    """One parsed line: its 1-based number, its exact text (no newline) and its value."""

    line_no: int
    raw: str
    value: Any


@dataclass(frozen=True, slots=True)
class CorruptLine:
    """A line that could not be parsed, kept so that nothing is silently dropped."""

    line_no: int
    raw: bytes
    error: str

    def describe(self, path: Path) -> str:
        return f"{path}:{self.line_no}: {self.error}"


@dataclass(slots=True)
class JsonlRead:
    """The content of a JSONL file: parsed lines in file order plus the corrupt ones."""

    path: Path
    lines: list[JsonlLine] = field(default_factory=list)
    corrupt: list[CorruptLine] = field(default_factory=list)


def iter_jsonl(path: Path | str) -> Iterator[JsonlLine | CorruptLine]:
    """Stream a JSONL file line by line in constant memory; a missing file yields nothing.

    Blank lines are skipped (as opencode-swarm does); surrounding whitespace is ignored for
    parsing but the raw text is kept exactly.
    """
    path = Path(path)
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return
    with handle:
        for line_no, chunk in enumerate(handle, start=1):
            data = chunk[:-1] if chunk.endswith(b"\n") else chunk
            if line_no == 1 and data.startswith(BOM):
                data = data[len(BOM) :]
            if not data.strip():
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield CorruptLine(line_no, data, f"not UTF-8 ({exc.reason} at byte {exc.start})")
                continue
            try:
                value = loads_line(text)
            except json.JSONDecodeError as exc:
                yield CorruptLine(line_no, data, f"invalid JSON: {exc.msg} at column {exc.colno}")
                continue
            yield JsonlLine(line_no, text, value)


def read_jsonl(path: Path | str) -> JsonlRead:
    """Read a whole JSONL file, separating good lines from corrupt ones."""
    result = JsonlRead(Path(path))
    for item in iter_jsonl(path):
        if isinstance(item, JsonlLine):
            result.lines.append(item)
        else:
            result.corrupt.append(item)
    return result


def corrupt_path(path: Path) -> Path:
    """``knowledge.jsonl`` → ``knowledge.corrupt.jsonl``."""
    return path.with_name(f"{path.stem}.corrupt.jsonl")


def quarantine_corrupt(
    path: Path | str,
    corrupt: Iterable[CorruptLine],
    *,
    lease: Lease | None = None,
    corrupt_to: Path | str | None = None,
) -> int:
    """Append corrupt lines, with their origin and line number, to the quarantine file
    (``corrupt_to`` when a store names its own, else :func:`corrupt_path`); returns how many
    were appended.

    A line the quarantine file already records (same source, line number and text) is not
    recorded again: a rewrite that failed after quarantining (a full disk) left the line in
    place, and the next rewrite must not copy it once more. The caller holds the lock.
    """
    path = Path(path)
    target = Path(corrupt_to) if corrupt_to else corrupt_path(path)
    now = iso()
    records: list[dict[str, Any]] = []
    pending = list(corrupt)
    recorded = _recorded(target, path.name) if pending else set()
    for item in pending:
        if (item.line_no, item.raw.decode("utf-8", errors="replace")) in recorded:
            continue
        record: dict[str, Any] = {
            "source": path.name,
            "line": item.line_no,
            "error": item.error,
            "quarantined_at": now,
            "text": item.raw.decode("utf-8", errors="replace"),
        }
        try:
            item.raw.decode("utf-8")
        except UnicodeDecodeError:
            record["raw_b64"] = base64.b64encode(item.raw).decode("ascii")
        records.append(record)
    if records:
        append_jsonl(target, records, lease=lease)
    return len(records)


def _recorded(sidecar: Path, source: str) -> set[tuple[int, str]]:
    """``(line, text)`` of every record of ``source`` already in ``sidecar``."""
    seen: set[tuple[int, str]] = set()
    for item in iter_jsonl(sidecar):
        value = item.value if isinstance(item, JsonlLine) else None
        if isinstance(value, dict) and value.get("source") == source:
            line, text = value.get("line"), value.get("text")
            if isinstance(line, int) and isinstance(text, str):
                seen.add((line, text))
    return seen


def rewrite_jsonl(
    path: Path | str,
    raw_lines: Iterable[str],
    *,
    lease: Lease | None = None,
    corrupt: Iterable[CorruptLine] = (),
    corrupt_to: Path | str | None = None,
) -> None:
    """Atomically replace a JSONL file with ``raw_lines``.

    Corrupt lines read from the old file are moved to the quarantine file (``corrupt_to`` or
    :func:`corrupt_path`) first, so the rewrite never loses them. An empty list writes an empty
    file; otherwise lines end with ``\\n``.
    """
    path = Path(path)
    quarantine_corrupt(path, corrupt, lease=lease, corrupt_to=corrupt_to)
    lines = list(raw_lines)
    for line in lines:
        if "\n" in line:
            raise ValueError(f"{path}: a JSONL line must not contain a newline")
    body = "\n".join(lines) + "\n" if lines else ""
    write_atomic(path, (BOM if starts_with_bom(path) else b"") + body.encode("utf-8"), lease=lease)


def starts_with_bom(path: Path) -> bool:
    """Whether ``path`` begins with a UTF-8 byte-order mark (a rewrite keeps it)."""
    try:
        with path.open("rb") as handle:
            return handle.read(len(BOM)) == BOM
    except FileNotFoundError:
        return False
