"""The sign-bit prefilter of large vector views (``swarmq.knowledge._vecindex``): how often it
finds the exact 64 nearest rows (recall@64 against the exact scan) and what a query costs
through it and through the exact scan of the int8 codes, in the same run, query by query.

Two sets of vectors, each written as the persisted index writes them (float16 rows, int8 codes,
sign bits): ``real``, the default model's (WordLlama) vectors of ``bench.lesson_corpus`` lessons,
queried with task-like texts (two other lessons joined, as ``bench.knowledge_index`` asks);
``random``, unit Gaussian rows queried with random unit vectors (no structure: the prefilter's
worst case). Each query also hands over ``--hits`` random rows as lexical hits (their bounds are
part of a search's cost). Timings are warm (files in the page cache), in-process, one query at a
time, the two paths alternating.

    python -m bench.dense_prefilter [--real 300000] [--random 1000000] [--queries 25]
                                    [--hits 10000] [--cache DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import save, table
from bench.lesson_corpus import LessonGenerator
from swarmq.knowledge import _vecindex
from swarmq.similarity.static_embedder import default_embedder

TAKE = 64


def real_vectors(count: int, queries: int, cache: Path | None) -> tuple[Any, Any]:
    """The default model's vectors of ``count`` corpus lessons and of ``queries`` tasks."""
    file = None if cache is None else cache / f"dense_prefilter_real_{count}_{queries}.npz"
    if file is not None and file.exists():
        with np.load(file) as data:
            return data["rows"], data["queries"]
    embedder = default_embedder()
    lessons = LessonGenerator(seed=9).corpus(count).lessons
    rows = np.concatenate(
        [embedder.embed(lessons[i : i + 20_000]) for i in range(0, count, 20_000)]
    )
    rng = random.Random(5)
    others = LessonGenerator(seed=11).corpus(400).lessons
    tasks = embedder.embed([" ".join(rng.sample(others, 2)) for _ in range(queries)])
    if file is not None:
        file.parent.mkdir(parents=True, exist_ok=True)
        np.savez(file, rows=rows, queries=tasks)
    return rows, tasks


def random_vectors(count: int, queries: int, dim: int) -> tuple[Any, Any]:
    rng = np.random.default_rng(7)
    rows = np.empty((count, dim), dtype=np.float32)
    for low in range(0, count, 100_000):
        part = rng.standard_normal((min(100_000, count - low), dim)).astype(np.float32)
        rows[low : low + len(part)] = part / np.linalg.norm(part, axis=1, keepdims=True)
    tasks = rng.standard_normal((queries, dim)).astype(np.float32)
    return rows, tasks / np.linalg.norm(tasks, axis=1, keepdims=True)


def measure(label: str, rows: Any, tasks: Any, hits: int, directory: Path) -> dict[str, Any]:
    count, dim = rows.shape
    index = directory / f"{label}.index.sqlite"
    started = time.perf_counter()
    for low in range(0, count - 1, 65_536):
        _vecindex._write_rows(index, "b", low, rows[low : min(low + 65_536, count - 1)])
    written = time.perf_counter() - started
    started = time.perf_counter()
    crc = _vecindex._catch_up_signs(index, {}, "b", count - 1, dim)
    signed = time.perf_counter() - started
    # a writer's share: one row appended (its float16 row and codes, then its sign bits)
    started = time.perf_counter()
    _vecindex._write_rows(index, "b", count - 1, rows[count - 1 :])
    appended = time.perf_counter() - started
    started = time.perf_counter()
    meta: dict[str, object] = {"vec_gfile": "b", "vec_grows": count - 1, "vec_gcrc": crc}
    _vecindex._catch_up_signs(index, meta, "b", count, dim)
    append_signed = time.perf_counter() - started
    assert os.path.getsize(_vecindex.signs_path(index, "b")) == count * _vecindex.sign_width(dim)
    fds = [
        os.open(make(index, "b"), os.O_RDONLY)
        for make in (_vecindex.vectors_path, _vecindex.codes_path, _vecindex.signs_path)
    ]
    view = _vecindex.VectorView(
        fds[0], fds[1], count, dim, np.arange(count, dtype=np.int32), signs_fd=fds[2]
    )
    dead = np.zeros(count, dtype=bool)
    rng = np.random.default_rng(3)
    exact_ms, prefilter_ms, recalls = [], [], []
    try:
        for query in tasks:
            query = np.asarray(query, dtype=np.float32)
            text = rng.choice(count, size=min(hits, count), replace=False).tolist()
            saved = _vecindex.PREFILTER_ROWS
            _vecindex.PREFILTER_ROWS = count + 1  # the exact scan, as a small view searches
            try:
                started = time.perf_counter()
                exact = view.scores(query, text, TAKE)
                exact_ms.append(1000 * (time.perf_counter() - started))
            finally:
                _vecindex.PREFILTER_ROWS = saved
            started = time.perf_counter()
            near = view.prefiltered(query, text, TAKE, dead)
            prefilter_ms.append(1000 * (time.perf_counter() - started))
            recalls.append(len(set(exact.exact) & set(near.exact)) / TAKE)
    finally:
        for fd in fds:
            os.close(fd)
    sizes = {
        suffix: os.path.getsize(make(index, "b")) / 2**20
        for suffix, make in (
            ("vec", _vecindex.vectors_path),
            ("vq", _vecindex.codes_path),
            ("sg", _vecindex.signs_path),
        )
    }
    return {
        "vectors": label,
        "rows": count,
        "dim": dim,
        "candidates": _vecindex.prefilter_candidates(TAKE, count),
        "hits": hits,
        "recall_at_64_mean": statistics.mean(recalls),
        "recall_at_64_min": min(recalls),
        "exact_scan_p50_ms": statistics.median(exact_ms),
        "prefilter_p50_ms": statistics.median(prefilter_ms),
        "ratio_p50": statistics.median(prefilter_ms) / statistics.median(exact_ms),
        "files_mb": sizes,
        "write_rows_s": written,
        "sign_bits_s": signed,
        "append_row_ms": 1000 * appended,
        "append_row_signs_ms": 1000 * append_signed,
        "queries": len(recalls),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--real", type=int, default=300_000)
    parser.add_argument("--random", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=25)
    parser.add_argument("--hits", type=int, default=10_000)
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="dense-prefilter-", dir=args.dir) as scratch:
        directory = Path(scratch)
        if args.real:
            started = time.perf_counter()
            rows, tasks = real_vectors(args.real, args.queries, args.cache)
            print(f"real vectors ready in {time.perf_counter() - started:.0f} s", flush=True)
            results.append(measure("real", rows, tasks, args.hits, directory))
            del rows
        if args.random:
            rows, tasks = random_vectors(args.random, args.queries, 256)
            results.append(measure("random", rows, tasks, args.hits, directory))
    table(
        f"sign-bit prefilter vs exact scan (top {TAKE}, {args.hits:,} lexical hits, warm)",
        ["vectors", "rows", "recall@64 mean", "min", "exact p50 ms", "prefilter p50 ms", "ratio"],
        [
            [
                r["vectors"],
                f"{r['rows']:,}",
                f"{r['recall_at_64_mean']:.3f}",
                f"{r['recall_at_64_min']:.3f}",
                r["exact_scan_p50_ms"],
                r["prefilter_p50_ms"],
                f"{r['ratio_p50']:.2f}",
            ]
            for r in results
        ],
    )
    save("dense_prefilter", {"results": results})


if __name__ == "__main__":
    main()
