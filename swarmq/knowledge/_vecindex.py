"""Entry vectors kept with the persisted index, so hybrid retrieval never loads the store.

Hybrid retrieval scores the entries nearest the task by cosine, which needs every entry's
vector; the mirror's :class:`~swarmq.knowledge._dense.DenseIndex` holds them after loading the
store. A fresh process reads them from files beside the index instead, one row per vector:

* ``knowledge.index.sqlite.<name>.vec``: the vectors as float16. They are held at the sidecars'
  float16 precision (:func:`~swarmq.knowledge._dense.at_sidecar_precision`) anyway, so this is
  exact, and half the bytes of float32.
* ``knowledge.index.sqlite.<name>.vq``: the same rows as int8 codes with a per-row scale and a
  bound on the row's quantisation error (``dim + 8`` bytes a row, a quarter of float32).

A query scans only the codes (the whole file, through short-lived memory maps so no page stays
in the process's resident set): ``scale * (codes . q)`` is each row's cosine within a radius
derived from the stored error bound (Cauchy-Schwarz: ``|q . (x - scale * codes)| <= |q| |x -
scale * codes|``) plus the float32 rounding of both dot products. Whatever survives the cut
below is then scored exactly, from its float16 row widened to float32, with the same per-row
einsum the mirror runs: the cosines, and so the answers, are the whole-store path's bit for
bit. At 1M rows this reads 264 MB per query instead of 1 GB of float32 and never widens the
float16 file except for a few hundred rows.

Why no row of the exact top ``k`` can be cut: let ``T`` be the ``k``-th largest lower bound
(approximate cosine minus radius). The ``k`` rows holding those lower bounds each have an exact
cosine ``>= T``, so the ``k``-th largest exact cosine is ``>= T``, so every row of the exact top
``k`` has exact cosine ``>= T`` and therefore upper bound (approximate plus radius) ``>= T``. The
survivors are exactly the rows whose upper bound reaches ``T``. The lexical hits' cosines are
handed over as their bounds (:class:`~swarmq.knowledge._cosines.DenseCosines`) and read exactly
only where the ranking needs their value (:func:`swarmq.knowledge.query.rank_tier`).

A view of at least :data:`PREFILTER_ROWS` rows is searched through a fourth file,
``knowledge.index.sqlite.<name>.sg``: one sign bit per dimension of each row (``np.packbits`` of
``x > 0``, padded to whole 64-bit words; 32 bytes a row at 256 dimensions, an eighth of the
codes). The query's bits are compared with every row's (XOR, then a popcount over the words),
the :func:`prefilter_candidates` rows of least Hamming distance are kept, and the ``take``
nearest among them found as the scan finds them among all rows (their codes' bounds, then the
survivors' float16 rows): 32 MB of sign bits and 8 MB of codes read at 1M rows instead of
264 MB of codes. The
sign distance estimates the angle between the vectors (random-hyperplane hashing), so the
``take`` nearest are found among the candidates most of the time, not always
(``bench/dense_prefilter.py`` measures how often); a smaller view keeps the exact scan, which
never misses one. The lexical hits' bounds come from their code rows alone. The file is derived
from the float16 file (rows appended as they are, the whole file again under a new name),
checked like the others (``vec_gfile``, ``vec_grows``, ``vec_gcrc``) and caught up when it is
missing, short or damaged; a candidate is a row the map says is live, so a damaged file can
only cost recall, never answer with an entry not in the store.

Beside the vectors, each slot's static score (float64, ``-inf`` inactive, NaN for a slot not in
the index) in ``knowledge.index.sqlite.<name>.st``: the ranking orders its candidates by their
best possible score without looking each one up in SQLite. A slot's line never changes (a changed
line gets a new slot), so the file is only appended to, for the slots allocated since.

The SQLite index says which row is whose: a ``vectors`` table (row, slot, content key) and,
for the reader, one blob mapping each slot to its row (-1 unknown, -2 a template note with no
vector), both written in the same transaction as the metadata naming the files, their format,
row count, the model and the index generation the vectors match. A reader opens the vectors
inside its read transaction, so the map, the slots and the rows it scores are one version; rows
are only ever appended to the files (a rewritten line whose text is unchanged keeps its row), so
no writer changes a row a reader of an older version can see. When dead rows outnumber live ones
the live rows are copied to new files under a new name.

The vectors follow the index, which follows the file: whenever the index's generation moved
(any sync, by any reader, lexical ones included) the next hybrid reader catches up — vectors
for the new slots (the texts the sync just parsed, or read back from the file), rows of gone
slots freed. A slow model (MiniLM) embeds at most a few entries there
(:func:`~swarmq.knowledge._dense.inline_limit`): the others keep no row (``vec_missing`` counts
them; the ranking scores them by their words) until a background catch-up
(:mod:`swarmq.knowledge.vectors`) fills them, a bounded batch per transaction. Missing, short or damaged files, or another model's, are rebuilt. Files of an older
format (``vec_format`` absent: float32 rows) are never read as this one: they are converted
once (their rows are exact float16 values) or, failing that, rebuilt.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import secrets
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from swarmq.knowledge._cosines import DenseCosines, Wanted
from swarmq.knowledge._dense import EMBED_BATCH, at_sidecar_precision, vector_text
from swarmq.knowledge._kept import Kept
from swarmq.knowledge.model import Entry
from swarmq.similarity.embedding import Embedder, Vectors, content_key

UNKNOWN = -1
NO_VECTOR = -2
FORMAT = 2
"""``vec_format`` of the files this module writes: float16 rows and int8 codes. Absent (format
1) meant float32 rows in the ``.vec`` file."""
BLOCK_ROWS = 8192
"""Rows of codes per memory-mapped block of a scan (2 MB at 256 dimensions)."""
SUB_ROWS = 1024
"""Code rows widened to float32 at a time inside a block (1.5 MB at 384 dimensions), fewer for
wider rows (:data:`SUB_VALUES`): half the Python steps of 512 rows, 6.5 instead of 7.8 ms of
CPU for the widening and products of 100k rows of 384 dimensions."""
SUB_VALUES = 393_216
"""At most this many values widened at a time. OpenBLAS splits a matrix-vector product of
460,800 values or more over its threads, and on a busy two-core machine that made the same
work 30 times slower (1,536 rows of 384 dimensions: 200 ms of CPU instead of 6.5)."""


def _sub_rows(dim: int) -> int:
    """The rows widened at a time for rows of ``dim`` values."""
    return max(1, min(SUB_ROWS, SUB_VALUES // dim))


SCAN_THREADS = min(2, os.cpu_count() or 1)
"""Threads a large scan is split over (its wall time halves on an idle two-core machine; its
CPU time does not change). Fewer than four blocks each are not split."""
COMPACT_MIN_DEAD = 4096
ORPHAN_AGE_S = 600
"""A vector file no index names is removed once this old (a rebuild may still be writing it)."""
_ROUND = 2.0**-23
"""Twice float32's unit roundoff: the rounding bounds below are taken with this margin."""
_POPULATE = getattr(mmap, "MAP_POPULATE", 0)
PREFILTER_ROWS = 524_288
"""Views with at least this many rows are searched through their sign bits (module docstring).
Below it the exact scan, which never misses a row, costs no more: at 300,000 rows both took
32 ms warm and about the same in a fresh process, at 1M the prefilter 0.58x
(``bench/dense_prefilter.py``, docs/BENCHMARKS.md)."""
PREFILTER_PER_TAKE = 64
PREFILTER_MIN = 16_384
PREFILTER_SHARE = 32
"""Rows the prefilter keeps: ``max(PREFILTER_MIN, PREFILTER_PER_TAKE * take, rows //
PREFILTER_SHARE)`` (recall@64 0.958 at 16,384 of 300,000 WordLlama rows, 0.777 at 4,096:
``bench/dense_prefilter.py``)."""
SIGN_BLOCK_ROWS = 65_536
"""Rows of sign bits per memory-mapped block (2 MB at 256 dimensions)."""
SIGN_SUB_ROWS = 8192
"""Rows of a block whose differing bits are counted at a time, in one buffer a thread keeps
(384 KB at 384 dimensions: in cache, where a block's 3 MB of counts was a new array each time):
at 1M rows of 384 dimensions 23-29 ms of CPU a query instead of 36-37."""
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()
RESIDENT_BYTES = 48 << 20
"""float32 rows a process keeps resident, over every vector file it searches (least recently
searched dropped first; a file larger than this is never kept): a resident process (hook
server, worker) asks the same stores again and again, and one product over widened rows
(0.7 ms at 10k rows of 384 dimensions) costs less than the scan of the codes, its radius
and the exact rows read back from the file (2-3 ms). 15 MB a tier at 10k MiniLM rows."""
RESIDENT_AFTER = 2
"""Searches of one vector file before its rows are kept: a fresh process that asks once (a
CLI call, a hook) scans the codes and never pays the widening of every row (~8 ms at 10k)."""
RESIDENT_CODE_BYTES = 64 << 20
"""Code rows a process keeps in memory, over every file too large to keep widened
(:data:`RESIDENT_BYTES`) and too small for the prefilter, searched :data:`RESIDENT_AFTER` times:
the same scan over the same bytes, without mapping them afresh on every query (at 100k MiniLM
rows, 39 MB of codes, the maps and their page faults were about 4 ms of a 14 ms scan). A file
larger than this is never kept (1M rows: 392 MB of codes; the prefilter reads 8 MB of them)."""


def _scan_pool() -> ThreadPoolExecutor:
    """The process's scan threads, started on the first large scan and kept: a fresh pool per
    query paid the threads' start on every search of a resident process."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(SCAN_THREADS, thread_name_prefix="vecscan")
        return _POOL


def _forget_pool() -> None:
    """In a forked child: the parent's threads do not exist there, so start new ones."""
    global _POOL, _POOL_LOCK
    _POOL, _POOL_LOCK = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)


def _in_parallel(work: Callable[[range], None], blocks: range) -> None:
    """``work`` over ``blocks``, split over the scan threads when there are enough of them
    (numpy releases the GIL while it widens, multiplies and counts)."""
    threads = min(SCAN_THREADS, len(blocks) // 4)
    if threads <= 1:
        work(blocks)
        return
    share = -(-len(blocks) // threads)
    pool = _scan_pool()
    futures = [pool.submit(work, blocks[i * share : (i + 1) * share]) for i in range(threads)]
    for done in futures:
        done.result()


class _Resident:
    """The widened rows of one vector file held so far (rows are only ever appended to a
    file of a given name, so the first ``rows`` never change)."""

    __slots__ = ("matrix", "rows", "searches")

    def __init__(self) -> None:
        self.matrix: Vectors = np.zeros((0, 0), dtype=np.float32)
        self.rows = 0
        self.searches = 0


RESIDENT_FILES = 64
"""Vector files whose searches a process counts (resident or not yet)."""
_RESIDENT: dict[tuple[str, str, int], _Resident] = {}
"""By (index, vector file name, dimension), least recently searched first."""
_RESIDENT_LOCK = threading.Lock()


def _renew_resident_lock() -> None:
    """In a forked child: a parent thread may have held the lock at the fork, and no thread of
    the child would ever release it (the copies it guards are the child's own, kept)."""
    global _RESIDENT_LOCK
    _RESIDENT_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_renew_resident_lock)


def _too_wide(rows: int, dim: int) -> bool:
    """Whether ``rows`` widened float32 rows are more than a process holds (:data:`RESIDENT_BYTES`)."""
    return 4 * rows * dim > RESIDENT_BYTES


def _too_many_codes(rows: int, dim: int) -> bool:
    """Whether ``rows`` code rows are more than a process holds (:data:`RESIDENT_CODE_BYTES`)."""
    return rows * (dim + 8) > RESIDENT_CODE_BYTES


def _resident(key: tuple[str, str, int] | None, fd: int, rows: int, dim: int) -> Vectors | None:
    """The first ``rows`` float16 rows of the vector file ``fd`` widened to float32, when
    this process keeps them (:data:`RESIDENT_BYTES`, :data:`RESIDENT_AFTER`); ``None`` to
    scan instead. Rows appended since they were last widened are read then."""
    if key is None or not rows or _too_wide(rows, dim):
        return None
    with _RESIDENT_LOCK:
        held = _searched(_RESIDENT, key, _Resident, rows)
        if held is None:
            return None
        if held.rows < rows:
            if len(held.matrix) < rows:
                room = _room(rows, RESIDENT_BYTES // (4 * dim))
                grown = np.empty((room, dim), dtype=np.float32)
                if held.rows:
                    grown[: held.rows] = held.matrix[: held.rows]
                held.matrix = grown
            width = 2 * dim
            half = os.pread(fd, (rows - held.rows) * width, held.rows * width)
            if len(half) != (rows - held.rows) * width:
                return None
            held.matrix[held.rows : rows] = np.frombuffer(half, np.float16).reshape(-1, dim)
            held.rows = rows
        _evict(_RESIDENT, RESIDENT_BYTES, lambda other: 4 * other.matrix.size)
        return held.matrix[:rows] if key in _RESIDENT else None


_Held = TypeVar("_Held", "_Resident", "HeldCodes")


def _searched(
    table: dict[tuple[str, str, int], _Held],
    key: tuple[str, str, int],
    fresh: Callable[[], _Held],
    rows: int,
) -> _Held | None:
    """``key``'s held copy in ``table`` (under :data:`_RESIDENT_LOCK`), counted as searched once
    more and moved last (most recently searched); ``None`` while it is not yet worth holding
    (:data:`RESIDENT_AFTER`) and holds fewer than ``rows``."""
    held = table.pop(key, None) or fresh()
    table[key] = held
    held.searches += 1
    return None if held.searches < RESIDENT_AFTER and held.rows < rows else held


def _evict(
    table: dict[tuple[str, str, int], _Held], budget: int, size: Callable[[_Held], int]
) -> None:
    """Drop the least recently searched copies beyond ``budget`` bytes or
    :data:`RESIDENT_FILES` files."""
    total = 0
    for position, other in enumerate(reversed(list(table))):
        total += size(table[other])
        if total > budget or position >= RESIDENT_FILES:
            del table[other]


def _room(rows: int, most: int) -> int:
    """Rows to allocate for ``rows``: an eighth more (at least 64) for the appends to come, within
    ``most`` and never fewer than ``rows``."""
    return max(rows, min(rows + max(64, rows // 8), most))


def _forget_resident() -> None:
    """Drop every resident copy (tests; a process that wants its memory back)."""
    with _RESIDENT_LOCK:
        _RESIDENT.clear()
        _RESIDENT_CODES.clear()


def _let_go(key: tuple[str, str, int] | None) -> None:
    """Drop the rows held for ``key``, widened or as codes (a search that no longer holds
    them: :meth:`VectorView.scores`); ``None``, the key of a view never kept."""
    if key is not None:
        with _RESIDENT_LOCK:
            _RESIDENT.pop(key, None)
            _RESIDENT_CODES.pop(key, None)


class HeldCodes:
    """The code rows of one code file read so far (appended to only, like the float16 file),
    each field in an array of its own: the codes ``(rows, dim)`` int8, the scales and the
    error bounds float32. The scan reads the scales and bounds of every row after its
    products; apart from the codes they are two contiguous 4-byte arrays rather than 8 bytes
    at a 392-byte stride (a cache line read again per row), the same values, so the same
    float32 operations give the same bits (~0.7 ms of CPU of a 100k MiniLM scan's ~8), and
    the same bytes held (the structured rows held no padding either)."""

    __slots__ = ("bounds", "codes", "rows", "scales", "searches")

    def __init__(self, dim: int) -> None:
        self.codes: npt.NDArray[np.int8] = np.zeros((0, dim), dtype=np.int8)
        self.scales: npt.NDArray[np.float32] = np.zeros(0, dtype=np.float32)
        self.bounds: npt.NDArray[np.float32] = np.zeros(0, dtype=np.float32)
        self.rows = 0
        self.searches = 0

    @property
    def nbytes(self) -> int:
        return self.codes.nbytes + self.scales.nbytes + self.bounds.nbytes

    def grow(self, room: int) -> None:
        """Room for ``room`` rows, the rows read so far kept (untouched rows cost no memory
        until written: :func:`numpy.zeros`)."""
        for name in ("codes", "scales", "bounds"):
            old = getattr(self, name)
            grown = np.zeros((room, *old.shape[1:]), dtype=old.dtype)
            grown[: self.rows] = old[: self.rows]
            setattr(self, name, grown)

    def put(self, low: int, read: Codes) -> None:
        """``read`` as the rows from ``low`` on (room already made: :meth:`grow`)."""
        high = low + len(read)
        self.codes[low:high] = read.codes
        self.scales[low:high] = read.scales
        self.bounds[low:high] = read.bounds

    def first(self, rows: int) -> Codes:
        """The first ``rows`` rows (views, not copies)."""
        return Codes(self.codes[:rows], self.scales[:rows], self.bounds[:rows])


class Codes:
    """Code rows as :func:`_scan_block` reads them: the codes, their scales and error bounds
    (views of a code file's mapped structured rows, or of :class:`HeldCodes`)."""

    __slots__ = ("bounds", "codes", "scales")

    def __init__(
        self,
        codes: npt.NDArray[np.int8],
        scales: npt.NDArray[np.float32],
        bounds: npt.NDArray[np.float32],
    ) -> None:
        self.codes, self.scales, self.bounds = codes, scales, bounds

    @classmethod
    def of(cls, table: npt.NDArray[np.void]) -> Codes:
        """The fields of structured code rows (:func:`_code_dtype`), as views."""
        return cls(table["c"], table["s"], table["b"])

    def part(self, low: int, high: int) -> Codes:
        return Codes(self.codes[low:high], self.scales[low:high], self.bounds[low:high])

    def __len__(self) -> int:
        return len(self.scales)


_RESIDENT_CODES: dict[tuple[str, str, int], HeldCodes] = {}
"""By (index, vector file name, dimension), least recently searched first (under
:data:`_RESIDENT_LOCK`)."""


def _resident_codes(key: tuple[str, str, int] | None, fd: int, rows: int, dim: int) -> Codes | None:
    """The first ``rows`` code rows of the code file ``fd`` in memory, when this process keeps
    them (:data:`RESIDENT_CODE_BYTES`, :data:`RESIDENT_AFTER`); ``None`` to map them instead.
    Rows appended since they were last read are read then."""
    width = dim + 8
    if key is None or not rows or _too_many_codes(rows, dim):
        return None
    with _RESIDENT_LOCK:
        held = _searched(_RESIDENT_CODES, key, lambda: HeldCodes(dim), rows)
        if held is None:
            return None
        if held.rows < rows:
            if len(held.scales) < rows:
                held.grow(_room(rows, RESIDENT_CODE_BYTES // width))
            added = os.pread(fd, (rows - held.rows) * width, held.rows * width)
            if len(added) != (rows - held.rows) * width:
                return None
            held.put(held.rows, Codes.of(np.frombuffer(added, dtype=_code_dtype(dim))))
            held.rows = rows
        _evict(_RESIDENT_CODES, RESIDENT_CODE_BYTES, lambda other: other.nbytes)
        return held.first(rows) if key in _RESIDENT_CODES else None


def _slots(text: Iterable[int]) -> npt.NDArray[np.int64]:
    """The lexical hits ``text`` as one int64 array, made once per search: the scan reads them
    so, and a kept dense answer holds them so (8 bytes a hit, where a tuple of them held 8 and
    an int object of 32 each: a 1M query has ~1,000-60,000 hits)."""
    if isinstance(text, np.ndarray) and text.dtype == np.int64:
        return text
    return np.fromiter(text, dtype=np.int64)


def vectors_path(index: Path, name: str) -> Path:
    """The float16 vector file ``name`` of the SQLite index at ``index``."""
    return index.with_name(f"{index.name}.{name}.vec")


def codes_path(index: Path, name: str) -> Path:
    """The int8 code file paired with :func:`vectors_path` ``name``."""
    return index.with_name(f"{index.name}.{name}.vq")


def signs_path(index: Path, name: str) -> Path:
    """The sign bits paired with :func:`vectors_path` ``name`` (the prefilter's file)."""
    return index.with_name(f"{index.name}.{name}.sg")


def sign_width(dim: int) -> int:
    """Bytes of one row of sign bits: ``dim`` bits padded to whole 64-bit words."""
    return 8 * -(-dim // 64)


def sign_bits(vectors: npt.NDArray[np.floating[Any]]) -> npt.NDArray[np.uint8]:
    """Rows of packed sign bits (``x > 0``) of ``vectors``, each :func:`sign_width` bytes."""
    x = np.asarray(vectors)
    out = np.zeros((len(x), sign_width(x.shape[1])), dtype=np.uint8)
    packed = np.packbits(x > 0, axis=1)
    out[:, : packed.shape[1]] = packed
    return out


def prefilter_candidates(take: int, rows: int) -> int:
    """Rows of ``rows`` the prefilter keeps to find the ``take`` nearest among."""
    return max(PREFILTER_MIN, PREFILTER_PER_TAKE * take, rows // PREFILTER_SHARE)


def statics_path(index: Path, name: str) -> Path:
    """The per-slot static scores ``name`` kept with the vectors (float64 by slot)."""
    return index.with_name(f"{index.name}.{name}.st")


def _code_dtype(dim: int) -> np.dtype[np.void]:
    """One row of the code file: the codes, the scale, the error bound (little-endian)."""
    return np.dtype([("c", np.int8, (dim,)), ("s", "<f4"), ("b", "<f4")])


def quantise(vectors: Vectors) -> bytes:
    """The code rows of ``vectors``: ``codes = rint(x / scale)`` with ``scale = max|x| / 127``,
    and ``bound >= |x - scale * codes|`` (computed in float64, rounded up to float32)."""
    x = np.ascontiguousarray(vectors, dtype=np.float32)
    dim = x.shape[1]
    scale = (np.abs(x).max(axis=1) / np.float32(127)).astype(np.float32)
    safe = np.where(scale > 0, scale, np.float32(1))
    codes = np.clip(np.rint(x / safe[:, None]), -127, 127).astype(np.int8)
    error = x.astype(np.float64) - scale.astype(np.float64)[:, None] * codes.astype(np.float64)
    norm = np.sqrt(np.einsum("ij,ij->i", error, error))
    bound = norm.astype(np.float32)
    bound = np.where(
        bound.astype(np.float64) < norm, np.nextafter(bound, np.float32(np.inf)), bound
    )
    rows = np.empty(len(x), dtype=_code_dtype(dim))
    rows["c"], rows["s"], rows["b"] = codes, scale, bound
    return rows.tobytes()


def _meta(db: sqlite3.Connection) -> dict[str, object]:
    query = "SELECT key, value FROM meta WHERE key LIKE 'vec_%' OR key IN ('gen', 'build')"
    return dict(db.execute(query))


def _tail_crc(path: Path, rows: int, width: int) -> int | None:
    """CRC-32 of the last row of a file of ``rows`` rows of ``width`` bytes; ``None`` when the
    file is missing or shorter."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        if os.fstat(fd).st_size < rows * width:
            return None
        return zlib.crc32(os.pread(fd, width, (rows - 1) * width) if rows else b"")
    finally:
        os.close(fd)


def _file_ok(meta: dict[str, object], index: Path, embedder: Embedder) -> bool:
    """The files the metadata names are of this format, exist, are long enough and end as
    written."""
    name, rows = meta.get("vec_file"), meta.get("vec_rows")
    if meta.get("vec_format") != FORMAT:
        return False
    if meta.get("vec_model") != embedder.name or meta.get("vec_dim") != embedder.dim:
        return False
    if not isinstance(name, str) or not isinstance(rows, int):
        return False
    dim = embedder.dim
    return _tail_crc(vectors_path(index, name), rows, 2 * dim) == meta.get("vec_crc") and (
        _tail_crc(codes_path(index, name), rows, dim + 8) == meta.get("vec_qcrc")
    )


def _statics_ok(meta: dict[str, object], index: Path) -> bool:
    """The per-slot static scores the metadata names exist, are long enough and end as
    written."""
    name, count = meta.get("vec_sfile"), meta.get("vec_sslots")
    if not isinstance(name, str) or not isinstance(count, int):
        return False
    return _tail_crc(statics_path(index, name), count, 8) == meta.get("vec_scrc")


def _signs_ok(meta: dict[str, object], index: Path, dim: int) -> bool:
    """The sign bits cover every row of the vector file the metadata names and end as
    written."""
    name, rows = meta.get("vec_file"), meta.get("vec_rows")
    if meta.get("vec_gfile") != name or meta.get("vec_grows") != rows or not isinstance(rows, int):
        return False
    crc = _tail_crc(signs_path(index, str(name)), rows, sign_width(dim))
    return crc == meta.get("vec_gcrc")


def _catch_up_signs(index: Path, meta: dict[str, object], name: str, rows: int, dim: int) -> int:
    """Sign bits for rows ``vec_grows`` on of the vector file ``name`` (every row when the
    file is another name's, missing or damaged), read from its float16 rows. Returns the
    CRC-32 of its last row."""
    start = meta.get("vec_grows")
    if (
        meta.get("vec_gfile") != name
        or not isinstance(start, int)
        or start > rows
        or _tail_crc(signs_path(index, name), start, sign_width(dim)) != meta.get("vec_gcrc")
    ):
        start = 0
    path = signs_path(index, name)
    # a file made afresh is written aside and renamed over the old one: a reader of an older
    # version may still have the old one mapped, and a map past a truncated end faults
    written = path if start else path.with_name(f"{path.name}.{_new_name()}.tmp")
    source = os.open(vectors_path(index, name), os.O_RDONLY)
    target = os.open(written, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        for low in range(start, rows, SIGN_BLOCK_ROWS):
            count = min(SIGN_BLOCK_ROWS, rows - low)
            half = np.frombuffer(os.pread(source, count * 2 * dim, low * 2 * dim), np.float16)
            os.pwrite(target, sign_bits(half.reshape(count, dim)).tobytes(), low * sign_width(dim))
    finally:
        os.close(source)
        os.close(target)
    if written != path:
        os.replace(written, path)
    return _tail_crc(path, rows, sign_width(dim)) or 0


def _old_file_ok(meta: dict[str, object], index: Path, embedder: Embedder) -> bool:
    """A format-1 file (float32 rows) in step with its metadata: convertible."""
    name, rows = meta.get("vec_file"), meta.get("vec_rows")
    if "vec_format" in meta or not isinstance(name, str) or not isinstance(rows, int):
        return False
    if meta.get("vec_model") != embedder.name or meta.get("vec_dim") != embedder.dim:
        return False
    return _tail_crc(vectors_path(index, name), rows, 4 * embedder.dim) == meta.get("vec_crc")


MAPS_BYTES = 64 << 20
"""Bytes of row maps (each slot's row and each row's slot) a process keeps, by version of the
vectors (:data:`_maps`): 8 MB at 1M rows."""
_Maps = tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int64]]
"""The row of each slot, the slot of each row, the rows no slot has (dead)."""
_maps: Kept[_Maps] = Kept(MAPS_BYTES)
"""The row maps of each version of the vectors a process has opened, by index and the vector
metadata read in the reader's transaction (every catch-up that changes a map writes new
metadata in the same transaction: new rows, a new generation or a new file name). Reading them
afresh was two blobs of 4 MB each from SQLite on every search of a 1M-row store; the files'
checks (:func:`_file_ok` and the others) still run on every open."""


def _read_maps(db: sqlite3.Connection, rows: int) -> _Maps | None:
    """The row of each slot, the slot of each of ``rows`` rows and the dead rows as ``db``'s
    transaction holds them; ``None`` when a map is missing or of another length."""
    mapped = db.execute("SELECT data FROM vecmap WHERE id = 0").fetchone()
    stored = db.execute("SELECT data FROM vecmap WHERE id = 1").fetchone()
    if mapped is None or stored is None or len(stored[0]) != 4 * rows:
        return None
    inverse = np.frombuffer(stored[0], dtype=np.int32)
    dead = np.flatnonzero(inverse < 0).astype(np.int64)
    return np.frombuffer(mapped[0], dtype=np.int32), inverse, dead


DENSE_ANSWER_SLOTS = 1 << 17
"""Slots of dense answers a process keeps (:data:`_answers`; ~170 bytes a slot: ~22 MB)."""
DENSE_ANSWERS = 16
"""Dense answers a process keeps, whatever their slots: the answers of the last few texts (one
per tier with vectors), which is what is asked again (a prompt's search, then its injection).
At 100k entries an answer holds ~1,300 slots, so the slot budget alone kept ~100 of them, ~22
MB of a resident server that is held to 300 MB, for texts seldom asked again after the next
one; at 1M an answer holds about ten times as many and the slot budget still decides."""
_answers: Kept[tuple[npt.NDArray[np.int64], dict[int, float], dict[int, tuple[float, float]]]] = (
    Kept(DENSE_ANSWER_SLOTS, DENSE_ANSWERS)
)
"""The dense answer of a query already asked of a version of the vectors (the exact cosines
of the nearest rows, the lexical hits' bounds, as computed, before any was resolved), by
version, query vector, ``take``, the number of lexical hits and which hits' bounds were
wanted (:class:`~swarmq.knowledge._cosines.Wanted`: since only those are kept, an answer holds
~70-230 slots at 100k and 1M under the synthetic vectors of ``bench/``, not ~1,000 and
~10,000); the hits themselves are kept with it, as the int64 array the scan reads
(:func:`_slots`: 16 answers of a 1M server held ~12 MB of them as tuples of int objects,
~2.4 MB so), and compared. The answer is a function of these alone, and a resident server is
asked the same text twice in a row (a prompt's search, then its injection): at 1M rows the
second skips the sign bits, the candidates' codes and the hits' codes (~65 ms of CPU)."""


def forget_maps() -> None:
    """Drop the row maps and dense answers this process keeps (tests that change an index
    behind its metadata's back, as a fresh process would find it)."""
    _maps.clear()
    _answers.clear()


class VectorView:
    """The vectors of one read transaction: rows by slot, and the files to scan."""

    def __init__(
        self,
        fd: int,
        codes_fd: int,
        rows: int,
        dim: int,
        row_for_slot: npt.NDArray[np.int32],
        statics_fd: int = -1,
        static_slots: int = 0,
        slot_of_row: npt.NDArray[np.int32] | None = None,
        signs_fd: int = -1,
        key: tuple[str, str, int] | None = None,
        dead: npt.NDArray[np.int64] | None = None,
        version: tuple[object, ...] | None = None,
    ) -> None:
        self.version = version
        """Names this version of the vectors for the process's kept answers (``None``: none
        kept)."""
        self.fd = fd
        self.key = key
        """Names the vector file for the process's resident copy (``None``: never kept)."""
        self.signs_fd = signs_fd
        """The sign bits (-1: none, every search scans the codes)."""
        self.codes_fd = codes_fd
        self.statics_fd = statics_fd
        self.static_slots = static_slots
        self.rows = rows
        self.dim = dim
        self.row_for_slot = row_for_slot
        self.slot_of_row = slot_of_row if slot_of_row is not None else _inverse(row_for_slot, rows)
        self.dead = dead if dead is not None else np.flatnonzero(self.slot_of_row < 0)
        """The rows no slot of this version has (indices: a few, where a mask is 1M values)."""
        self.missing = 0
        """Entries of this version with no vector yet (a background catch-up fills them)."""

    @classmethod
    def open(cls, db: sqlite3.Connection, index: Path, embedder: Embedder) -> VectorView | None:
        """The vectors as of ``db``'s open read transaction, ``None`` when they are not in
        step with the index (or their files are missing, damaged or of another format):
        catch up first."""
        meta = _meta(db)
        if (
            meta.get("vec_gen") != meta.get("gen")
            or not _file_ok(meta, index, embedder)
            or not _statics_ok(meta, index)
            or not _signs_ok(meta, index, embedder.dim)
        ):
            return None
        rows, slots = int(meta["vec_rows"]), int(meta["vec_sslots"])  # type: ignore[call-overload]
        version = (str(index), *sorted(meta.items()))
        maps = _maps.get(version)
        if maps is None:
            maps = _read_maps(db, rows)
            if maps is None:
                return None
            _maps.put(version, maps, sum(part.nbytes for part in maps))
        name = str(meta["vec_file"])
        opened: list[int] = []
        try:
            for path in (
                vectors_path(index, name),
                codes_path(index, name),
                statics_path(index, str(meta["vec_sfile"])),
                signs_path(index, name),
            ):
                opened.append(os.open(path, os.O_RDONLY))
        except FileNotFoundError:  # replaced by a compaction since the check: try again
            for fd in opened:
                os.close(fd)
            return None
        view = cls(
            opened[0],
            opened[1],
            rows,
            embedder.dim,
            maps[0],
            opened[2],
            slots,
            maps[1],
            opened[3],
            (str(index), name, embedder.dim),
            maps[2],
            version,
        )
        missing = meta.get("vec_missing")
        view.missing = missing if isinstance(missing, int) else 0
        return view

    @property
    def mapped(self) -> bool:
        """Whether every search of this view maps its files whatever the process holds: searched
        through the sign bits (:data:`PREFILTER_ROWS`), or too many rows to hold either widened
        (:data:`RESIDENT_BYTES`) or as codes (:data:`RESIDENT_CODE_BYTES`), or never kept (no
        key). A search that maps such a tier holds no other tier's rows (:meth:`scores`)."""
        if self.key is None or self.prefilters:
            return True
        return _too_wide(self.rows, self.dim) and _too_many_codes(self.rows, self.dim)

    @property
    def prefilters(self) -> bool:
        """Whether a search of this view goes through the sign bits (:data:`PREFILTER_ROWS`)."""
        return self.rows >= PREFILTER_ROWS and self.signs_fd >= 0

    def close(self) -> None:
        for fd in (self.fd, self.codes_fd, self.statics_fd, self.signs_fd):
            if fd >= 0:
                os.close(fd)

    def statics(self, slots: Sequence[int]) -> dict[int, float]:
        """The static score (``-inf`` inactive) of each of ``slots`` this copy holds, which
        is every slot of the index's version it was opened in."""
        wanted = np.asarray(slots, dtype=np.int64)
        wanted = wanted[(wanted >= 0) & (wanted < self.static_slots)]
        if self.statics_fd < 0 or not len(wanted):
            return {}
        with mmap.mmap(self.statics_fd, 8 * self.static_slots, access=mmap.ACCESS_READ) as data:
            table = np.frombuffer(data, dtype="<f8")
            values = table[wanted]
            del table
        known = ~np.isnan(values)
        return dict(zip(wanted[known].tolist(), values[known].tolist(), strict=True))

    def rows_of(self, slots: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The row of each slot, -1 for a slot with no vector."""
        inside = slots < len(self.row_for_slot)
        out = np.full(len(slots), -1, dtype=np.int64)
        out[inside] = self.row_for_slot[slots[inside]]
        out[out < 0] = -1
        return out

    def exact(self, rows: npt.NDArray[np.int64], query: Vectors) -> Vectors:
        """The cosine of ``rows`` with ``query`` from their float16 rows, widened, by the
        mirror's own per-row einsum (so equal to its cosines bit for bit)."""
        if not len(rows):
            return np.empty(0, dtype=np.float32)
        matrix = _gather(self.fd, rows, 2 * self.dim).view(np.float16)
        out: Vectors = np.einsum(
            "ij,j->i", matrix.astype(np.float32), query.astype(np.float32, copy=False)
        )
        return out

    def scores(
        self,
        query: Vectors,
        text: Iterable[int],
        take: int,
        wanted: Wanted | None = None,
        hold: bool = True,
    ) -> DenseCosines:
        """Hybrid retrieval's dense candidates, as the mirror's
        :func:`~swarmq.knowledge._dense.candidate_cosines` chooses them: the exact cosine of
        the ``take`` rows nearest the query; the lexical hits in ``text`` that have a vector
        within their bounds, made exact on demand (module docstring), only the ``wanted`` ones
        when given (:class:`~swarmq.knowledge._cosines.Wanted`); a query already asked of this
        version is answered as it was then (:data:`_answers`).

        ``hold=False`` (the search maps another tier: :attr:`mapped`): this view's rows are
        scanned through maps and not held, any copy held so far dropped. The held rows only
        save their maps' cost (~4 ms of a 14 ms scan of 100k MiniLM rows, 39 MB held), a few
        per cent of a search that also scans a mapped tier (a 1M tier: 100-300 ms), which
        would pay that memory on every server's peak for it; the answers are the same either
        way."""
        if self.version is None:
            return self._scores(query, text, take, wanted, hold)
        hits = _slots(text)
        key = (*self.version, query.tobytes(), str(query.dtype), take, len(hits), wanted)
        kept = _answers.get(key)
        if kept is not None and np.array_equal(kept[0], hits):
            return self._answer(dict(kept[1]), dict(kept[2]), query)
        found = self._scores(query, hits, take, wanted, hold)
        _answers.put(
            key, (hits, dict(found.exact), dict(found.bounds)), len(found.exact) + len(found.bounds)
        )
        return found

    def _answer(
        self, exact: dict[int, float], bounds: dict[int, tuple[float, float]], query: Vectors
    ) -> DenseCosines:
        """A dense answer whose bounded cosines this view makes exact on demand."""
        return DenseCosines(exact, bounds, reader=lambda slots: self.exact_of(slots, query))

    def _scores(
        self,
        query: Vectors,
        text: Iterable[int],
        take: int,
        wanted: Wanted | None = None,
        hold: bool = True,
    ) -> DenseCosines:
        """:meth:`scores` computed."""
        dead = self.dead
        if not self.rows or len(dead) == self.rows:
            return DenseCosines({})
        key = self.key
        if not hold:
            _let_go(key)
            key = None
        if self.prefilters:
            return self.prefiltered(query, text, take, dead, wanted)
        resident = _resident(key, self.fd, self.rows, self.dim)
        if resident is not None:
            return self.resident_scores(resident, query, text, take, dead)
        held = _resident_codes(key, self.codes_fd, self.rows, self.dim)
        approx, radius = scan(self.codes_fd, self.rows, self.dim, query, held)
        # one row-sized buffer, in place: lower bounds, partitioned, then upper bounds (a fresh
        # process pays a page fault per 4 KB of every new array, so few and small ones)
        bound = np.subtract(approx, radius)
        bound[dead] = -np.inf
        take = min(take, self.rows - len(dead))
        cut = kth_largest(bound, take)
        np.add(approx, radius, out=bound)
        bound[dead] = -np.inf
        survivors = np.flatnonzero(bound >= cut)
        return self.answered(
            survivors, query, text, take, lambda rows: (approx[rows], radius[rows]), wanted
        )

    def resident_scores(
        self,
        matrix: Vectors,
        query: Vectors,
        text: Iterable[int],
        take: int,
        dead: npt.NDArray[np.int64],
    ) -> DenseCosines:
        """:meth:`scores` over the resident rows: every row's exact cosine in one product,
        by the per-row einsum :meth:`exact` runs (equal bit for bit), so the lexical hits'
        cosines are exact from the start and nothing is read back from the files."""
        cosines: Vectors = np.einsum("ij,j->i", matrix, query.astype(np.float32, copy=False))
        cosines[dead] = -np.inf
        take = min(take, self.rows - len(dead))
        nearest = np.argpartition(-cosines, take - 1)[:take].tolist()
        found = cosines[nearest].tolist()
        exact = dict(zip(self.slot_of_row[nearest].tolist(), found, strict=True))
        slots = _slots(text)
        if len(slots):
            rows = self.rows_of(slots)
            have = rows >= 0
            exact.update(zip(slots[have].tolist(), cosines[rows[have]].tolist(), strict=True))
        return DenseCosines(exact)

    def prefiltered(
        self,
        query: Vectors,
        text: Iterable[int],
        take: int,
        dead: npt.NDArray[np.int64],
        wanted: Wanted | None = None,
    ) -> DenseCosines:
        """:meth:`scores` through the sign bits: the exact cosine of the ``take`` nearest of
        the rows of least Hamming distance to the query's signs, the lexical hits' bounds from
        their code rows (module docstring)."""
        distance = hamming(self.signs_fd, self.rows, self.dim, query)
        distance[dead] = np.iinfo(distance.dtype).max
        live = self.rows - len(dead)
        keep = min(prefilter_candidates(take, self.rows), live)
        if keep < self.rows:
            candidates = np.argpartition(distance, keep - 1)[:keep]
        else:
            candidates = np.arange(self.rows)
        del distance
        candidates = np.sort(candidates[self.slot_of_row[candidates] >= 0]).astype(np.int64)
        # the exact nearest among the candidates, as the scan finds them among all rows
        approx, radius = scan_rows(self.codes_fd, candidates, self.dim, query)
        take = min(take, len(candidates))
        lower = approx - radius
        cut = np.partition(lower, len(lower) - take)[len(lower) - take]
        survivors = candidates[approx + radius >= cut]
        return self.answered(
            survivors,
            query,
            text,
            take,
            lambda rows: scan_rows(self.codes_fd, rows, self.dim, query),
            wanted,
        )

    def answered(
        self,
        survivors: npt.NDArray[np.int64],
        query: Vectors,
        text: Iterable[int],
        take: int,
        bounds_of: Callable[
            [npt.NDArray[np.int64]], tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]
        ],
        wanted: Wanted | None = None,
    ) -> DenseCosines:
        """The answer of the scan and of the prefilter alike: the exact cosine of the ``take``
        nearest of the ``survivors`` (rows whose bounds reach the cut), and the lexical hits'
        bounds (``bounds_of`` their rows: approximate cosine, radius) made exact on demand;
        with ``wanted``, only the bounds of the hits it names or whose upper bound reaches its
        floor (compared as the ranking compares them: the float32 bound against the float64
        floor), in hit order as all would be."""
        exact = self.exact(survivors, query)
        nearest = np.argpartition(-exact, take - 1)[:take]
        out = DenseCosines(
            {int(self.slot_of_row[survivors[i]]): float(exact[i]) for i in nearest.tolist()},
            reader=lambda slots: self.exact_of(slots, query),
        )
        slots = _slots(text)
        if len(slots):
            rows = self.rows_of(slots)
            have = rows >= 0
            slots, rows = slots[have], rows[have]
            near, spread = bounds_of(rows)
            lower, upper = near - spread, near + spread
            if wanted is not None:
                pick = upper.astype(np.float64) >= wanted.floor
                if wanted.kept:
                    pick |= np.isin(slots, np.fromiter(wanted.kept, dtype=np.int64))
                slots, lower, upper = slots[pick], lower[pick], upper[pick]
            bounds = zip(lower.tolist(), upper.tolist(), strict=True)
            # the hits in hit order, then the few (at most ``take``) already exact taken out:
            # the same pairs in the same order as skipping them, without a test per hit
            out.bounds = dict(zip(slots.tolist(), bounds, strict=True))
            for slot in out.exact:
                out.bounds.pop(slot, None)
        return out

    def exact_of(self, slots: Sequence[int], query: Vectors) -> dict[int, float]:
        """The exact cosine of each of ``slots`` (each has a vector)."""
        rows = self.rows_of(np.asarray(slots, dtype=np.int64))
        return dict(zip(slots, self.exact(rows, query).tolist(), strict=True))


def scan(
    fd: int, rows: int, dim: int, query: Vectors, held: Codes | None = None
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Each of the first ``rows`` code rows' approximate cosine with ``query`` and the radius
    within which its exact cosine lies, a block of codes mapped at a time (or read from
    ``held``, the same rows kept in memory: :func:`_resident_codes`).

    The radius is the row's error bound times ``|q|`` (Cauchy-Schwarz), plus the float32
    rounding of the approximate dot product (at most ``dim * u * scale * 127 * |q|_1``, ``u``
    the unit roundoff, for any summation order) and of the exact one (at most ``dim * u *
    |x| |q|``, with ``|x| <= 1 + bound``), each taken with a factor 2 margin, plus ``2**-22``:
    more than the float32 rounding of the radius itself and of ``approx -/+ radius`` (half a
    unit in the last place of numbers below 2), so bounds taken in float32 still bound."""
    q = np.ascontiguousarray(query, dtype=np.float32)
    terms = _terms(q, dim)
    approx = np.empty(rows, dtype=np.float32)
    radius = np.empty(rows, dtype=np.float32)
    _in_parallel(
        lambda part: _scan_blocks(fd, part, rows, dim, q, terms, approx, radius, held),
        range(0, rows, BLOCK_ROWS),
    )
    return approx, radius


CUT_SAMPLE = 16
"""One row in this many is sampled by :func:`kth_largest` for its first floor."""


def kth_largest(values: npt.NDArray[np.float32], k: int) -> np.float32:
    """The ``k``-th largest of ``values`` (``1 <= k <= len(values)``), as
    ``np.partition(values, len(values) - k)[len(values) - k]`` finds it (NaN ordered above
    every number), ``values`` left as they are.

    The scan's cut (the ``take``-th largest lower bound of 100k rows) was such a partition of
    every row, ~0.6 ms of the search's one thread after the scan's two. The ``k``-th largest
    of a sample of the rows is at most the ``k``-th largest of all of them, so every value not
    below it holds the ``k`` largest: only those (about ``k`` times :data:`CUT_SAMPLE`) are
    partitioned, after one comparison of every row (~0.15 ms in all). ``~(values < floor)``
    keeps NaN, as the partition orders it."""
    sample = values[::CUT_SAMPLE]
    near = values
    if len(sample) >= k:
        floor = np.partition(sample, len(sample) - k)[len(sample) - k]
        near = values[~(values < floor)]
    found: np.float32 = np.partition(near, len(near) - k)[len(near) - k]
    return found


def _terms(q: Vectors, dim: int) -> tuple[float, float, float, float]:
    """The factors of :func:`scan`'s radius for the query ``q``."""
    wide = q.astype(np.float64)
    norm = float(np.sqrt(np.dot(wide, wide)))
    l1 = float(np.abs(wide).sum())
    slack = 2 * dim * _ROUND
    return (norm * (1 + 2 * slack), 127 * l1 * slack, norm * slack + 2.0**-22, slack)


def scan_rows(
    fd: int, rows: npt.NDArray[np.int64], dim: int, query: Vectors
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """:func:`scan`'s approximate cosine and radius for ``rows`` alone (any order), each
    block of codes holding one mapped only for the rows it holds (no page read ahead)."""
    q = np.ascontiguousarray(query, dtype=np.float32)
    by_bound, by_scale, flat, by_value = (np.float32(t) for t in _terms(q, dim))
    approx = np.empty(len(rows), dtype=np.float32)
    radius = np.empty(len(rows), dtype=np.float32)
    if not len(rows):
        return approx, radius
    # in sorted order, a few hundred rows at a time through one small buffer: a fresh process pays a
    # page fault per 4 KB of every new array, and widening all the rows at once made one of
    # 25 MB at 16,384 rows of 384 dimensions
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    near = np.empty(len(rows), dtype=np.float32)
    spread = np.empty(len(rows), dtype=np.float32)
    step = _sub_rows(dim)
    widened = np.empty((step, dim), dtype=np.float32)
    # the prefilter's tens of thousands of candidates: each step's rows through maps, however
    # few a step holds (a read per row costs more than a map's page faults once there are
    # thousands of rows in all; the steps, and so the products, are the same either way)
    maps = len(rows) > PREAD_ROWS
    for low in range(0, len(rows), step):
        part = ordered[low : low + step]
        picked = _gather(fd, part, dim + 8, maps).view(_code_dtype(dim))[:, 0]
        buffer = widened[: len(part)]
        np.copyto(buffer, picked["c"], casting="unsafe")
        out = near[low : low + len(part)]
        np.dot(buffer, q, out=out)
        scales = picked["s"].astype(np.float32)
        out *= scales
        bounds = spread[low : low + len(part)]
        np.multiply(picked["b"], by_bound, out=bounds)
        bounds += scales * by_scale
        bounds += flat
        bounds += np.abs(out) * by_value
    approx[order] = near
    radius[order] = spread
    return approx, radius


GATHER_WINDOW = 1 << 23
"""Bytes of a file mapped at a time by :func:`_gather`: the kernel maps a faulted page's cached
neighbours too (up to 64 KB), so scattered rows read through one map of a large file would
bring most of it into the resident set (+493 MB at 1M float16 rows for 10,000 rows); a window
bounds that, and costs a few microseconds a map."""


PREAD_ROWS = 2048
"""Up to this many rows :func:`_gather` reads with one ``pread`` each, straight into its
answer: no map to set up and tear down and no page fault per row, 3-5 times faster at the few
hundred rows whose exact cosines a query reads (100k MiniLM rows: 170 rows 0.19 ms against
1.0); from about 4,000 rows the maps are faster."""


def _gather(
    fd: int, rows: npt.NDArray[np.int64], width: int, maps: bool = False
) -> npt.NDArray[np.uint8]:
    """Rows ``rows`` (any order, ``width`` bytes each) of the file ``fd``, in that order: a
    read per row up to :data:`PREAD_ROWS` rows unless ``maps``, else through short-lived maps
    of at most :data:`GATHER_WINDOW` bytes (a few times faster than a read per row at
    thousands of rows)."""
    out = np.empty((len(rows), width), dtype=np.uint8)
    if not len(rows):
        return out
    if len(rows) <= PREAD_ROWS and not maps:
        buffer = out.data.cast("B")
        for position, row in enumerate(rows.tolist()):
            start = position * width
            if os.preadv(fd, [buffer[start : start + width]], row * width) != width:
                raise ValueError(f"row {row} is past the end of the file")
        return out
    window = max(1, GATHER_WINDOW // width)
    granularity = mmap.ALLOCATIONGRANULARITY
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    edges = np.flatnonzero(np.diff(ordered // window)) + 1
    for part in np.split(np.arange(len(ordered)), edges):
        wanted = ordered[part]
        low, high = int(wanted[0]), int(wanted[-1]) + 1
        start = low * width
        skip = start % granularity
        with mmap.mmap(
            fd, skip + (high - low) * width, prot=mmap.PROT_READ, offset=start - skip
        ) as block:
            table = np.frombuffer(block, dtype=np.uint8, count=(high - low) * width, offset=skip)
            out[order[part]] = table.reshape(high - low, width)[wanted - low]
            del table
    return out


def hamming(fd: int, rows: int, dim: int, query: Vectors) -> npt.NDArray[np.uint16]:
    """The Hamming distance between the query's sign bits and each of the first ``rows``
    rows of the sign file ``fd``, a block mapped at a time."""
    words = sign_width(dim) // 8
    bits = sign_bits(np.asarray(query, dtype=np.float32)[None, :]).view("<u8")[0]
    distance = np.empty(rows, dtype=np.uint16)
    granularity = mmap.ALLOCATIONGRANULARITY

    def work(blocks: range) -> None:
        differ = np.empty((SIGN_SUB_ROWS, words), dtype="<u8")
        for low in blocks:
            count = min(SIGN_BLOCK_ROWS, rows - low)
            start = low * 8 * words
            skip = start % granularity
            with mmap.mmap(
                fd,
                skip + count * 8 * words,
                flags=mmap.MAP_SHARED | _POPULATE,
                prot=mmap.PROT_READ,
                offset=start - skip,
            ) as block:
                table = np.frombuffer(block, dtype="<u8", count=count * words, offset=skip)
                table = table.reshape(count, words)
                for sub in range(0, count, SIGN_SUB_ROWS):
                    part = table[sub : sub + SIGN_SUB_ROWS]
                    counted = differ[: len(part)]
                    np.bitwise_xor(part, bits, out=counted)
                    np.bitwise_count(counted, out=counted)
                    # the words added one by one: a sum along an axis of four runs far slower
                    total = distance[low + sub : low + sub + len(part)]
                    np.copyto(total, counted[:, 0], casting="unsafe")
                    for word in range(1, words):
                        total += counted[:, word]
                del table, part

    _in_parallel(work, range(0, rows, SIGN_BLOCK_ROWS))
    return distance


def _scan_blocks(
    fd: int,
    blocks: range,
    rows: int,
    dim: int,
    q: Vectors,
    terms: tuple[float, float, float, float],
    approx: npt.NDArray[np.float32],
    radius: npt.NDArray[np.float32],
    held: Codes | None = None,
) -> None:
    """:func:`scan`'s work on the blocks starting at ``blocks`` (rows ``low`` on), each mapped
    from ``fd`` or taken from ``held``."""
    width = dim + 8
    rowtype = _code_dtype(dim)
    widened = np.empty((_sub_rows(dim), dim), dtype=np.float32)
    granularity = mmap.ALLOCATIONGRANULARITY
    for low in blocks:
        count = min(BLOCK_ROWS, rows - low)
        if held is not None:
            _scan_block(held.part(low, low + count), low, q, terms, widened, approx, radius)
            continue
        start = low * width
        skip = start % granularity
        with mmap.mmap(
            fd,
            skip + count * width,
            flags=mmap.MAP_SHARED | _POPULATE,
            prot=mmap.PROT_READ,
            offset=start - skip,
        ) as block:
            table = np.frombuffer(block, dtype=rowtype, count=count, offset=skip)
            _scan_block(Codes.of(table), low, q, terms, widened, approx, radius)
            del table


def _scan_block(
    table: Codes,
    low: int,
    q: Vectors,
    terms: tuple[float, float, float, float],
    widened: Vectors,
    approx: npt.NDArray[np.float32],
    radius: npt.NDArray[np.float32],
) -> None:
    """One block of code rows (rows ``low`` on): ``radius = bound * terms[0] + scale *
    terms[1] + terms[2] + terms[3] * |approx|``, the radius of :func:`scan` (``bound * norm *
    slack`` folded into ``terms[0]``)."""
    by_bound, by_scale, flat, by_value = (np.float32(t) for t in terms)
    count = len(table)
    codes = table.codes
    step = len(widened)
    for sub in range(0, count, step):
        part = codes[sub : sub + step]
        buffer = widened[: len(part)]
        np.copyto(buffer, part, casting="unsafe")
        at = low + sub
        np.dot(buffer, q, out=approx[at : at + len(part)])
    scales = table.scales
    near = approx[low : low + count]
    near *= scales
    spread = radius[low : low + count]
    np.multiply(table.bounds, by_bound, out=spread)
    spread += scales * by_scale
    spread += flat
    spread += np.abs(near) * by_value


def lookup(
    index: Path, embedder: Embedder, keys: set[bytes], seen: object = None
) -> tuple[dict[bytes, Vectors], object]:
    """The vectors the persisted index at ``index`` holds for the content ``keys`` (under
    ``embedder``; empty when it has none, is of another model or cannot be read), and the
    state of its vectors looked at: a store loaded whole takes the rows a background catch-up
    wrote instead of embedding again. With the ``seen`` state of an earlier look and no row
    added since (a rewrite reuses its rows), nothing is read."""
    if not keys:
        return {}, seen
    try:
        db = sqlite3.connect(f"file:{index}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return {}, seen
    try:
        db.execute("BEGIN")
        meta = _meta(db)
        state = (meta.get("vec_file"), meta.get("vec_rows"))
        if state == seen or not _file_ok(meta, index, embedder):
            return {}, state
        rows = {
            bytes(key): int(vrow)
            for vrow, key in db.execute("SELECT vrow, vkey FROM vectors")
            if bytes(key) in keys
        }
        if not rows:
            return {}, state
        width = 2 * embedder.dim
        fd = os.open(vectors_path(index, str(meta["vec_file"])), os.O_RDONLY)
        try:
            found = {
                key: np.frombuffer(os.pread(fd, width, row * width), dtype=np.float16).astype(
                    np.float32
                )
                for key, row in rows.items()
            }
        finally:
            os.close(fd)
        return found, state
    except (sqlite3.Error, OSError):
        return {}, seen
    finally:
        db.close()


def catch_up(
    db: sqlite3.Connection,
    index: Path,
    embedder: Embedder,
    known: dict[int, str | None],
    read: Callable[[Sequence[int]], dict[int, Entry]],
    limit: int | None = None,
    all_or_none: bool = False,
) -> list[Path]:
    """Bring the vectors in step with the index (inside ``db``'s write transaction): rows for
    the slots that have none (texts from ``known``, else ``read`` back from the file; at most
    ``limit`` of them embedded, or with ``all_or_none`` none when more need it, the rest left
    for a later catch-up), rows of gone slots freed. Returns the files to remove once the
    transaction has committed."""
    meta = _meta(db)
    dim = embedder.dim
    obsolete: list[Path] = []
    maps = dict(db.execute("SELECT id, length(data) FROM vecmap WHERE id IN (0, 1)"))
    if (
        not meta.get("vec_missing")
        and meta.get("vec_gen") == meta.get("gen")
        and _file_ok(meta, index, embedder)
        and _statics_ok(meta, index)
        and _signs_ok(meta, index, embedder.dim)
        and 0 in maps
        and maps.get(1) == 4 * meta.get("vec_rows", -1)  # type: ignore[operator]
    ):
        # another process caught up while this one waited for the lock (the conditions of
        # VectorView.open, so a reader never loops between the two)
        return obsolete
    next_slot = int(db.execute("SELECT value FROM meta WHERE key = 'next_slot'").fetchone()[0])
    converted = _old_file_ok(meta, index, embedder) and _convert(meta, index, dim)
    if converted:
        obsolete.append(vectors_path(index, str(meta["vec_file"])))
        meta = {**meta, **converted}
    if converted or _file_ok(meta, index, embedder):
        name, rows = str(meta["vec_file"]), int(meta["vec_rows"])  # type: ignore[call-overload]
        stored = db.execute("SELECT data FROM vecmap WHERE id = 0").fetchone()
        mapping = np.full(next_slot, UNKNOWN, dtype=np.int32)
        if stored is not None:
            old = np.frombuffer(stored[0], dtype=np.int32)[:next_slot]
            mapping[: len(old)] = old
    else:  # first use, another model, or a damaged file: every vector afresh
        if isinstance(meta.get("vec_file"), str):
            obsolete.append(vectors_path(index, str(meta["vec_file"])))
            obsolete.append(codes_path(index, str(meta["vec_file"])))
            obsolete.append(signs_path(index, str(meta["vec_file"])))
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
    texts = dict(known)
    pending: list[tuple[int, bytes, str]] = []
    kept: list[tuple[int, int]] = []
    waiting = 0
    """New slots left without a row (beyond ``limit``): ``vec_missing``."""
    order = new.tolist()
    for at, slot in enumerate(order):
        if limit is not None and len(pending) >= limit:
            waiting = len(order) - at
            break
        if slot not in texts:  # read back in chunks, only as far as the walk goes
            unread = [s for s in order[at : at + 2000] if s not in texts]
            for read_slot, entry in read(unread).items():
                texts[read_slot] = vector_text(entry)
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
    if waiting and all_or_none:  # a backlog: none embedded here, all left to the fill
        waiting += len(pending)
        pending = []
    db.executemany("UPDATE vectors SET slot = ? WHERE vrow = ?", kept)
    dead = [vrow for rows_ in pool.values() for vrow in rows_]
    for start in range(0, len(dead), 900):
        chunk = dead[start : start + 900]
        db.execute(f"DELETE FROM vectors WHERE vrow IN ({','.join('?' * len(chunk))})", chunk)
    for low in range(0, len(pending), EMBED_BATCH):
        batch = pending[low : low + EMBED_BATCH]
        vectors = at_sidecar_precision(embedder.embed([text for _, _, text in batch]))
        _write_rows(index, name, rows, vectors)
        db.executemany(
            "INSERT OR REPLACE INTO vectors (vrow, slot, vkey) VALUES (?, ?, ?)",
            [(rows + i, slot, key) for i, (slot, key, _) in enumerate(batch)],
        )
        mapping[[slot for slot, _, _ in batch]] = np.arange(rows, rows + len(batch))
        rows += len(batch)
    if not rows:  # the files exist even when empty (the check reads their tails)
        _write_rows(index, name, 0, np.zeros((0, dim), dtype=np.float32))
    used = int((mapping >= 0).sum())
    if rows - used >= max(COMPACT_MIN_DEAD, used):
        obsolete += [vectors_path(index, name), codes_path(index, name), signs_path(index, name)]
        name, rows = _compact(db, index, name, mapping, dim)
    statics, static_slots = _catch_up_statics(db, index, meta, next_slot, obsolete)
    values = {
        "vec_sfile": statics,
        "vec_sslots": static_slots,
        "vec_scrc": _tail_crc(statics_path(index, statics), static_slots, 8),
        "vec_format": FORMAT,
        "vec_model": embedder.name,
        "vec_dim": dim,
        "vec_file": name,
        "vec_rows": rows,
        "vec_crc": _tail_crc(vectors_path(index, name), rows, 2 * dim),
        "vec_qcrc": _tail_crc(codes_path(index, name), rows, dim + 8),
        "vec_gen": meta.get("gen"),
        "vec_missing": waiting,
        "vec_gfile": name,
        "vec_grows": rows,
        "vec_gcrc": _catch_up_signs(index, meta, name, rows, dim),
    }
    db.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", values.items())
    db.execute("INSERT OR REPLACE INTO vecmap (id, data) VALUES (0, ?)", (mapping.tobytes(),))
    # the slot of each row too: a reader would otherwise invert the map on every open
    inverse = _inverse(mapping, rows).tobytes()
    db.execute("INSERT OR REPLACE INTO vecmap (id, data) VALUES (1, ?)", (inverse,))
    obsolete += _orphans(index, {name, statics})
    return obsolete


def _catch_up_statics(
    db: sqlite3.Connection,
    index: Path,
    meta: dict[str, object],
    next_slot: int,
    obsolete: list[Path],
) -> tuple[str, int]:
    """Bring the per-slot static scores up to ``next_slot``: the slots allocated since they
    were last written (a slot's line never changes: a changed line gets a new slot), or every
    slot when the file is missing or damaged. Slots not in the index read NaN. Returns the
    file's name and slot count."""
    name, start = meta.get("vec_sfile"), meta.get("vec_sslots")
    if not _statics_ok(meta, index) or not isinstance(start, int) or start > next_slot:
        if isinstance(name, str):
            obsolete.append(statics_path(index, name))
        name, start = _new_name(), 0
    assert isinstance(name, str)
    values = np.full(next_slot - start, np.nan, dtype="<f8")
    for slot, static, active in db.execute(
        "SELECT slot, static, active FROM entries WHERE slot >= ?", (start,)
    ):
        values[slot - start] = float(static) if active else -np.inf
    fd = os.open(statics_path(index, name), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, values.tobytes(), 8 * start)
    finally:
        os.close(fd)
    return name, next_slot


def _inverse(row_for_slot: npt.NDArray[np.int32], rows: int) -> npt.NDArray[np.int32]:
    """The slot of each of ``rows`` rows (-1 none) from the row of each slot."""
    out = np.full(rows, -1, dtype=np.int32)
    have = np.flatnonzero(row_for_slot >= 0)
    out[row_for_slot[have]] = have
    return out


def _write_rows(index: Path, name: str, row: int, vectors: Vectors) -> None:
    """Write ``vectors`` (at float16 precision) at ``row`` of both files of ``name``."""
    dim = vectors.shape[1]
    for path, data, width in (
        (vectors_path(index, name), vectors.astype(np.float16).tobytes(), 2 * dim),
        (codes_path(index, name), quantise(vectors), dim + 8),
    ):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            os.pwrite(fd, data, row * width)
        finally:
            os.close(fd)


def _convert(meta: dict[str, object], index: Path, dim: int) -> dict[str, object]:
    """Format-1 rows (float32) rewritten as this format's two files under a new name, row
    for row; the metadata keys to take, ``{}`` when a row is not an exact float16 value (the
    vectors are then rebuilt)."""
    old, rows = str(meta["vec_file"]), int(meta["vec_rows"])  # type: ignore[call-overload]
    fresh = _new_name()
    width = 4 * dim
    source = os.open(vectors_path(index, old), os.O_RDONLY)
    try:
        for low in range(0, rows, BLOCK_ROWS):
            count = min(BLOCK_ROWS, rows - low)
            wide = np.frombuffer(os.pread(source, count * width, low * width), dtype=np.float32)
            vectors = wide.reshape(count, dim)
            if not np.array_equal(at_sidecar_precision(vectors), vectors):
                for path in (vectors_path(index, fresh), codes_path(index, fresh)):
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
                return {}
            _write_rows(index, fresh, low, vectors)
    finally:
        os.close(source)
    if not rows:
        _write_rows(index, fresh, 0, np.zeros((0, dim), dtype=np.float32))
    return {"vec_file": fresh, "vec_rows": rows}


def _compact(
    db: sqlite3.Connection, index: Path, name: str, mapping: npt.NDArray[np.int32], dim: int
) -> tuple[str, int]:
    """Copy the live rows, in row order, to new files; renumber them in ``mapping`` and the
    ``vectors`` table. Returns the new name and row count."""
    slots = np.flatnonzero(mapping >= 0)
    order = np.argsort(mapping[slots], kind="stable")
    slots = slots[order]
    old_rows = mapping[slots].astype(np.int64)
    fresh = _new_name()
    for make, width in ((vectors_path, 2 * dim), (codes_path, dim + 8)):
        source = os.open(make(index, name), os.O_RDONLY)
        target = os.open(make(index, fresh), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
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
    return fresh, len(slots)


def _new_name() -> str:
    return f"{os.getpid()}-{secrets.token_hex(4)}"


def _orphans(index: Path, current: set[str]) -> list[Path]:
    """Vector files of this index that no index names and no rebuild is still writing."""
    keep = {
        make(index, name) for name in current for make in (vectors_path, codes_path, signs_path)
    }
    keep |= {statics_path(index, name) for name in current}
    limit = time.time() - ORPHAN_AGE_S
    out = []
    for suffix in ("vec", "vq", "st", "sg"):
        pattern = f"{index.name}.*.{suffix}"
        for path in index.parent.glob(pattern):
            with contextlib.suppress(OSError):
                if path not in keep and path.stat().st_mtime < limit:
                    out.append(path)
    return out
