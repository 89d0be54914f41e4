"""One tier's files (swarm, hive or link store): the in-memory mirror, consistent reads, the
store lock, and every lease-bound write of the store file and its sidecars.

The collaborator of :class:`~swarmq.knowledge.store.TierStore` and the one writer that
:mod:`~swarmq.knowledge.store`, :mod:`~swarmq.knowledge.transaction`,
:mod:`~swarmq.knowledge._quarantine` and the group commit all use, so none of them reaches into
another's private methods. Only :mod:`swarmq.knowledge` uses it; others go through the store. Every write takes the lease of the
store lock, so a writer whose lease lapsed is fenced off. Appends are one ``write`` + fsync;
rewrites are temp file + fsync + rename, after moving corrupt lines to the corrupt sidecar and
recording removed entries in the evicted sidecar.
"""

from __future__ import annotations

import builtins
import contextlib
import logging
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from swarmq.knowledge._indexes import ContradictionListener, DedupListener, mirror_index
from swarmq.knowledge._loaded import loaded
from swarmq.knowledge._sidecars import append_capped, evicted_record
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.contradiction import ContradictionIndex
from swarmq.knowledge.dedup import BigramIndex
from swarmq.knowledge.files import TierFiles
from swarmq.knowledge.model import Entry
from swarmq.knowledge.serialize import dumps_js
from swarmq.storage.atomic import append_lines, write_atomic
from swarmq.storage.clock import iso
from swarmq.storage.jsonl import BOM, CorruptLine, JsonlLine, quarantine_corrupt, starts_with_bom
from swarmq.storage.locking import Lease, StoreLocks

if TYPE_CHECKING:
    from swarmq.knowledge._ftsindex import FileIndex

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A consistent view of a store: good entries in file order and the corrupt lines."""

    entries: tuple[Entry, ...]
    corrupt: tuple[CorruptLine, ...]

    def get(self, entry_id: str) -> Entry | None:
        return next((e for e in self.entries if e.id == entry_id), None)

    def active(self) -> builtins.list[Entry]:
        return [e for e in self.entries if e.is_active]


class TierFile:
    """The entries of one store file and its sidecars, read and written under its lock."""

    def __init__(
        self,
        files: TierFiles,
        *,
        locks: StoreLocks,
        config: KnowledgeConfig | None = None,
        project_name: str = "",
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.files = files
        self.tier = files.tier
        self.locks = locks
        self.config = config or KnowledgeConfig()
        self.project_name = project_name
        self.clock = clock or (lambda: datetime.now(UTC))
        self.mirror = loaded(files.knowledge)

    # -- reading ------------------------------------------------------------------------------

    def now(self) -> str:
        return iso(self.clock())

    def read(self) -> Snapshot:
        """Every good entry and every corrupt line, as on disk now (no lock needed: files are
        replaced atomically and appended whole lines at a time)."""
        with self.mirror.mutex:
            self.mirror.refresh()
            return Snapshot(tuple(self.mirror.slots.values()), tuple(self.mirror.all_corrupt()))

    def get(self, entry_id: str) -> Entry | None:
        with self.mirror.mutex:
            self.mirror.refresh()
            return self.mirror.get(entry_id)

    def list(
        self, *, status: str | None = None, category: str | None = None, active_only: bool = False
    ) -> builtins.list[Entry]:
        return [
            e
            for e in self.read().entries
            if (status is None or e.status == status)
            and (category is None or e.category == category)
            and (not active_only or e.is_active)
        ]

    @property
    def dedup(self) -> BigramIndex:
        """Near-duplicate index (call with ``mirror.mutex`` held and the mirror refreshed)."""
        listener: DedupListener = mirror_index(self.mirror, "dedup", DedupListener)
        return listener.index

    def contradictions(self) -> ContradictionIndex:
        mode = self.config.validation_mode
        listener: ContradictionListener = mirror_index(
            self.mirror,
            f"contradiction:{mode}",
            lambda: ContradictionListener(ContradictionIndex(mode)),
        )
        return listener.index

    def warm(self) -> None:
        """Refresh the mirror and build the near-duplicate and contradiction indexes."""
        with self.mirror.mutex:
            self.mirror.refresh()
            _ = self.dedup
            self.contradictions()

    def find_duplicate(
        self, lesson: str, *, active_only: bool = True, threshold: float | None = None
    ) -> Entry | None:
        """The first entry (file order) whose lesson is a near-duplicate of ``lesson``."""
        with self.mirror.mutex:
            self.mirror.refresh()
            return self._find_duplicate(lesson, active_only, threshold)

    def _find_duplicate(
        self, lesson: str, active_only: bool, threshold: float | None
    ) -> Entry | None:
        slots = self.mirror.slots
        slot = self.dedup.find(
            lesson,
            self.config.dedup_threshold if threshold is None else threshold,
            (lambda s: slots[s].is_active) if active_only else (lambda s: True),
        )
        return None if slot is None else slots[slot]

    # -- locking and committing -----------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self, *, timeout: float | None = None) -> Iterator[Lease]:
        """Hold the store lock (waiting at most ``timeout`` seconds) with the mirror refreshed
        under it."""
        with self.locks.hold(self.files.resource, timeout=timeout) as lease, self.mirror.mutex:
            self.mirror.refresh()
            yield lease

    @contextlib.contextmanager
    def held(self, *, timeout: float | None = None) -> Iterator[Lease]:
        """Hold the store lock without reading the store (a write of a sidecar alone, such as
        the events log, must not load a store this process reads through its index)."""
        with self.locks.hold(self.files.resource, timeout=timeout) as lease:
            yield lease

    @contextlib.contextmanager
    def locked_for_transaction(
        self, *, timeout: float | None = None
    ) -> Iterator[tuple[Lease, FileIndex | None]]:
        """Hold the store lock for a transaction: with the store's persisted index open and
        synchronised with the file when this process has not loaded the mirror and the index
        exists (``persistent_index``; the transaction then reads through it, the caller closes
        it), else with the mirror refreshed (and ``None``)."""
        with self.locks.hold(self.files.resource, timeout=timeout) as lease, self.mirror.mutex:
            index = self._transaction_index()
            if index is None:
                self.mirror.refresh()
            yield lease, index

    def _transaction_index(self) -> FileIndex | None:
        """The persisted index, when a transaction should read through it: a loaded mirror is
        already paid for (and answers faster), and an index is never built under the lock for a
        transaction (the first search builds it); a damaged one is rebuilt on opening."""
        # imported here: the index brings its tokenizer, which `knowledge list` never needs
        from swarmq.knowledge._ftsindex import FileIndex, sidecar_path

        path = self.files.knowledge
        if (
            not self.config.persistent_index
            or self.mirror.state is not None
            or not sidecar_path(path).exists()
        ):
            return None
        try:
            return FileIndex.open(path)
        except (OSError, sqlite3.Error) as exc:
            log.warning("knowledge index of %s unusable (%s); loading the store", path, exc)
            return None

    def append_entries(self, entries: builtins.list[Entry], lease: Lease) -> None:
        written = append_lines(self.files.knowledge, [e.line() for e in entries], lease=lease)
        if not self.mirror.adopt_append(entries, written):
            self.mirror.refresh()

    def rewrite_file(
        self,
        lease: Lease,
        *,
        replaced: Mapping[int, Entry] | None = None,
        removed: Mapping[int, str | None] | None = None,
        appended: Iterable[Entry] = (),
    ) -> None:
        """Write the mirror with the changes; ``removed`` maps slot → eviction reason (``None``
        when the caller has already stored the entry elsewhere, e.g. quarantine)."""
        replaced = dict(replaced or {})
        removed = dict(removed or {})
        appended = list(appended)
        at = self.now()
        evicted = [
            dumps_js(
                evicted_record(
                    self.files.knowledge,
                    JsonlLine(0, self.mirror.slots[slot].line(), self.mirror.slots[slot].data),
                    reason,
                    at,
                )
            )
            for slot, reason in removed.items()
            if reason is not None
        ]
        if evicted:
            append_lines(self.files.evicted, evicted, lease=lease)
        slots = self.mirror.slots
        if replaced or removed:
            parts = [
                replaced.get(slot, entry).raw_bytes()
                for slot, entry in slots.items()
                if slot not in removed
            ]
        else:
            parts = [entry.raw_bytes() for entry in slots.values()]
        parts.extend(e.raw_bytes() for e in appended)
        quarantine_corrupt(
            self.files.knowledge,
            self.mirror.all_corrupt(),
            lease=lease,
            corrupt_to=self.files.corrupt,
        )
        body = b"\n".join(parts) + b"\n" if parts else b""
        if starts_with_bom(self.files.knowledge):
            body = BOM + body  # kept as the file had it
        write_atomic(self.files.knowledge, body, lease=lease)
        self.mirror.adopt_rewrite(replaced, set(removed), appended, body)

    def trim(self, lease: Lease) -> int:
        """FIFO cap: keep the newest entries, recording the evicted ones."""
        cap = self.config.hive_max_entries if self.tier == "hive" else self.config.swarm_max_entries
        size = len(self.mirror)
        if cap is None or size <= cap * (1.0 + self.config.fifo_trim_slack):
            return 0
        oldest = list(self.mirror.slots)[: size - cap]
        self.rewrite_file(lease, removed=dict.fromkeys(oldest, "fifo_cap"))
        return len(oldest)

    def append_sidecar(
        self, path: Any, records: builtins.list[Any], cap: int | None, lease: Lease | None
    ) -> None:
        append_capped(
            path,
            records,
            cap=cap,
            at=self.now(),
            evicted_to=self.files.evicted,
            corrupt_to=self.files.corrupt,
            lease=lease,
        )
