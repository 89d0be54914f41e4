"""An in-memory mirror of one knowledge file, kept in step with the disk incrementally.

A 100k-entry store cannot be re-parsed on every add. The mirror remembers how far it has read
(``offset``), the file's identity and sample windows of the bytes consumed; on refresh it parses
only the lines appended since. A file replaced or rewritten by another process is aligned line
by line with the mirror: unchanged lines are kept (one bytes compare each) and only changed or
new lines are parsed and re-indexed. The store's own writes are applied to the mirror directly.
Indexes (near-duplicate bigrams, contradiction features, query postings) subscribe to slot
changes.

The mirror knows a file by its inode number, and an inode number names one file only while that
file exists: once a rewrite's rename frees it, the next temp file in the directory (another
rewrite's, the embeddings sidecar's) may get the same number, and the bigger file found there
would pass for the mirrored one appended to, so a transaction would read stale entries under
the store lock and write them back (a lost update reported committed). So the mirror keeps the
file it has read open (:meth:`LoadedFile.refresh`): while it is held its number cannot be given
to another file, and the same number at the path then proves the same file. At most
:data:`MAX_HELD` files are held per process; a mirror whose file was let go reloads by
comparing lines, as for a replaced file, and holds it again.

Slots are integers in file order: appended entries get increasing slots, a replaced entry keeps
its slot, removed slots vanish. A line that does not parse, or is not an entry, is kept as a
:class:`CorruptLine` (with its line number) until a rewrite moves it to the corrupt sidecar.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from swarmq.knowledge._lineparse import parse_line
from swarmq.knowledge.model import Entry
from swarmq.storage.jsonl import CorruptLine

FINGERPRINT_BYTES = 64
SAMPLE_WINDOWS = 16
MAX_HELD = 128
"""Files a process keeps open as its mirrors' proof of identity (beyond this the file taken
longest ago is let go, bounding descriptors however many stores a worker touches)."""


def _pread(handle: BinaryIO, start: int, size: int) -> bytes:
    """``size`` bytes at ``start`` in one syscall (a buffered seek + read costs two and reads a
    whole buffer); the handle's own position and buffer are left alone."""
    return os.pread(handle.fileno(), size, start)


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


class LoadedFile:
    """The mirror of one JSONL entry file. Callers hold ``mutex`` around refresh + use."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.mutex = threading.RLock()
        self.listeners: list[SlotListener] = []
        self.indexes: dict[str, object] = {}
        """Indexes built on this mirror (by name), kept current through ``listeners``."""
        self.version = 0
        self._held: BinaryIO | None = None
        """The file ``state`` describes, kept open so its inode number is not recycled."""
        self._held_lock = threading.Lock()
        """Guards the swap of ``_held`` only (another mirror may let it go, see ``_hold``)."""
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
        self.samples: list[tuple[int, bytes]] = []
        """Windows of the consumed bytes (start, content) proving an append-only change."""

    # -- reading ------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Bring the mirror up to date with the file on disk."""
        if self.state is not None:  # the common case, unchanged: one stat, no open
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                pass
            else:
                if FileState(st.st_ino, st.st_size, st.st_mtime_ns) == self.state and self._same(
                    st.st_ino
                ):
                    return
        try:
            handle = self.path.open("rb")
        except FileNotFoundError:
            if self.state is not None or self.slots or self.corrupt:
                self._reload_empty()
            return
        held = False
        try:
            st = os.fstat(handle.fileno())
            state = FileState(st.st_ino, st.st_size, st.st_mtime_ns)
            same = self._same(state.ino)
            if same and state == self.state:
                return
            if same and state.size > self.offset and self._prefix_unchanged(handle):
                self._read_from(handle, self.offset, state)
                return
            if not self._diff_reload(handle, state):
                self._full_reload(handle, state)
            self._hold(handle)
            held = True
        finally:
            if not held:
                handle.close()

    def _same(self, ino: int) -> bool:
        """Whether inode ``ino``, just stat'ed at the path, is the file the mirror has read.

        Only while that file is held open: its number then cannot have been given to another
        file. ``_held`` is cleared before the file is closed, so finding it set after the stat
        means the file was open when the stat ran."""
        return self.state is not None and ino == self.state.ino and self._held is not None

    def _hold(self, handle: BinaryIO) -> None:
        """Keep ``handle`` (the file ``state`` now describes) open in place of the one held."""
        with self._held_lock:
            old, self._held = self._held, handle
        if old is not None and old is not handle:
            old.close()
        _note_held(self)

    def let_go(self) -> None:
        """Close the held file: the next refresh compares lines instead of trusting the inode."""
        with self._held_lock:
            old, self._held = self._held, None
        if old is not None:
            old.close()

    def _reload_empty(self) -> None:
        self.let_go()
        self._reset()
        for listener in self.listeners:
            listener.reset()
        self.version += 1

    def _prefix_unchanged(self, handle: BinaryIO) -> bool:
        """Whether the bytes already consumed are still there (so the change is an append).

        Checks SAMPLE_WINDOWS windows spread over the consumed range, including its start and
        end. swarmq itself never rewrites in place (it replaces the file), so this only has to
        catch opencode-swarm's in-place rewrites, whose length changes shift the windows."""
        return all(_pread(handle, start, len(blob)) == blob for start, blob in self.samples)

    def _take_samples(self, read: Callable[[int, int], bytes]) -> None:
        end = self.offset
        starts = {0, max(0, end - FINGERPRINT_BYTES)}
        starts.update(end * k // SAMPLE_WINDOWS for k in range(1, SAMPLE_WINDOWS))
        self.samples = [
            (start, read(start, min(FINGERPRINT_BYTES, end - start)))
            for start in sorted(starts)
            if start < end
        ]

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
        self._take_samples(lambda start, size: _pread(handle, start, size))
        # A pending fragment (or bytes read past the stat) must be looked at again next time.
        exact = self.pending is None and self.offset == state.size
        self.state = state if exact else FileState(state.ino, -1, -1)
        self.version += 1

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
        self._apply(removed, replaced, appended)
        self.corrupt = []
        self.pending = None
        self.lines = len(self.slots)
        self.offset = len(written)
        self._take_samples(lambda start, size: written[start : start + size])
        handle = self.path.open("rb")  # the file just written: the store lock is still held
        try:
            st = os.fstat(handle.fileno())
        except BaseException:
            handle.close()
            raise
        self.state = FileState(st.st_ino, st.st_size, st.st_mtime_ns)
        self._hold(handle)
        self.version += 1

    def adopt_append(self, appended: list[Entry], written: int) -> bool:
        """Mirror an append this process just made under the store lock without re-reading
        it, when the file is exactly what the mirror had read plus those ``written`` bytes
        (else ``False``: the caller refreshes, e.g. after a foreign write or a torn last line)."""
        expected = sum(len(entry.raw_bytes()) + 1 for entry in appended)
        state = self.state
        if state is None or self.pending is not None or state.size != self.offset:
            return False
        with self.path.open("rb") as handle:
            st = os.fstat(handle.fileno())
            if (
                written != expected
                or not self._same(st.st_ino)
                or st.st_size != self.offset + written
            ):
                return False
            for entry in appended:
                self.lines += 1
                self._append_slot(entry)
            self.offset = st.st_size
            self._take_samples(lambda start, size: _pread(handle, start, size))
        self.state = FileState(st.st_ino, st.st_size, st.st_mtime_ns)
        self.version += 1
        return True

    def _apply(
        self, removed: Iterable[int], replaced: dict[int, Entry], appended: list[Entry]
    ) -> None:
        """Apply slot changes, keeping ``by_id`` and the listeners current incrementally."""
        rescan: set[str] = set()
        for slot in removed:
            entry = self.slots.pop(slot)
            if self.by_id.get(entry.id) == slot:
                del self.by_id[entry.id]
                if entry.id in self.duplicate_ids:
                    rescan.add(entry.id)
            for listener in self.listeners:
                listener.on_remove(slot, entry)
        for slot, new in replaced.items():
            old = self.slots[slot]
            self.slots[slot] = new
            for listener in self.listeners:
                listener.on_replace(slot, old, new)
        for entry_id in rescan:
            holders = [s for s, e in self.slots.items() if e.id == entry_id]
            if holders:
                self.by_id[entry_id] = holders[0]
            if len(holders) < 2:
                self.duplicate_ids.discard(entry_id)
        for entry in appended:
            self._append_slot(entry)

    def _reorder(
        self, old: list[tuple[int, Entry]], inserted: list[tuple[int, Entry]], appended: int
    ) -> None:
        """Put the slots of lines inserted mid-file (just added, before ``appended`` others) in
        file order: each before the mirrored line it preceded."""
        slots = list(self.slots)
        new_slots = slots[len(slots) - appended - len(inserted) : len(slots) - appended]
        before: dict[int, list[int]] = {}
        for (index, _), slot in zip(inserted, new_slots, strict=True):
            before.setdefault(index, []).append(slot)
        order: list[int] = []
        for index, (slot, _) in enumerate(old):
            order.extend(before.get(index, ()))
            if slot in self.slots:
                order.append(slot)
        order.extend(slots[len(slots) - appended :] if appended else ())
        self.slots = {slot: self.slots[slot] for slot in order}

    def _diff_reload(self, handle: BinaryIO, state: FileState) -> bool:
        """Reload a replaced or rewritten file by aligning its lines with the mirror: lines
        identical to the mirrored entry are kept as they are, so only changed lines are parsed
        and re-indexed. Returns ``False`` (caller reloads fully) when the new file reorders
        entries or holds duplicate ids."""
        if self.duplicate_ids or not self.slots:
            return False
        handle.seek(0)
        data = handle.read()
        old = list(self.slots.items())
        old_bytes = [entry.raw_bytes() for _, entry in old]
        position_of = {slot: index for index, (slot, _) in enumerate(old)}
        chunks = data.split(b"\n")
        tail = chunks.pop()  # b"" when the file ends with a newline
        cursor = 0
        removed: list[int] = []
        replaced: dict[int, Entry] = {}
        appended: list[Entry] = []
        inserted: list[tuple[int, Entry]] = []  # (index in ``old`` it comes before, entry)
        corrupt: list[CorruptLine] = []
        pending: CorruptLine | None = None
        seen: set[str] = set()
        consumed = len(data)
        limit = min(len(chunks), len(old_bytes))
        while cursor < limit and chunks[cursor] == old_bytes[cursor]:
            cursor += 1  # the common prefix costs one C-level compare per line
        seen.update(entry.id for _, entry in old[:cursor])
        items: list[tuple[int, bytes, bool]] = [
            (number, chunk, True) for number, chunk in enumerate(chunks[cursor:], cursor + 1)
        ]
        if tail:
            items.append((len(chunks) + 1, tail, False))
        for number, chunk, terminated in items:
            if cursor < len(old) and chunk == old_bytes[cursor]:
                seen.add(old[cursor][1].id)
                cursor += 1
                continue
            parsed = parse_line(number, chunk)
            if not terminated and isinstance(parsed, CorruptLine):
                pending = parsed
                consumed = len(data) - len(tail)
                break
            if parsed is None:
                continue
            if isinstance(parsed, CorruptLine):
                corrupt.append(parsed)
                continue
            if parsed.id in seen:
                return False
            seen.add(parsed.id)
            slot = self.by_id.get(parsed.id)
            index = position_of.get(slot) if slot is not None else None
            if index is not None and index >= cursor and not appended:
                removed.extend(s for s, _ in old[cursor:index])
                if old[index][1].raw != parsed.raw:
                    replaced[old[index][0]] = parsed
                cursor = index + 1
            elif index is None and cursor >= len(old):
                appended.append(parsed)
            elif index is None and not appended:  # a new line before mirrored ones
                inserted.append((cursor, parsed))
            else:
                return False
        lines = len(chunks) + (1 if tail and pending is None else 0)
        position = consumed
        removed.extend(s for s, _ in old[cursor:])
        self._apply(removed, replaced, [entry for _, entry in inserted] + appended)
        if inserted:
            self._reorder(old, inserted, len(appended))
        self.corrupt = corrupt
        self.pending = pending
        self.lines = lines
        self.offset = position
        self._take_samples(lambda start, size: data[start : start + size])
        exact = pending is None and position == state.size
        self.state = state if exact else FileState(state.ino, -1, -1)
        self.version += 1
        return True


_HELD: OrderedDict[LoadedFile, None] = OrderedDict()
"""Mirrors holding their file, the one that took its file longest ago first."""
_HELD_LOCK = threading.Lock()


def _note_held(mirror: LoadedFile) -> None:
    """Mark ``mirror``'s held file the most recent, letting go the oldest beyond MAX_HELD
    (their mirrors' locks are not taken: letting go only swaps and closes)."""
    with _HELD_LOCK:
        _HELD[mirror] = None
        _HELD.move_to_end(mirror)
        dropped = [_HELD.popitem(last=False)[0] for _ in range(len(_HELD) - MAX_HELD)]
    for other in dropped:
        other.let_go()


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
        mirror = _REGISTRY.pop(os.path.realpath(path), None)
    if mirror is not None:
        with _HELD_LOCK:
            _HELD.pop(mirror, None)
        mirror.let_go()
