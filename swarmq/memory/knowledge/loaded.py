"""An in-memory mirror of one knowledge file, kept in step with the disk incrementally.

A 100k-entry store cannot be re-parsed on every add. The mirror remembers how far it has read
(``offset``), the file's identity and a fingerprint of the bytes around that point; on refresh
it parses only the lines appended since, and re-reads the whole file only when it was replaced
or rewritten in place. The store's own rewrites are applied to the mirror directly. Indexes
(near-duplicate bigrams, contradiction features, query postings) subscribe to slot changes.

Slots are integers in file order: appended entries get increasing slots, a replaced entry keeps
its slot, removed slots vanish. A line that does not parse, or is not an entry, is kept as a
:class:`CorruptLine` (with its line number) until a rewrite moves it to the corrupt sidecar.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from swarmq.memory.jsonl import CorruptLine
from swarmq.memory.knowledge.model import Entry, EntryShapeError
from swarmq.memory.knowledge.serialize import loads_js

FINGERPRINT_BYTES = 64


class SlotListener(Protocol):
    """An index kept in step with the mirror (``reset`` is called instead of one
    ``on_remove`` per slot when the whole file is reloaded)."""

    def reset(self) -> None: ...

    def on_add(self, slot: int, entry: Entry) -> None: ...

    def on_replace(self, slot: int, old: Entry, new: Entry) -> None: ...

    def on_remove(self, slot: int, entry: Entry) -> None: ...


@dataclass(frozen=True, slots=True)
class FileState:
    ino: int
    size: int
    mtime_ns: int


def parse_line(line_no: int, data: bytes) -> Entry | CorruptLine | None:
    """One line → entry, corrupt line, or ``None`` for a blank line (skipped, as opencode does)."""
    if data.endswith(b"\n"):
        data = data[:-1]
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


class LoadedFile:
    """The mirror of one JSONL entry file. Callers hold ``mutex`` around refresh + use."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.mutex = threading.RLock()
        self.listeners: list[SlotListener] = []
        self.indexes: dict[str, object] = {}
        """Indexes built on this mirror (by name), kept current through ``listeners``."""
        self.version = 0
        self._reset()

    def _reset(self) -> None:
        self.slots: dict[int, Entry] = {}
        """Live entries by slot; dict order is file order."""
        self.by_id: dict[str, int] = {}
        self.duplicate_ids: set[str] = set()
        self.corrupt: list[CorruptLine] = []
        self.pending: CorruptLine | None = None
        """An unterminated, unparsable last line (possibly a write in progress)."""
        self.offset = 0
        self.lines = 0
        self.next_slot = 0
        self.state: FileState | None = None
        self.head = b""
        self.tail = b""

    # -- reading ------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Bring the mirror up to date with the file on disk."""
        try:
            handle = self.path.open("rb")
        except FileNotFoundError:
            if self.state is not None or self.slots or self.corrupt:
                self._reload_empty()
            return
        with handle:
            st = os.fstat(handle.fileno())
            state = FileState(st.st_ino, st.st_size, st.st_mtime_ns)
            if state == self.state:
                return
            if (
                self.state is not None
                and state.ino == self.state.ino
                and state.size >= self.offset
                and self._prefix_unchanged(handle)
            ):
                self._read_from(handle, self.offset, state)
                return
            self._full_reload(handle, state)

    def _reload_empty(self) -> None:
        self._reset()
        for listener in self.listeners:
            listener.reset()
        self.version += 1

    def _prefix_unchanged(self, handle: BinaryIO) -> bool:
        handle.seek(0)
        head = handle.read(len(self.head))
        start = max(0, self.offset - FINGERPRINT_BYTES)
        handle.seek(start)
        tail = handle.read(self.offset - start)
        return head == self.head and tail == self.tail

    def _full_reload(self, handle: BinaryIO, state: FileState) -> None:
        self._reset()
        for listener in self.listeners:
            listener.reset()
        self._read_from(handle, 0, state)

    def _read_from(self, handle: BinaryIO, offset: int, state: FileState) -> None:
        handle.seek(offset)
        data = handle.read()
        self.pending = None
        position = 0
        end = len(data)
        while position < end:
            newline = data.find(b"\n", position)
            terminated = newline >= 0
            stop = newline + 1 if terminated else end
            parsed = parse_line(self.lines + 1, data[position:stop])
            if not terminated and isinstance(parsed, CorruptLine):
                self.pending = parsed  # maybe a write in progress: do not consume it yet
                break
            self.lines += 1
            position = stop
            if isinstance(parsed, Entry):
                self._append_slot(parsed)
            elif isinstance(parsed, CorruptLine):
                self.corrupt.append(parsed)
        self.offset = offset + position
        if len(self.head) < FINGERPRINT_BYTES:
            self.head = (self.head + data[:position])[:FINGERPRINT_BYTES]
        self._set_tail_from(data, position, offset)
        # A pending fragment (or bytes read past the stat) must be looked at again next time.
        exact = self.pending is None and self.offset == state.size
        self.state = state if exact else FileState(state.ino, -1, -1)
        self.version += 1

    def _set_tail_from(self, data: bytes, position: int, offset: int) -> None:
        if position >= FINGERPRINT_BYTES or offset == 0:
            self.tail = data[max(0, position - FINGERPRINT_BYTES):position]
        else:
            self.tail = (self.tail + data[:position])[-FINGERPRINT_BYTES:]

    def _append_slot(self, entry: Entry) -> int:
        slot = self.next_slot
        self.next_slot += 1
        self.slots[slot] = entry
        if entry.id in self.by_id:
            self.duplicate_ids.add(entry.id)
        else:
            self.by_id[entry.id] = slot
        for listener in self.listeners:
            listener.on_add(slot, entry)
        return slot

    # -- views ----------------------------------------------------------------------------------

    def entries(self) -> list[Entry]:
        return list(self.slots.values())

    def items(self) -> Iterator[tuple[int, Entry]]:
        return iter(self.slots.items())

    def get(self, entry_id: str) -> Entry | None:
        slot = self.by_id.get(entry_id)
        return None if slot is None else self.slots[slot]

    def all_corrupt(self) -> list[CorruptLine]:
        return [*self.corrupt, *([self.pending] if self.pending else [])]

    def __len__(self) -> int:
        return len(self.slots)

    # -- applying the store's own writes ------------------------------------------------------------

    def subscribe(self, listener: SlotListener) -> None:
        self.listeners.append(listener)
        for slot, entry in self.slots.items():
            listener.on_add(slot, entry)

    def adopt_rewrite(
        self,
        replaced: dict[int, Entry],
        removed: set[int],
        appended: list[Entry],
        written: bytes,
    ) -> None:
        """Mirror a rewrite this process just committed (``written`` = the new file's bytes)."""
        for slot in removed:
            entry = self.slots.pop(slot)
            for listener in self.listeners:
                listener.on_remove(slot, entry)
        for slot, new in replaced.items():
            old = self.slots[slot]
            self.slots[slot] = new
            for listener in self.listeners:
                listener.on_replace(slot, old, new)
        for entry in appended:
            self._append_slot(entry)
        self.by_id = {}
        self.duplicate_ids = set()
        for slot, entry in self.slots.items():
            if entry.id in self.by_id:
                self.duplicate_ids.add(entry.id)
            else:
                self.by_id[entry.id] = slot
        self.corrupt = []
        self.pending = None
        self.lines = len(self.slots)
        self.offset = len(written)
        self.head = written[:FINGERPRINT_BYTES]
        self.tail = written[-FINGERPRINT_BYTES:] if written else b""
        st = os.stat(self.path)
        self.state = FileState(st.st_ino, st.st_size, st.st_mtime_ns)
        self.version += 1


_REGISTRY: dict[str, LoadedFile] = {}
_REGISTRY_LOCK = threading.Lock()


def loaded(path: Path) -> LoadedFile:
    """The process-wide mirror of ``path`` (shared by every store object on that file)."""
    key = os.path.realpath(path)
    with _REGISTRY_LOCK:
        mirror = _REGISTRY.get(key)
        if mirror is None:
            mirror = _REGISTRY[key] = LoadedFile(Path(path))
        return mirror


def forget(path: Path) -> None:
    """Drop the mirror of ``path`` (tests, or after moving a store)."""
    with _REGISTRY_LOCK:
        _REGISTRY.pop(os.path.realpath(path), None)
