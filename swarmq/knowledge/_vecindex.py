"""Entry vectors kept with the persisted index, so hybrid retrieval never loads the store.

Hybrid retrieval scores the entries nearest the task by cosine, which needs every entry's
vector; the mirror's :class:`~swarmq.knowledge._dense.DenseIndex` holds them after loading the
store. A fresh process reads them from a flat float32 file beside the index instead
(``knowledge.index.sqlite.<name>.vec``, one row per vector) and takes the cosines block by
block through short-lived memory maps (a 100k-entry store is 100 MB of rows, a few ms to scan;
mapping a block at a time keeps the pages out of the process's resident set).

The SQLite index says which row is whose: a ``vectors`` table (row, slot, content key) and,
for the reader, one blob mapping each slot to its row (-1 unknown, -2 a template note with no
vector), both written in the same transaction as the metadata naming the file, its row count,
the model and the index generation the vectors match. A reader opens the vectors inside its
read transaction, so the map, the slots and the rows it scores are one version; rows are only
ever appended to a file (a rewritten line whose text is unchanged keeps its row), so no
writer changes a row a reader of an older version can see. When dead rows outnumber live ones
the live rows are copied to a new file under a new name.

The vectors follow the index, which follows the file: whenever the index's generation moved
(any sync, by any reader, lexical ones included) the next hybrid reader catches up — vectors
for the new slots (the texts the sync just parsed, or read back from the file), rows of gone
slots freed. A missing, short or damaged file, or another model's, is rebuilt. Vectors are
stored at the sidecars' float16 precision (:func:`~swarmq.knowledge._dense.at_sidecar_precision`)
so the answer is the whole-store path's.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import secrets
import sqlite3
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from swarmq.knowledge._dense import (
    EMBED_BATCH,
    at_sidecar_precision,
    candidate_cosines,
    vector_text,
)
from swarmq.knowledge.model import Entry
from swarmq.similarity.embedding import Embedder, Vectors, content_key

UNKNOWN = -1
NO_VECTOR = -2
BLOCK_ROWS = 8192
"""Rows per memory-mapped block of a scan (8 MB at 256 dimensions; a page-aligned offset for
any dimension)."""
COMPACT_MIN_DEAD = 4096
ORPHAN_AGE_S = 600
"""A vector file no index names is removed once this old (a rebuild may still be writing it)."""


def vectors_path(index: Path, name: str) -> Path:
    """The vector file ``name`` of the SQLite index at ``index``."""
    return index.with_name(f"{index.name}.{name}.vec")


def _meta(db: sqlite3.Connection) -> dict[str, object]:
    return dict(db.execute("SELECT key, value FROM meta WHERE key LIKE 'vec_%' OR key = 'gen'"))


def _file_ok(meta: dict[str, object], index: Path, embedder: Embedder) -> bool:
    """The vector file the metadata names exists, is long enough and ends as written."""
    name, rows = meta.get("vec_file"), meta.get("vec_rows")
    if meta.get("vec_model") != embedder.name or meta.get("vec_dim") != embedder.dim:
        return False
    if not isinstance(name, str) or not isinstance(rows, int):
        return False
    width = 4 * embedder.dim
    try:
        fd = os.open(vectors_path(index, name), os.O_RDONLY)
    except OSError:
        return False
    try:
        if os.fstat(fd).st_size < rows * width:
            return False
        last = os.pread(fd, width, (rows - 1) * width) if rows else b""
        return zlib.crc32(last) == meta.get("vec_crc")
    finally:
        os.close(fd)


class VectorView:
    """The vectors of one read transaction: rows by slot, and the file to scan."""

    def __init__(self, fd: int, rows: int, dim: int, row_for_slot: npt.NDArray[np.int32]) -> None:
        self.fd = fd
        self.rows = rows
        self.dim = dim
        self.row_for_slot = row_for_slot
        self.slot_of_row = np.full(rows, -1, dtype=np.int64)
        have = np.flatnonzero(row_for_slot >= 0)
        self.slot_of_row[row_for_slot[have]] = have

    @classmethod
    def open(cls, db: sqlite3.Connection, index: Path, embedder: Embedder) -> VectorView | None:
        """The vectors as of ``db``'s open read transaction, ``None`` when they are not in
        step with the index (or their file is missing or damaged): catch up first."""
        meta = _meta(db)
        if meta.get("vec_gen") != meta.get("gen") or not _file_ok(meta, index, embedder):
            return None
        row = db.execute("SELECT data FROM vecmap WHERE id = 0").fetchone()
        if row is None:
            return None
        try:
            fd = os.open(vectors_path(index, str(meta["vec_file"])), os.O_RDONLY)
        except FileNotFoundError:  # replaced by a compaction since the check: try again
            return None
        mapping = np.frombuffer(row[0], dtype=np.int32)
        return cls(fd, int(meta["vec_rows"]), embedder.dim, mapping)  # type: ignore[call-overload]

    def close(self) -> None:
        os.close(self.fd)

    def rows_of(self, slots: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The row of each slot, -1 for a slot with no vector."""
        inside = slots < len(self.row_for_slot)
        out = np.full(len(slots), -1, dtype=np.int64)
        out[inside] = self.row_for_slot[slots[inside]]
        out[out < 0] = -1
        return out

    def cosines(self, query: Vectors) -> Vectors:
        """Cosine of every row with ``query``; rows no slot of this version owns get ``-inf``."""
        return scan(self.fd, self.rows, self.dim, query, self.slot_of_row)

    def scores(self, query: Vectors, text: Iterable[int], take: int) -> dict[int, float]:
        """Hybrid retrieval's dense candidates (the mirror path's own selection)."""
        if not self.rows:
            return {}
        return candidate_cosines(self.cosines(query), self.slot_of_row, self.rows_of, text, take)


def scan(
    fd: int, rows: int, dim: int, query: Vectors, slot_of_row: npt.NDArray[np.int64]
) -> Vectors:
    """The dot product of each of the first ``rows`` rows of the file with ``query``, a block
    mapped at a time (the same per-row einsum the mirror's index runs, so equal cosines)."""
    out = np.empty(rows, dtype=np.float32)
    q = query.astype(np.float32, copy=False)
    width = 4 * dim
    for low in range(0, rows, BLOCK_ROWS):
        count = min(BLOCK_ROWS, rows - low)
        with mmap.mmap(fd, count * width, offset=low * width, access=mmap.ACCESS_READ) as block:
            matrix = np.frombuffer(block, dtype=np.float32).reshape(count, dim)
            np.einsum("ij,j->i", matrix, q, out=out[low : low + count])
            del matrix
    out[slot_of_row < 0] = -np.inf
    return out


def catch_up(
    db: sqlite3.Connection,
    index: Path,
    embedder: Embedder,
    known: dict[int, str | None],
    read: Callable[[Sequence[int]], dict[int, Entry]],
) -> list[Path]:
    """Bring the vectors in step with the index (inside ``db``'s write transaction): rows for
    the slots that have none (texts from ``known``, else ``read`` back from the file), rows of
    gone slots freed. Returns the files to remove once the transaction has committed."""
    meta = _meta(db)
    dim, width = embedder.dim, 4 * embedder.dim
    obsolete: list[Path] = []
    if meta.get("vec_gen") == meta.get("gen") and _file_ok(meta, index, embedder):
        return obsolete  # another process caught up while this one waited for the lock
    next_slot = int(db.execute("SELECT value FROM meta WHERE key = 'next_slot'").fetchone()[0])
    if _file_ok(meta, index, embedder):
        name, rows = str(meta["vec_file"]), int(meta["vec_rows"])  # type: ignore[call-overload]
        stored = db.execute("SELECT data FROM vecmap WHERE id = 0").fetchone()
        mapping = np.full(next_slot, UNKNOWN, dtype=np.int32)
        if stored is not None:
            old = np.frombuffer(stored[0], dtype=np.int32)[:next_slot]
            mapping[: len(old)] = old
    else:  # first use, another model, or a damaged file: every vector afresh
        if isinstance(meta.get("vec_file"), str):
            obsolete.append(vectors_path(index, str(meta["vec_file"])))
        db.execute("DELETE FROM vectors")
        name, rows = _new_name(), 0
        mapping = np.full(next_slot, UNKNOWN, dtype=np.int32)
    slots = np.fromiter((s for (s,) in db.execute("SELECT slot FROM entries")), dtype=np.int64)
    live = np.zeros(next_slot, dtype=bool)
    live[slots] = True
    gone = np.flatnonzero((mapping != UNKNOWN) & ~live)
    new = slots[mapping[slots] == UNKNOWN]
    freed_rows = mapping[gone][mapping[gone] >= 0].tolist()
    mapping[gone] = UNKNOWN
    pool: dict[bytes, list[int]] = {}
    for start in range(0, len(freed_rows), 900):
        chunk = freed_rows[start : start + 900]
        marks = ",".join("?" * len(chunk))
        for vrow, key in db.execute(
            f"SELECT vrow, vkey FROM vectors WHERE vrow IN ({marks})", chunk
        ):
            pool.setdefault(bytes(key), []).append(int(vrow))
    unread = sorted(int(s) for s in new if int(s) not in known)
    texts = dict(known)
    for start in range(0, len(unread), 2000):
        for slot, entry in read(unread[start : start + 2000]).items():
            texts[slot] = vector_text(entry)
    pending: list[tuple[int, bytes, str]] = []
    kept: list[tuple[int, int]] = []
    for slot in new.tolist():
        text = texts[slot]
        if text is None:
            mapping[slot] = NO_VECTOR
            continue
        key = content_key(text)
        reusable = pool.get(key)
        if reusable:  # the same text as a gone line's (a rewrite of counters): its row
            vrow = reusable.pop()
            kept.append((slot, vrow))
            mapping[slot] = vrow
        else:
            pending.append((slot, key, text))
    db.executemany("UPDATE vectors SET slot = ? WHERE vrow = ?", kept)
    dead = [vrow for rows_ in pool.values() for vrow in rows_]
    for start in range(0, len(dead), 900):
        chunk = dead[start : start + 900]
        db.execute(f"DELETE FROM vectors WHERE vrow IN ({','.join('?' * len(chunk))})", chunk)
    path = vectors_path(index, name)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        for low in range(0, len(pending), EMBED_BATCH):
            batch = pending[low : low + EMBED_BATCH]
            vectors = at_sidecar_precision(embedder.embed([text for _, _, text in batch]))
            os.pwrite(fd, np.ascontiguousarray(vectors, dtype=np.float32).tobytes(), rows * width)
            db.executemany(
                "INSERT OR REPLACE INTO vectors (vrow, slot, vkey) VALUES (?, ?, ?)",
                [(rows + i, slot, key) for i, (slot, key, _) in enumerate(batch)],
            )
            mapping[[slot for slot, _, _ in batch]] = np.arange(rows, rows + len(batch))
            rows += len(batch)
        used = int((mapping >= 0).sum())
        if rows - used >= max(COMPACT_MIN_DEAD, used):
            os.close(fd)
            fd = -1
            obsolete.append(path)
            name, rows, path = _compact(db, index, name, mapping, dim)
            fd = os.open(path, os.O_RDONLY)
        last = os.pread(fd, width, (rows - 1) * width) if rows else b""
    finally:
        if fd >= 0:
            os.close(fd)
    values = {
        "vec_model": embedder.name,
        "vec_dim": dim,
        "vec_file": name,
        "vec_rows": rows,
        "vec_crc": zlib.crc32(last),
        "vec_gen": meta.get("gen"),
    }
    db.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", values.items())
    db.execute("INSERT OR REPLACE INTO vecmap (id, data) VALUES (0, ?)", (mapping.tobytes(),))
    obsolete += _orphans(index, name)
    return obsolete


def _compact(
    db: sqlite3.Connection, index: Path, name: str, mapping: npt.NDArray[np.int32], dim: int
) -> tuple[str, int, Path]:
    """Copy the live rows, in row order, to a new file; renumber them in ``mapping`` and the
    ``vectors`` table. Returns the new file's name, its row count and path."""
    width = 4 * dim
    slots = np.flatnonzero(mapping >= 0)
    order = np.argsort(mapping[slots], kind="stable")
    slots = slots[order]
    old_rows = mapping[slots].astype(np.int64)
    fresh = _new_name()
    path = vectors_path(index, fresh)
    source = os.open(vectors_path(index, name), os.O_RDONLY)
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for low in range(0, len(old_rows), BLOCK_ROWS):
            chunk = old_rows[low : low + BLOCK_ROWS]
            data = b"".join(os.pread(source, width, int(r) * width) for r in chunk)
            os.pwrite(target, data, low * width)
    finally:
        os.close(source)
        os.close(target)
    keys = dict(db.execute("SELECT vrow, vkey FROM vectors"))
    db.execute("DELETE FROM vectors")
    db.executemany(
        "INSERT INTO vectors (vrow, slot, vkey) VALUES (?, ?, ?)",
        [
            (i, int(slot), keys[int(r)])
            for i, (slot, r) in enumerate(zip(slots, old_rows, strict=True))
        ],
    )
    mapping[slots] = np.arange(len(slots), dtype=np.int32)
    return fresh, len(slots), path


def _new_name() -> str:
    return f"{os.getpid()}-{secrets.token_hex(4)}"


def _orphans(index: Path, current: str) -> list[Path]:
    """Vector files of this index that no index names and no rebuild is still writing."""
    keep = vectors_path(index, current)
    limit = time.time() - ORPHAN_AGE_S
    out = []
    for path in index.parent.glob(f"{index.name}.*.vec"):
        with contextlib.suppress(OSError):
            if path != keep and path.stat().st_mtime < limit:
                out.append(path)
    return out
