"""Listings of one tier file without parsing the whole store each call.

A command that only lists entries has no use for the store's mirror or its indexes. It needs,
per line, whether it is an entry (with its status and category) or a corrupt line (with its
error), and then the few entries it shows. :func:`list_tier` keeps exactly that in a persisted
listing index (a cache under the runtime dir): the next call checks that the indexed bytes are
unchanged (one CRC-32 pass, no JSON), parses only lines appended since, and parses just the
entries it returns. Any change inside the indexed bytes (a rewrite, a replaced file, an edit in
place by another tool) rebuilds the index from the file, so the answer is always the file's.

Every line goes through the mirror's own parser, so entries, corrupt lines, their numbers and
messages are exactly those :meth:`TierFile.read` gives (a blank line is skipped, a byte-order
mark on line 1 ignored, an unterminated last line parsed each time and never indexed).
"""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from swarmq.knowledge._lineparse import parse_line
from swarmq.knowledge.model import Entry
from swarmq.storage.atomic import write_atomic
from swarmq.storage.boundedjson import loads_bounded
from swarmq.storage.jsonl import CorruptLine

INDEX_VERSION = 1
CHUNK = 1 << 20
_Parsed = TypeVar("_Parsed", Entry, CorruptLine)


@dataclass(frozen=True, slots=True)
class Filter:
    """Which entries a listing shows: ``status`` and ``category`` when given, and inactive
    (archived, quarantined) ones only with ``include_inactive`` or an explicit ``status``."""

    status: str | None = None
    category: str | None = None
    include_inactive: bool = False

    def keeps(self, status: str, category: str, active: bool) -> bool:
        return (
            (self.status is None or status == self.status)
            and (self.category is None or category == self.category)
            and (self.include_inactive or self.status is not None or active)
        )


@dataclass(slots=True)
class Listing:
    """The entries shown (file order), every corrupt line, and how the file was read."""

    path: Path
    entries: list[Entry] = field(default_factory=list)
    corrupt: list[CorruptLine] = field(default_factory=list)
    scanned: int = 0
    """Entries in the file (shown or not)."""
    matched: int = 0
    """Entries the filter accepts (``entries`` is the last ``last`` of them)."""
    parsed: int = 0
    """Lines parsed by this call (all of them without a valid index)."""


@dataclass(slots=True)
class _Index:
    """What the file's first ``end`` bytes (``lines`` complete lines) hold."""

    end: int = 0
    lines: int = 0
    crc: int = 0
    entries: list[list[Any]] = field(default_factory=list)
    """``[offset, length, line_no, status, category, active]`` per entry, file order."""
    corrupt: list[list[Any]] = field(default_factory=list)
    """``[offset, length, line_no]`` per corrupt line (few: parsed again for the message)."""


def index_path(index_dir: Path, path: Path) -> Path:
    key = hashlib.sha256(os.path.realpath(path).encode()).hexdigest()[:24]
    return index_dir / f"{key}.json"


def _load_index(file: Path, path: Path) -> _Index | None:
    try:
        data = loads_bounded(file.read_bytes(), max_depth=None)
        if data["version"] != INDEX_VERSION or data["path"] != os.path.realpath(path):
            return None
        return _Index(data["end"], data["lines"], data["crc"], data["entries"], data["corrupt"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # no index, or not one we wrote: rebuild it


def _save_index(file: Path, path: Path, index: _Index) -> None:
    data = {"version": INDEX_VERSION, "path": os.path.realpath(path), "end": index.end,
            "lines": index.lines, "crc": index.crc, "entries": index.entries,
            "corrupt": index.corrupt}  # fmt: skip
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(file, json.dumps(data, separators=(",", ":")), durable=False)
    except OSError:
        pass  # a cache: the listing is right without it, the next call rebuilds it


def _prefix_crc(handle: BinaryIO, end: int) -> int | None:
    """CRC-32 of the file's first ``end`` bytes, or ``None`` when it is shorter."""
    handle.seek(0)
    crc, left = 0, end
    while left:
        chunk = handle.read(min(CHUNK, left))
        if not chunk:
            return None
        crc = zlib.crc32(chunk, crc)
        left -= len(chunk)
    return crc


def _scan(handle: BinaryIO, index: _Index) -> tuple[Entry | CorruptLine | None, int]:
    """Index the complete lines after ``index.end``; the unterminated last line, parsed but
    not indexed (it may be a write in progress), and the number of lines parsed."""
    handle.seek(index.end)
    parsed = 0
    for data in handle:
        line_no = index.lines + 1
        item = parse_line(line_no, data)
        parsed += 1
        if not data.endswith(b"\n"):
            return item, parsed
        if isinstance(item, Entry):
            index.entries.append([index.end, len(data), line_no, item.status, item.category,
                                  item.is_active])  # fmt: skip
        elif item is not None:
            index.corrupt.append([index.end, len(data), line_no])
        index.end += len(data)
        index.lines = line_no
        index.crc = zlib.crc32(data, index.crc)
    return None, parsed


def list_tier(
    path: Path, keep: Filter, last: int | None = None, *, index_dir: Path | None = None
) -> Listing:
    """The entries of ``path`` that ``keep`` accepts (the ``[-last:]`` slice of them when
    ``last`` is given) and every corrupt line; a missing file is an empty store. With
    ``index_dir`` the listing index is used and kept there. No lock: files are replaced
    atomically and appended whole lines at a time."""
    listing = Listing(Path(path))
    try:
        handle = listing.path.open("rb")
    except FileNotFoundError:
        return listing
    with handle:
        cache = index_path(index_dir, listing.path) if index_dir is not None else None
        index = _load_index(cache, listing.path) if cache is not None else None
        if index is not None and _prefix_crc(handle, index.end) == index.crc:
            try:
                return _answer(listing, handle, index, keep, last, cache)
            except (_OutOfStep, TypeError, ValueError, IndexError):
                listing = Listing(listing.path)  # an index damaged in place: rebuild it
        return _answer(listing, handle, _Index(), keep, last, cache)


def _answer(
    listing: Listing, handle: BinaryIO, index: _Index, keep: Filter, last: int | None,
    cache: Path | None,
) -> Listing:  # fmt: skip
    indexed = index.end
    tail, listing.parsed = _scan(handle, index)
    if cache is not None and index.end != indexed:
        _save_index(cache, listing.path, index)
    rows: list[list[Any] | Entry] = [row for row in index.entries if keep.keeps(*row[3:6])]
    if isinstance(tail, Entry) and keep.keeps(tail.status, tail.category, tail.is_active):
        rows.append(tail)
    listing.matched = len(rows)
    for row in rows if last is None else rows[-last:]:
        listing.entries.append(row if isinstance(row, Entry) else _reparse(handle, row, Entry))
    listing.corrupt = [_reparse(handle, row, CorruptLine) for row in index.corrupt]
    if isinstance(tail, CorruptLine):
        listing.corrupt.append(tail)
    listing.scanned = len(index.entries) + isinstance(tail, Entry)
    return listing


class _OutOfStep(Exception):
    """An indexed row that is not what the index says (the index file was damaged)."""


def _reparse(handle: BinaryIO, row: list[Any], kind: type[_Parsed]) -> _Parsed:
    """The indexed line ``row`` parsed again (it is what the index says: the CRC matched)."""
    offset, length, line_no = row[0], row[1], row[2]
    handle.seek(offset)
    item = parse_line(line_no, handle.read(length))
    if not isinstance(item, kind):
        raise _OutOfStep(f"line {line_no}")
    return item
