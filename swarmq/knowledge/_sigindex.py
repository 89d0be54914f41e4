"""The failure signatures of a store's entries, for a process that does not keep the store.

A running process keeps each store's mirror and its :class:`SignatureIndex` (a dictionary). A
fresh process (a hook on a failing tool call) cannot afford to parse a 10,000-entry store and
compute every lesson's signature on each call, so :func:`lookup` keeps a persisted index per
store file under the runtime dir, the way :mod:`swarmq.knowledge.listing` does: the offsets of
the lines whose entries have a signature, by signature, plus the length and CRC-32 of the bytes
indexed. A call checks those bytes (one CRC pass, no JSON), indexes only lines appended since,
and parses just the matching lines. Any change inside the indexed bytes rebuilds the index from
the file, so the answer is always the file's. Entries without a ``failure_signature`` field are
indexed by the signature of their lesson text, so stores written before the field existed, or
by opencode-swarm, are recalled without being rewritten.

A store that has a persisted search index (:mod:`._ftsindex`) is recalled through that
instead: it holds the same keys per entry (:mod:`._recallkeys`), its check on open reads two
blocks, not every byte, and a transaction that read through it keeps it in step with its own
rewrite, which would leave this index to be rebuilt from every line by the next recall.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from swarmq.knowledge._ftsindex import FileIndex, sidecar_path
from swarmq.knowledge._indexes import mirror_index
from swarmq.knowledge._lineparse import parse_line
from swarmq.knowledge._recallkeys import entry_signature, recall_keys
from swarmq.knowledge.errors import KnowledgeError
from swarmq.knowledge.listing import index_path
from swarmq.knowledge.model import Entry
from swarmq.knowledge.store import TierStore
from swarmq.storage.atomic import write_atomic
from swarmq.storage.boundedjson import loads_bounded

log = logging.getLogger(__name__)

INDEX_VERSION = 2
CHUNK = 1 << 20


class SignatureIndex:
    """Slots of a mirror by failure signature, kept current through slot events."""

    def __init__(self) -> None:
        self.slots: dict[str, set[int]] = {}
        self.signature_of: dict[int, str] = {}
        self.entries: dict[int, Entry] = {}

    def reset(self) -> None:
        self.__init__()  # type: ignore[misc]

    def on_add(self, slot: int, entry: Entry) -> None:
        signature = entry_signature(entry)
        if signature is None:
            return
        self.slots.setdefault(signature, set()).add(slot)
        self.signature_of[slot] = signature
        self.entries[slot] = entry

    def on_remove(self, slot: int, entry: Entry) -> None:
        signature = self.signature_of.pop(slot, None)
        self.entries.pop(slot, None)
        if signature is not None:
            bucket = self.slots.get(signature)
            if bucket is not None:
                bucket.discard(slot)
                if not bucket:
                    del self.slots[signature]

    def on_replace(self, slot: int, old: Entry, new: Entry) -> None:
        self.on_remove(slot, old)
        self.on_add(slot, new)


def mirror_matches(store: TierStore, signatures: Sequence[str]) -> list[tuple[int, Entry]]:
    """``(rank of the signature, entry)`` for every entry of the store's mirror whose
    signature is one of ``signatures``, in signature order, then file order."""
    mirror = store.tier_file.mirror
    out: list[tuple[int, Entry]] = []
    with mirror.mutex:
        mirror.refresh()
        index: SignatureIndex = mirror_index(mirror, "signature", SignatureIndex)
        seen: set[int] = set()
        for rank, signature in enumerate(signatures):
            for slot in sorted(index.slots.get(signature, ())):
                if slot not in seen:
                    seen.add(slot)
                    out.append((rank, index.entries[slot]))
    return out


@dataclass(slots=True)
class _Persisted:
    """What the file's first ``end`` bytes (``lines`` complete lines) hold."""

    end: int = 0
    lines: int = 0
    crc: int = 0
    rows: dict[str, list[list[int]]] = field(default_factory=dict)
    """Signature → ``[offset, length, line_no]`` of each entry that has it, file order."""


def _load(file: Path, path: Path) -> _Persisted | None:
    try:
        data = loads_bounded(file.read_bytes(), max_depth=None)
        if data["version"] != INDEX_VERSION or data["path"] != os.path.realpath(path):
            return None
        return _Persisted(data["end"], data["lines"], data["crc"], data["rows"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # no index, or not one we wrote: rebuild it


def _save(file: Path, path: Path, index: _Persisted) -> None:
    data = {
        "version": INDEX_VERSION,
        "path": os.path.realpath(path),
        "end": index.end,
        "lines": index.lines,
        "crc": index.crc,
        "rows": index.rows,
    }
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(file, json.dumps(data, separators=(",", ":")), durable=False)
    except OSError:
        pass  # a cache: recall is right without it, the next call rebuilds it


def _prefix_crc(handle: BinaryIO, end: int) -> int | None:
    handle.seek(0)
    crc, left = 0, end
    while left:
        chunk = handle.read(min(CHUNK, left))
        if not chunk:
            return None
        crc = zlib.crc32(chunk, crc)
        left -= len(chunk)
    return crc


def _scan(
    handle: BinaryIO, index: _Persisted, memo: tuple[dict[str, str], dict[str, str]] | None = None
) -> list[tuple[list[str], Entry]]:
    """Index the complete lines after ``index.end``; the keys and entry of an unterminated
    last line (maybe a write in progress: parsed each time, never indexed). ``memo`` (a
    rebuild): line digest → its keys joined by newlines of the lines indexed before, so a
    rewrite that changed a few lines (``shown_count`` after an injection) parses only those,
    and the same map for the lines scanned now, filled here."""
    handle.seek(index.end)
    for data in handle:
        line_no = index.lines + 1
        complete = data.endswith(b"\n")
        digest = _digest(data) if memo is not None and complete else ""
        known = memo[0].get(digest) if memo is not None and complete else None
        if known is not None:
            keys = known.split("\n") if known else []
        else:
            item = parse_line(line_no, data)
            keys = recall_keys(item) if isinstance(item, Entry) else []
            if not complete:
                return [(keys, item)] if keys and isinstance(item, Entry) else []
        if memo is not None:
            memo[1][digest] = "\n".join(keys)
        for key in keys:
            index.rows.setdefault(key, []).append([index.end, len(data), line_no])
        index.end += len(data)
        index.lines = line_no
        index.crc = zlib.crc32(data, index.crc)
    return []


def file_matches(path: Path, signatures: Sequence[str], index_dir: Path) -> list[tuple[int, Entry]]:
    """``(rank of the signature, entry)`` for every entry of the store file ``path`` whose
    signature is one of ``signatures`` (or, for :data:`SESSION_START_KEY`, that a session
    start shows), read through the persisted index in ``index_dir``.
    No lock: stores are replaced atomically and appended whole lines at a time.

    A store with a persisted search index is answered through it (:func:`_searched`): a
    transaction keeps that index in step with its own rewrite, where this one would be rebuilt
    from every line after each recorded injection (1 s at 100k entries)."""
    searched = _searched(path, signatures)
    if searched is not None:
        return searched
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return []
    with handle:
        cache = index_path(index_dir, path)
        index = _load(cache, path)
        if index is not None and _prefix_crc(handle, index.end) == index.crc:
            try:
                return _answer(handle, index, signatures, cache, path)
            except (ValueError, TypeError, IndexError, KeyError):
                pass  # an index damaged in place: rebuild it
        return _answer(handle, _Persisted(), signatures, cache, path)


def _searched(path: Path, keys: Sequence[str]) -> list[tuple[int, Entry]] | None:
    """The answer of ``path``'s persisted search index (never built here: a first search
    builds it); ``None`` when it has none, or it cannot answer (the file ends in a write in
    progress, the index is stale or unusable): the signature index answers then."""
    if not sidecar_path(path).exists():
        return None
    try:
        index = FileIndex.open(path)
        if index is None:
            return None
        with index:
            return index.recalled(keys)
    except (OSError, sqlite3.Error, KnowledgeError) as exc:
        log.warning("knowledge index of %s cannot recall (%s); reading the file", path, exc)
        return None


def _digest(data: bytes) -> str:
    """16 hex digits of a line: the key of its signature in the rebuild memo."""
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def _load_memo(file: Path) -> dict[str, str]:
    try:
        memo = loads_bounded(file.read_bytes(), max_depth=None)
    except (OSError, ValueError):
        return {}
    return memo if isinstance(memo, dict) else {}


def _answer(
    handle: BinaryIO, index: _Persisted, signatures: Sequence[str], cache: Path, path: Path
) -> list[tuple[int, Entry]]:
    indexed = index.end
    memo_file = cache.with_suffix(".lines.json")
    memo: tuple[dict[str, str], dict[str, str]] | None = (
        (_load_memo(memo_file), {}) if indexed == 0 else None
    )
    tail = _scan(handle, index, memo)
    if index.end != indexed:
        _save(cache, path, index)
        if memo is not None:  # a cache: without it the next rebuild parses every line
            with contextlib.suppress(OSError):
                write_atomic(memo_file, json.dumps(memo[1], separators=(",", ":")), durable=False)
    out: list[tuple[int, Entry]] = []
    seen: set[int] = set()
    for rank, signature in enumerate(signatures):
        for offset, length, line_no in index.rows.get(signature, ()):
            if offset in seen:
                continue
            seen.add(offset)
            handle.seek(offset)
            item = parse_line(line_no, handle.read(length))
            if not isinstance(item, Entry):
                raise ValueError(f"line {line_no} is not the entry the index says")
            out.append((rank, item))
        out.extend((rank, entry) for keys, entry in tail if signature in keys)
    return out
