"""A read-only pass over one tier file for listings: entries in file order and corrupt lines.

A command that only lists entries has no use for the store's mirror (slots, ids, byte samples
kept for incremental refreshes) nor for any index: this streams the file once, line by line,
through the mirror's own line parser, so entries, corrupt lines, their numbers and messages are
exactly those :meth:`TierFile.read` gives (a blank line is skipped, a byte-order mark on line
1 ignored, an unterminated last line parsed like any other).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from swarmq.memory.jsonl import CorruptLine
from swarmq.memory.knowledge.loaded import parse_line
from swarmq.memory.knowledge.model import Entry


@dataclass(slots=True)
class Listing:
    """The entries kept by a listing's filter, in file order, and every corrupt line."""

    path: Path
    entries: list[Entry] = field(default_factory=list)
    corrupt: list[CorruptLine] = field(default_factory=list)
    scanned: int = 0
    """Entries read (kept or not)."""


def read_listing(path: Path, keep: Callable[[Entry], bool] | None = None) -> Listing:
    """Every entry of ``path`` that ``keep`` accepts (all when ``None``) and every corrupt line;
    a missing file is an empty store. No lock: files are replaced atomically and appended whole
    lines at a time."""
    listing = Listing(Path(path))
    try:
        handle = listing.path.open("rb")
    except FileNotFoundError:
        return listing
    with handle:
        for line_no, data in enumerate(handle, 1):
            parsed = parse_line(line_no, data)
            if isinstance(parsed, Entry):
                listing.scanned += 1
                if keep is None or keep(parsed):
                    listing.entries.append(parsed)
            elif parsed is not None:
                listing.corrupt.append(parsed)
    return listing
