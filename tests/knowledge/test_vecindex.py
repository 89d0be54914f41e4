"""Hybrid retrieval through the persisted index: a fresh process's search reads the entries'
vectors from the file kept with the index and answers as the whole-store hybrid search does;
vectors out of step, damaged or of another model are caught up or rebuilt, and an entry gone
from the file is never returned."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from swarmq.knowledge import _vecindex
from swarmq.knowledge._cosines import DenseCosines
from swarmq.knowledge._ftsindex import FileIndex
from swarmq.knowledge.config import DenseModel, Retrieval
from swarmq.knowledge.model import Tier
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, search
from swarmq.similarity.embedding import Vectors
from swarmq.similarity.static_embedder import StaticEmbedder, default_embedder
from tests.knowledge.test_ftsindex import QUERIES, lines, stores  # noqa: F401 (fixture)

HYBRID = {"retrieval": Retrieval.HYBRID, "dense_model": DenseModel.WORDLLAMA}
"""The index's mechanics on the static model, named: it embeds every entry on the query path
(a fast model), so a fresh search and the whole store's see the same vectors. The default model
where the ``minilm`` extra is installed fills them in the background instead
(tests/knowledge/test_dense_model.py, tests/knowledge/test_vector_fill.py)."""
MORE_QUERIES = [
    *QUERIES,
    # no word in common with the fixture's lessons: only the cosine can find these
    QueryContext(text="cap the bytes a peer may send over one socket frame"),
    QueryContext(text="keep secrets of the browser's private window storage"),
]

Answer = list[list[tuple[str, str, float, float | None]]]


def answers(knowledge: KnowledgeStore, limit: int = 8) -> Answer:
    return [
        [
            (r.entry.id, r.tier, round(r.score, 9), r.breakdown.get("cosine"))
            for r in search(knowledge, q, limit=limit)
        ]
        for q in MORE_QUERIES
    ]


def vector_files(knowledge: KnowledgeStore) -> list[Path]:
    index = knowledge.swarm.files.knowledge.with_name("knowledge.index.sqlite")
    return sorted(index.parent.glob(f"{index.name}.*.vec"))


def through_index(make: Callable[..., KnowledgeStore], **config: object) -> Answer:
    knowledge = make(**{**HYBRID, **config})
    found = answers(knowledge)
    assert knowledge.swarm.tier_file.mirror.state is None, "the store was loaded"
    assert knowledge.hive.tier_file.mirror.state is None, "the hive was loaded"
    assert len(vector_files(knowledge)) == 1, "an obsolete vector file was left behind"
    return found


def whole(make: Callable[..., KnowledgeStore], **config: object) -> Answer:
    return answers(make(**{**HYBRID, "persistent_index": False, **config}))


@pytest.mark.parametrize(
    "config",
    [{}, {"inject_min_relevance": 0.0}, {"hive_enabled": False}, {"scope_filter": ["repo"]}],
)
def test_a_fresh_hybrid_search_through_the_index_equals_the_whole_store_search(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    config: dict[str, object],
) -> None:
    indexed = through_index(stores, **config)
    assert indexed == whole(stores, **config)
    assert sum(1 for found in indexed if found) >= 6  # not a comparison of empty answers
    cosines = [c for found in indexed for *_, c in found if c is not None]
    assert len(cosines) >= 10, "the dense part took no part in the answers"


def test_a_task_only_the_cosine_finds_is_answered_through_the_index(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
) -> None:
    knowledge = stores(**HYBRID)
    task = QueryContext(text="cap the bytes a peer may send over one socket frame")
    found = search(knowledge, task, limit=3)
    assert knowledge.swarm.tier_file.mirror.state is None
    assert found and found[0].breakdown["relevance"] == 0.0
    assert found[0].breakdown["cosine"] >= knowledge.config.dense_floor
    assert "websockets" in found[0].entry.lesson


def _replace(path: Path, kept: Sequence[str]) -> None:
    temp = path.with_suffix(".tmp")
    temp.write_text("\n".join(kept) + "\n")
    os.replace(temp, path)


@pytest.mark.parametrize("change", ["appended", "rewritten", "halved", "counters"])
def test_vectors_follow_the_file(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    change: str,
) -> None:
    first = through_index(stores)
    swarm = stores().swarm.files.knowledge
    kept = swarm.read_text().splitlines()
    if change == "appended":
        with swarm.open("a") as handle:
            handle.write("\n".join(lines(20, Tier.SWARM, 9)) + "\n")
    elif change == "rewritten":
        _replace(
            swarm, [line.replace("Supabase", "Postgres").replace("pnpm", "yarn") for line in kept]
        )
    elif change == "halved":
        _replace(swarm, kept[::2])
    else:  # a recorded injection: counters change, texts do not (the rows are kept)
        rows = [json.loads(line) for line in kept]
        for row in rows:
            row["shown_count"] = int(row.get("shown_count", 0)) + 1
        _replace(swarm, [json.dumps(row, separators=(",", ":")) for row in rows])
    indexed = through_index(stores)
    assert indexed == whole(stores)
    ids = {json.loads(line)["id"] for line in swarm.read_text().splitlines()}
    swarm_ids = {i for found in indexed for i, tier, *_ in found if tier == "swarm"}
    assert swarm_ids <= ids
    if change != "counters":
        assert indexed != first
    with FileIndex.open(swarm, embedder=default_embedder()) as index:  # type: ignore[union-attr]
        vectors = index.vectors
        assert vectors is not None
        live = int((vectors.slot_of_row >= 0).sum())
        if change == "counters":  # same texts: no row was added
            assert vectors.rows == live
        assert live <= index.count()


def test_an_entry_removed_from_the_file_is_never_returned(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
) -> None:
    first = through_index(stores)
    swarm = stores().swarm.files.knowledge
    top = {found[0][0] for found in first if found and found[0][1] == "swarm"}
    assert top
    kept = [line for line in swarm.read_text().splitlines() if json.loads(line)["id"] not in top]
    _replace(swarm, kept)
    indexed = through_index(stores)
    assert not top & {i for found in indexed for i, *_ in found}
    assert indexed == whole(stores)


@pytest.mark.parametrize("damage", ["deleted", "truncated", "scribbled", "other model"])
def test_a_damaged_or_foreign_vector_file_is_rebuilt(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    damage: str,
) -> None:
    first = through_index(stores)
    (path,) = vector_files(stores())
    if damage == "deleted":
        path.unlink()
    elif damage == "truncated":
        os.truncate(path, path.stat().st_size - 100)
    elif damage == "scribbled":
        with path.open("r+b") as handle:
            handle.seek(-512, os.SEEK_END)
            handle.write(np.ones(128, dtype=np.float32).tobytes())
    else:
        knowledge = stores()
        with FileIndex.open(knowledge.swarm.files.knowledge, embedder=Renamed()):  # type: ignore[union-attr]
            pass
        assert vector_files(knowledge) != [path]
    assert through_index(stores) == first
    assert vector_files(stores()) != [path] or damage == "other model"


class Renamed:
    """The packaged model under another name: its vectors must not be taken for the real's."""

    def __init__(self) -> None:
        self.inner: StaticEmbedder = default_embedder()

    @property
    def name(self) -> str:
        return "another-model"

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self.inner.embed(texts)


def test_vectors_catch_up_after_a_lexical_reader_synced_the_index(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
) -> None:
    through_index(stores)
    swarm = stores().swarm.files.knowledge
    kept = swarm.read_text().splitlines()
    _replace(swarm, kept[::3] + lines(15, Tier.SWARM, 12))
    lexical = stores(retrieval=Retrieval.LEXICAL)
    search(lexical, QUERIES[0])  # the index follows the file; the vectors do not, yet
    assert lexical.swarm.tier_file.mirror.state is None
    assert through_index(stores) == whole(stores)


def test_dead_rows_are_compacted_away(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from swarmq.knowledge import _vecindex

    monkeypatch.setattr(_vecindex, "COMPACT_MIN_DEAD", 10)
    through_index(stores)
    swarm = stores().swarm.files.knowledge
    (before,) = vector_files(stores())
    kept = swarm.read_text().splitlines()
    _replace(swarm, [line.replace("For ", "With ") for line in kept])  # every text
    indexed = through_index(stores)
    (after,) = vector_files(stores())
    assert after != before
    assert indexed == whole(stores)
    with FileIndex.open(swarm, embedder=default_embedder()) as index:  # type: ignore[union-attr]
        vectors = index.vectors
        assert vectors is not None and vectors.rows == int((vectors.slot_of_row >= 0).sum())


def _search_fresh(root: str) -> Answer:
    from swarmq.storage.locking import LocalLocks
    from tests.knowledge.test_ftsindex import CONFIG

    knowledge = KnowledgeStore(
        Path(root) / "project" / ".swarm",
        locks=LocalLocks(Path(root) / "locks"),
        config=CONFIG.model_copy(update=HYBRID),
        data_dir=Path(root) / "data",
        project_name="proj",
    )
    found = answers(knowledge)
    assert knowledge.swarm.tier_file.mirror.state is None
    return found


def test_processes_building_and_catching_up_the_vectors_at_once_agree(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    tmp_path: Path,
) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    expected = whole(stores)
    context = multiprocessing.get_context("spawn")  # see test_ftsindex: no fork
    with ProcessPoolExecutor(4, mp_context=context) as pool:  # all find no index: all build
        assert list(pool.map(_search_fresh, [str(tmp_path)] * 4)) == [expected] * 4
        swarm = tmp_path / "project" / ".swarm" / "knowledge.jsonl"
        _replace(swarm, swarm.read_text().splitlines()[::2] + lines(10, Tier.SWARM, 14))
        rewritten = list(pool.map(_search_fresh, [str(tmp_path)] * 4))
    assert rewritten == [whole(stores)] * 4
    # Builders that lost the race to rename their index left their vector files behind; the
    # next catch-up removes those once they are old enough not to be a rebuild in progress.
    files = vector_files(stores())
    assert 1 <= len(files) <= 4
    for path in files:
        os.utime(path, (1, 1))
    with swarm.open("a") as handle:
        handle.write(lines(1, Tier.SWARM, 15)[0] + "\n")
    assert through_index(stores) == whole(stores)


@pytest.mark.parametrize("retrieval", [Retrieval.HYBRID, Retrieval.LEXICAL])
def test_skipping_the_near_duplicate_check_past_the_cut_changes_no_answer(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    retrieval: Retrieval,
) -> None:
    from swarmq.knowledge import query

    pruned = [answers(stores(retrieval=retrieval), limit) for limit in (1, 3, 8)]
    monkeypatch.setattr(query, "_outranked", lambda *_: False)
    checked = [answers(stores(retrieval=retrieval), limit) for limit in (1, 3, 8)]
    assert pruned == checked
    hive = [r for found in checked[2] for r in found if r[1] == "hive"]
    assert hive, "no hive result reached the answers: the check was never exercised"


# -- the compact scan: int8 codes, proven bounds, exact survivors -----------------------------


def _random_rows(rng: np.random.Generator, count: int, dim: int) -> Vectors:
    """Unit rows at float16 precision, some spiky (one large component: a coarse scale) and
    one all zeros (a text with no tokens)."""
    rows = rng.standard_normal((count, dim)).astype(np.float32)
    rows[::7, 0] *= 40.0
    rows[3] = 0.0
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    np.divide(rows, norms, out=rows, where=norms > 0)
    return rows.astype(np.float16).astype(np.float32)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_exact_cosine_lies_within_the_scan_bounds(tmp_path: Path, seed: int) -> None:
    from swarmq.knowledge import _vecindex

    rng = np.random.default_rng(seed)
    dim, count = 256, 5000
    rows = _random_rows(rng, count, dim)
    index = tmp_path / "knowledge.index.sqlite"
    _vecindex._write_rows(index, "t", 0, rows)
    vec = os.open(_vecindex.vectors_path(index, "t"), os.O_RDONLY)
    codes = os.open(_vecindex.codes_path(index, "t"), os.O_RDONLY)
    try:
        view = _vecindex.VectorView(vec, codes, count, dim, np.arange(count, dtype=np.int32))
        stored = np.frombuffer(
            _vecindex.codes_path(index, "t").read_bytes(), dtype=_vecindex._code_dtype(dim)
        )
        error = rows - stored["s"][:, None] * stored["c"].astype(np.float32)
        queries = [rng.standard_normal(dim).astype(np.float32) for _ in range(3)]
        # the worst case of the bound: a query along a row's own quantisation error
        queries += [error[i].copy() for i in (0, 7, 11)]
        for query in queries:
            query /= np.linalg.norm(query)
            approx, radius = _vecindex.scan(codes, count, dim, query)
            exact = view.exact(np.arange(count), query)
            assert exact.tobytes() == np.einsum("ij,j->i", rows, query).tobytes()
            gap = np.abs(exact.astype(np.float64) - approx.astype(np.float64))
            assert bool((gap <= radius).all()), float((gap - radius).max())
            assert float(np.median(radius)) < 0.02, "bounds too loose to prune anything"
    finally:
        os.close(vec)
        os.close(codes)


def test_wider_bounds_and_a_one_by_one_walk_change_no_answer(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Bounds are only ever used to skip work: bounds ten times wider (most hits straddle the
    dense floor, most rows survive the cut) and a walk of one candidate at a time give the
    whole-store answer, entry for entry and score for score."""
    from swarmq.knowledge import _vecindex, query

    scan = _vecindex.scan

    def loose(*args: object) -> tuple[Vectors, Vectors]:
        approx, radius = scan(*args)  # type: ignore[arg-type]
        return approx, radius * 10 + np.float32(0.05)

    expected = whole(stores)
    monkeypatch.setattr(_vecindex, "RESIDENT_BYTES", 0)  # every search scans
    monkeypatch.setattr(_vecindex, "scan", loose)
    monkeypatch.setattr(query, "WALK_BATCH", 1)
    assert through_index(stores) == expected
    for config in ({"inject_min_relevance": 0.0}, {"scope_filter": ["repo"]}):
        assert through_index(stores, **config) == whole(stores, **config)


def test_resident_rows_answer_as_the_scan_does(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process that keeps a file's rows widened answers its later searches with one product
    over them: the same entries, scores and cosines as the scan of the codes, rows appended
    since included."""
    from swarmq.knowledge import _vecindex

    used: list[int] = []
    resident_scores = _vecindex.VectorView.resident_scores

    def counted(self: _vecindex.VectorView, *args: object) -> object:
        used.append(self.rows)
        return resident_scores(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(_vecindex.VectorView, "resident_scores", counted)
    monkeypatch.setattr(_vecindex._answers, "budget", 0)  # each search computed
    for config in ({}, {"inject_min_relevance": 0.0}):
        used.clear()
        with monkeypatch.context() as scanning:
            scanning.setattr(_vecindex, "RESIDENT_BYTES", 0)
            scanned = through_index(stores, **config)
        assert not used
        assert through_index(stores, **config) == scanned
        assert used, "the resident rows were never searched"
    swarm = stores().swarm.files.knowledge
    with swarm.open("a") as handle:
        handle.write("\n".join(lines(20, Tier.SWARM, 9)) + "\n")
    grown = max(used)
    assert through_index(stores) == whole(stores)
    assert max(used) > grown, "the appended rows were not widened"


def test_codes_kept_in_memory_answer_as_the_mapped_scan_does(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process that keeps a file's code rows in memory (rows too many to keep widened) scans
    them there: the same entries, scores and cosines as the scan of the mapped file, rows
    appended since included."""
    from swarmq.knowledge import _vecindex

    held: list[int] = []
    scan = _vecindex.scan

    def counted(*args: object) -> tuple[Vectors, Vectors]:
        codes = args[4] if len(args) > 4 else None
        if codes is not None:
            held.append(len(codes))  # type: ignore[arg-type]
        return scan(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_vecindex, "RESIDENT_BYTES", 0)  # never widened: the codes are scanned
    monkeypatch.setattr(_vecindex, "scan", counted)
    monkeypatch.setattr(_vecindex._answers, "budget", 0)  # each search computed
    for config in ({}, {"inject_min_relevance": 0.0}):
        held.clear()
        with monkeypatch.context() as mapping:
            mapping.setattr(_vecindex, "RESIDENT_CODE_BYTES", 0)
            mapped = through_index(stores, **config)
        assert not held
        assert through_index(stores, **config) == mapped
        assert held, "the codes in memory were never scanned"
    swarm = stores().swarm.files.knowledge
    with swarm.open("a") as handle:
        handle.write("\n".join(lines(20, Tier.SWARM, 9)) + "\n")
    grown = max(held)
    assert through_index(stores) == whole(stores)
    assert max(held) > grown, "the appended code rows were not read"


def test_rows_widened_at_a_time_stay_below_blas_threading() -> None:
    """OpenBLAS splits a product of 460,800 values or more over its threads (30 times slower
    on a busy two-core machine): however wide the model's rows, a scan widens fewer at once."""
    from swarmq.knowledge import _vecindex

    for dim in (64, 256, 384, 768, 1024, 4096, 500_000):
        rows = _vecindex._sub_rows(dim)
        assert 1 <= rows <= _vecindex.SUB_ROWS
        assert rows == 1 or rows * dim <= _vecindex.SUB_VALUES < 460_800


def _as_format_1(knowledge: KnowledgeStore, exact: bool) -> Path:
    """Rewrite the swarm index's vectors as format 1 wrote them: float32 rows in the ``.vec``
    file, no codes, no format key (``exact``: the rows at float16 precision, as they were)."""
    import sqlite3
    import zlib

    from swarmq.knowledge import _vecindex

    index = knowledge.swarm.files.knowledge.with_name("knowledge.index.sqlite")
    db = sqlite3.connect(index, isolation_level=None)
    meta = dict(db.execute("SELECT key, value FROM meta"))
    name, rows = str(meta["vec_file"]), int(meta["vec_rows"])
    half = np.fromfile(_vecindex.vectors_path(index, name), dtype=np.float16)
    wide = half.astype(np.float32)
    if not exact:
        wide += np.float32(1e-6)
    old = _vecindex.vectors_path(index, "old-format")
    old.write_bytes(wide.tobytes())
    db.execute("DELETE FROM meta WHERE key IN ('vec_format', 'vec_qcrc')")
    width = 4 * int(meta["vec_dim"])
    db.executemany(
        "UPDATE meta SET value = ? WHERE key = ?",
        [("old-format", "vec_file"), (zlib.crc32(wide.tobytes()[(rows - 1) * width :]), "vec_crc")],
    )
    db.close()
    for path in (_vecindex.vectors_path(index, name), _vecindex.codes_path(index, name)):
        path.unlink()
    return old


@pytest.mark.parametrize("exact", [True, False])
def test_format_1_vectors_are_converted_or_rebuilt_never_misread(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    exact: bool,
) -> None:
    first = through_index(stores)
    old = _as_format_1(stores(), exact)
    assert through_index(stores) == first
    assert not old.exists()
    index = stores().swarm.files.knowledge.with_name("knowledge.index.sqlite")
    assert list(index.parent.glob(f"{index.name}.*.vq")), "no codes were written"


def test_damaged_static_scores_are_rebuilt(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
) -> None:
    first = through_index(stores)
    index = stores().swarm.files.knowledge.with_name("knowledge.index.sqlite")
    (statics,) = index.parent.glob(f"{index.name}.*.st")
    with statics.open("r+b") as handle:
        handle.seek(-8, os.SEEK_END)
        handle.write(np.float64(99.0).tobytes())
    assert through_index(stores) == first
    assert not statics.exists()


def test_rows_read_one_by_one_equal_rows_read_through_the_maps(tmp_path: Path) -> None:
    """:func:`_vecindex._gather` reads a few rows by ``pread`` and many through maps: the same
    bytes, in the order asked, repeats included."""
    width, count = 24, 5000
    data = np.random.default_rng(3).integers(0, 256, size=(count, width), dtype=np.uint8)
    path = tmp_path / "rows.bin"
    path.write_bytes(data.tobytes())
    rows = np.random.default_rng(4).integers(0, count, size=_vecindex.PREAD_ROWS + 500)
    fd = os.open(path, os.O_RDONLY)
    try:
        few = _vecindex._gather(fd, rows[: _vecindex.PREAD_ROWS], width)  # read per row
        many = _vecindex._gather(fd, rows, width)  # through the maps
        assert few.tobytes() == data[rows[: _vecindex.PREAD_ROWS]].tobytes()
        assert many.tobytes() == data[rows].tobytes()
        assert _vecindex._gather(fd, rows[:0], width).shape == (0, width)
        with pytest.raises(ValueError):
            _vecindex._gather(fd, np.asarray([count], dtype=np.int64), width)
    finally:
        os.close(fd)


def _opened_maps(swarm: Path) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[type-arg]
    with FileIndex.open(swarm, embedder=default_embedder()) as index:  # type: ignore[union-attr]
        vectors = index.vectors
        assert vectors is not None
        return vectors.row_for_slot, vectors.slot_of_row


def test_row_maps_are_kept_per_version_and_read_afresh_for_a_new_one(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
) -> None:
    """A process keeps the row maps of a version of the vectors: opened again, the same arrays
    (not read from SQLite again); after an append, the new version's, equal to what a fresh
    process reads; and a search with kept maps answers as the whole store does."""
    through_index(stores)
    swarm = stores().swarm.files.knowledge
    kept = _opened_maps(swarm)
    again = _opened_maps(swarm)
    assert again[0] is kept[0] and again[1] is kept[1]
    _vecindex.forget_maps()
    fresh = _opened_maps(swarm)
    assert fresh[0] is not kept[0]
    assert np.array_equal(fresh[0], kept[0]) and np.array_equal(fresh[1], kept[1])
    with swarm.open("a") as handle:
        handle.write("\n".join(lines(20, Tier.SWARM, 9)) + "\n")
    assert through_index(stores) == whole(stores)
    grown = _opened_maps(swarm)
    assert len(grown[1]) > len(fresh[1])
    _vecindex.forget_maps()
    afresh = _opened_maps(swarm)
    assert np.array_equal(grown[0], afresh[0]) and np.array_equal(grown[1], afresh[1])


@pytest.mark.parametrize("damage", ["truncated", "scribbled"])
def test_kept_row_maps_never_skip_the_checks_of_the_files(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    damage: str,
) -> None:
    """With a version's row maps kept, a vector file damaged since is still found out on the
    next open (the view is refused, then rebuilt): the maps spare the blobs, not the checks."""
    import sqlite3

    first = through_index(stores)
    knowledge = stores(**HYBRID)
    swarm = knowledge.swarm.files.knowledge
    _opened_maps(swarm)  # kept
    (path,) = vector_files(knowledge)
    if damage == "truncated":
        os.truncate(path, path.stat().st_size - 100)
    else:
        with path.open("r+b") as handle:
            handle.seek(-512, os.SEEK_END)
            handle.write(np.ones(128, dtype=np.float32).tobytes())
    index = swarm.with_name("knowledge.index.sqlite")
    db = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    try:
        db.execute("BEGIN")
        assert _vecindex.VectorView.open(db, index, default_embedder()) is None
    finally:
        db.close()
    assert through_index(stores) == first
    assert vector_files(stores()) != [path]


def test_many_rows_bounded_through_the_maps_equal_rows_read_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prefilter's thousands of candidates are read through maps, a few rows one by one:
    bit for bit the same approximate cosines and radii, in the order asked."""
    dim, count = 64, 20_000
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((count, dim)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    path = tmp_path / "rows.vq"
    path.write_bytes(_vecindex.quantise(rows))
    query = rows[3] + np.float32(0.1) * rng.standard_normal(dim).astype(np.float32)
    wanted = rng.choice(count, size=_vecindex.PREAD_ROWS + 1500, replace=False).astype(np.int64)
    fd = os.open(path, os.O_RDONLY)
    try:
        read: list[str] = []
        gather = _vecindex._gather

        def counted(fd: int, rows: np.ndarray, width: int, maps: bool = False) -> np.ndarray:  # type: ignore[type-arg]
            read.append("maps" if maps or len(rows) > _vecindex.PREAD_ROWS else "pread")
            return gather(fd, rows, width, maps)

        monkeypatch.setattr(_vecindex, "_gather", counted)
        mapped = _vecindex.scan_rows(fd, wanted, dim, query)
        assert set(read) == {"maps"}
        read.clear()
        monkeypatch.setattr(_vecindex, "PREAD_ROWS", 10 * len(wanted))
        one_by_one = _vecindex.scan_rows(fd, wanted, dim, query)
        assert set(read) == {"pread"}
    finally:
        os.close(fd)
    for got, expected in zip(mapped, one_by_one, strict=True):
        assert got.tobytes() == expected.tobytes()
    exact = rows[wanted] @ query
    assert np.all(np.abs(exact - mapped[0]) <= mapped[1])


def test_a_query_asked_again_of_the_same_version_is_answered_as_it_was(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A search asked again (a prompt's search, then its injection) takes the dense answer
    kept for that version, query and lexical hits: the same entries, scores and cosines as
    computing it, and computed again once the store changed."""
    computed: list[int] = []
    compute = _vecindex.VectorView._scores

    def counted(self: _vecindex.VectorView, *args: object) -> object:
        computed.append(self.rows)
        return compute(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(_vecindex.VectorView, "_scores", counted)
    monkeypatch.setattr(_vecindex._answers, "most", None)  # every query of the batch kept
    _vecindex.forget_maps()
    first = through_index(stores)
    assert computed
    computed.clear()
    assert through_index(stores) == first
    assert not computed, "a query asked again was computed again"
    _vecindex.forget_maps()
    assert through_index(stores) == first
    assert computed
    swarm = stores().swarm.files.knowledge
    with swarm.open("a") as handle:
        handle.write("\n".join(lines(20, Tier.SWARM, 9)) + "\n")
    computed.clear()
    grown = through_index(stores)
    assert computed, "another version's answer was taken"
    assert grown == whole(stores)
    computed.clear()
    assert through_index(stores) == grown
    assert not computed


def test_a_text_asked_again_next_is_answered_as_it_was_under_the_kept_answers_bound(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under the default bound (the last :data:`~swarmq.knowledge._vecindex.DENSE_ANSWERS`
    answers), a text asked again right after (a prompt's search, then its injection) is not
    computed again, and answers as computing it does; an early text of a long run of new ones
    is computed again, with the same answer."""
    computed: list[int] = []
    compute = _vecindex.VectorView._scores

    def counted(self: _vecindex.VectorView, *args: object) -> object:
        computed.append(self.rows)
        return compute(self, *args)  # type: ignore[arg-type]

    knowledge = stores(**HYBRID)
    _vecindex.forget_maps()
    fresh = {query.text: search(knowledge, query, limit=8) for query in MORE_QUERIES}
    _vecindex.forget_maps()
    monkeypatch.setattr(_vecindex.VectorView, "_scores", counted)
    for query in MORE_QUERIES:
        computed.clear()
        assert search(knowledge, query, limit=8) == fresh[query.text]
        assert computed
        computed.clear()
        assert search(knowledge, query, limit=8) == fresh[query.text]
        assert not computed, query.text
    texts = [QueryContext(text=f"{query.text} {n}") for n in range(9) for query in QUERIES[:1]]
    for query in texts:  # nine new texts, two tiers each: more than the bound keeps
        search(knowledge, query, limit=8)
    computed.clear()
    assert search(knowledge, MORE_QUERIES[0], limit=8) == fresh[MORE_QUERIES[0].text]
    assert computed


def test_a_kept_dense_answer_holds_its_hits_packed_and_compares_them(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A kept dense answer holds the lexical hits it was computed for as 8-byte integers, not
    a tuple of int objects (~40 bytes a hit: ~12 MB of a 1M server's 16 answers); asked again
    with the same hits it is not computed again, with other hits of the same count it is, and
    both answer as computing them does."""
    knowledge = stores(**HYBRID)
    _vecindex.forget_maps()
    fresh = {query.text: search(knowledge, query, limit=8) for query in MORE_QUERIES}
    _vecindex.forget_maps()
    kept = _vecindex._answers._answers
    computed: list[int] = []
    compute = _vecindex.VectorView._scores

    def counted(self: _vecindex.VectorView, *args: object) -> object:
        computed.append(self.rows)
        return compute(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(_vecindex.VectorView, "_scores", counted)
    packed = 0
    for query in MORE_QUERIES:
        before = set(kept)
        assert search(knowledge, query, limit=8) == fresh[query.text]
        for (hits, _, _), _ in kept.values():
            assert isinstance(hits, np.ndarray)
            assert hits.dtype == np.int64
            packed += len(hits)
        computed.clear()
        assert search(knowledge, query, limit=8) == fresh[query.text]
        assert not computed, f"the same hits were computed again: {query.text}"
        tampered = False
        for key, ((hits, exact, bounds), units) in list(kept.items()):
            if key in before:
                continue
            other = hits + 1  # same count, other slots
            kept[key] = ((other, exact, bounds), units)
            tampered |= len(hits) > 0
        assert search(knowledge, query, limit=8) == fresh[query.text]
        assert bool(computed) == tampered, f"an answer kept for other hits was used: {query.text}"
    assert packed, "no answer held a lexical hit"


def test_both_tiers_lexical_halves_are_read_before_either_dense_half(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The query embeds beside every tier's lexical reads: no tier's dense half (which waits
    for the vector) starts before both tiers' postings and trigger phrases are read."""
    knowledge = stores(**HYBRID)
    expected = answers(stores(**HYBRID))
    seen: list[tuple[str, int]] = []
    triggers, scores = FileIndex.triggers, _vecindex.VectorView.scores

    def read_triggers(self: FileIndex, *args: object) -> object:
        seen.append(("lexical", id(self)))
        return triggers(self, *args)  # type: ignore[arg-type]

    def dense(self: _vecindex.VectorView, *args: object) -> object:
        seen.append(("dense", id(self)))
        return scores(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(FileIndex, "triggers", read_triggers)
    monkeypatch.setattr(_vecindex.VectorView, "scores", dense)
    for query in MORE_QUERIES:
        seen.clear()
        search(knowledge, query, limit=8)
        kinds = [kind for kind, _ in seen]
        assert kinds == ["lexical", "lexical", "dense", "dense"], (query.text, kinds)
        assert len({who for kind, who in seen if kind == "lexical"}) == 2
    assert knowledge.swarm.tier_file.mirror.state is None
    assert answers(knowledge) == expected


def test_bounds_a_ranking_above_its_floor_never_reads_are_left_out_and_change_no_answer(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Above the relevance floor a ranking asks only for the bounds of hits that reach the
    dense floor, are relevant by their words, or are matched directives: with bounds ten times
    wider (many hits straddle the floor) and without (most lie below it), the answers equal the
    whole store's and those of every hit's bounds, entry for entry, and hits were left out."""
    from swarmq.knowledge import _vecindex

    scan, answered = _vecindex.scan, _vecindex.VectorView.answered
    given: list[tuple[int, int]] = []

    def loose(*args: object) -> tuple[Vectors, Vectors]:
        approx, radius = scan(*args)  # type: ignore[arg-type]
        return approx, radius * 10 + np.float32(0.05)

    def counted(self: _vecindex.VectorView, *args: object) -> DenseCosines:
        found = answered(self, *args)  # type: ignore[arg-type]
        hits = [slot for slot in args[2] if slot not in found.exact]  # type: ignore[attr-defined]
        given.append((len(hits), len(found.bounds)))
        return found

    def every_bound(self: _vecindex.VectorView, *args: object) -> DenseCosines:
        return answered(self, *args[:5])  # type: ignore[arg-type]

    monkeypatch.setattr(_vecindex, "RESIDENT_BYTES", 0)  # every search scans
    monkeypatch.setattr(_vecindex, "RESIDENT_CODE_BYTES", 0)
    monkeypatch.setattr(_vecindex._answers, "budget", 0)  # each search computed
    for wide in (False, True):
        with monkeypatch.context() as run:
            if wide:
                run.setattr(_vecindex, "scan", loose)
            for config in ({}, {"scope_filter": ["repo"]}, {"inject_min_relevance": 0.0}):
                expected = whole(stores, **config)
                with monkeypatch.context() as all_bounds:
                    all_bounds.setattr(_vecindex.VectorView, "answered", every_bound)
                    assert through_index(stores, **config) == expected, (wide, config)
                given.clear()
                run.setattr(_vecindex.VectorView, "answered", counted)
                assert through_index(stores, **config) == expected, (wide, config)
                run.setattr(_vecindex.VectorView, "answered", answered)
                left_out = sum(hits - kept for hits, kept in given)
                if config.get("inject_min_relevance") == 0.0:
                    assert left_out == 0, "every hit's bounds are read at a floor of 0"
                else:
                    assert left_out > 0, (wide, config, given)


def test_a_dense_answer_kept_for_some_hits_bounds_is_not_taken_for_others(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kept dense answers (:data:`~swarmq.knowledge._vecindex._answers`) are per wanted
    bounds too: the same query and hits asked for fewer bounds, then for all, then for one
    named hit, gets each time the bounds it asked for, equal to computing them afresh."""
    from swarmq.knowledge import _vecindex
    from swarmq.knowledge._cosines import Wanted

    monkeypatch.setattr(_vecindex, "RESIDENT_BYTES", 0)  # the scan's bounded answer
    monkeypatch.setattr(_vecindex, "RESIDENT_CODE_BYTES", 0)
    knowledge = stores(**HYBRID)
    embedder = knowledge.embedder
    assert embedder is not None
    query = embedder.embed(["a flaky test fails on the build server"])[0]
    _vecindex.forget_maps()
    index = FileIndex.open(knowledge.swarm.files.knowledge, embedder=embedder)
    assert index is not None and index.vectors is not None
    with index:
        view = index.vectors
        hits = list(range(0, 300, 3))
        every = view.scores(query, hits, 4)
        assert len(every.bounds) > 1
        one = next(iter(every.bounds))
        asks = [
            Wanted(2.0, frozenset()),
            None,
            Wanted(2.0, frozenset({one})),
            Wanted(-2.0, frozenset()),
        ]
        expected = [{}, every.bounds, {one: every.bounds[one]}, every.bounds]
        for wanted, bounds in zip(asks, expected, strict=True):
            fresh = view._scores(query, hits, 4, wanted)
            for _ in range(2):  # computed, then taken from the kept answers
                found = view.scores(query, hits, 4, wanted)
                assert found.bounds == bounds == fresh.bounds, wanted
                assert list(found.bounds) == list(fresh.bounds)
                assert found.exact == every.exact == fresh.exact


@pytest.mark.parametrize("held", ["codes", "widened"])
@pytest.mark.parametrize("mapped_by", ["prefilter", "code budget"])
def test_a_search_that_maps_one_tier_holds_no_other_tiers_rows(
    stores: Callable[..., KnowledgeStore],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    held: str,
    mapped_by: str,
) -> None:
    """Tiers as at 100k (every tier small enough to hold) are held after their second search;
    tiers as at 1M (the swarm's rows searched through the sign bits, or too many to hold) hold
    none, the copies held so far dropped, and the answers are those of the mapped scans."""
    from swarmq.knowledge import _vecindex

    monkeypatch.setattr(_vecindex._answers, "budget", 0)  # each search computed
    if held == "codes":
        monkeypatch.setattr(_vecindex, "RESIDENT_BYTES", 0)  # never widened: codes held
    table = _vecindex._RESIDENT_CODES if held == "codes" else _vecindex._RESIDENT
    _vecindex._forget_resident()
    small = through_index(stores)
    assert len(table) == 2, "the swarm's and the hive's rows were not both held"
    dim = stores(**HYBRID).embedder.dim  # type: ignore[union-attr]
    with monkeypatch.context() as large:
        if mapped_by == "prefilter":  # the swarm's 300 rows, not the hive's 80
            large.setattr(_vecindex, "PREFILTER_ROWS", 200)
        else:
            large.setattr(_vecindex, "RESIDENT_BYTES", 0)
            large.setattr(_vecindex, "RESIDENT_CODE_BYTES", 200 * (dim + 8))
        found = through_index(stores)
        assert not _vecindex._RESIDENT_CODES and not _vecindex._RESIDENT, "rows still held"
        assert through_index(stores) == found
        assert not _vecindex._RESIDENT_CODES and not _vecindex._RESIDENT, "rows held again"
        large.setattr(_vecindex, "RESIDENT_BYTES", 0)
        large.setattr(_vecindex, "RESIDENT_CODE_BYTES", 0)
        assert through_index(stores) == found  # every tier mapped: the same answers
    if mapped_by == "code budget":
        assert found == small
    assert through_index(stores) == small
    through_index(stores)
    assert len(table) == 2, "tiers as at 100k are no longer held"
