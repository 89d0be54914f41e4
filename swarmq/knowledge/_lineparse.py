"""One line of a knowledge file, read the way opencode-swarm reads it: entry, corrupt, or blank.

The mirror (:mod:`._loaded`) and the listing index (:mod:`.listing`) must agree on every line, so
both parse through this one function.
"""

from __future__ import annotations

from swarmq.knowledge.model import Entry, EntryShapeError
from swarmq.knowledge.serialize import loads_js
from swarmq.storage.jsonl import BOM, CorruptLine


def parse_line(line_no: int, data: bytes) -> Entry | CorruptLine | None:
    """One line → entry, corrupt line, or ``None`` for a blank line (skipped, as opencode does)."""
    if data.endswith(b"\n"):
        data = data[:-1]
    if line_no == 1 and data.startswith(BOM):  # a byte-order mark is not part of the entry
        data = data[len(BOM) :]
    if not data.strip():
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return CorruptLine(line_no, data, f"not UTF-8 ({exc.reason} at byte {exc.start})")
    try:
        value = loads_js(text)
    except ValueError as exc:
        return CorruptLine(line_no, data, f"invalid JSON: {exc}")
    try:
        return Entry(value, raw=text)
    except EntryShapeError as exc:
        return CorruptLine(line_no, data, f"not a knowledge entry: {exc}")
