"""Similarity join for nightly consolidation: seconds, peak memory, pairs and recall at scale.

Run: python -m bench.consolidation_join [--sizes 5000 20000 100000] [--threshold 0.5]

For each size, realistic lessons come from :mod:`bench.lesson_corpus` (about 10 % planted
near-duplicates). Each measure (word bigrams, word tokens) is joined in a fresh process, so its
peak RSS is the whole join's (interpreter and lessons included); the time is the best of
``--repeat`` runs of tokenise + join. Recall is checked against an independent exact oracle
(scipy sparse products over the reference's string token sets): every pair at 5k and 20k, and
every pair of ``--sample`` random lessons at 100k (a row-exact check, since the full pairwise
answer at 100k is what takes hours). The baseline is the naive pairwise scan
(:func:`swarmq.similarity.brute.pairwise_join`: each lesson tokenised once, then Python
set Jaccard for every pair), measured at ``--naive-size`` in this run and extrapolated by the
pair count. The reference implementations are slower still: they re-normalise the stored
lesson for every comparison; that per-pair cost is measured on a sample and reported too.
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing as mp
import random
import resource
import time
from typing import Any

import numpy as np
import scipy.sparse as sp
from rich.console import Console
from rich.table import Table

from bench.common import save
from bench.lesson_corpus import generate
from swarmq.similarity.brute import pairwise_join, token_set
from swarmq.similarity.join import JoinStats, similarity_join
from swarmq.similarity.measure import Measure
from swarmq.similarity.sets import encode
from swarmq.similarity.text import bigram_jaccard, jaccard, word_tokens

PairSet = set[tuple[int, int]]
console = Console(width=180)


def _run_join(lessons: list[str], measure: str, threshold: float, repeat: int) -> dict[str, Any]:
    """In a fresh process: best time of tokenise + join, peak RSS, the pairs found."""
    best = float("inf")
    stats: list[JoinStats] = []
    result = None
    for _ in range(repeat):
        stats.clear()
        started = time.perf_counter()
        result = similarity_join(encode(lessons, measure), threshold, stats=stats)
        best = min(best, time.perf_counter() - started)
    assert result is not None
    left, right, _ = result.arrays()
    return {
        "seconds": best,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "pairs": len(result),
        "left": left,
        "right": right,
        "stats": dataclasses.asdict(stats[0]),
    }


def join_in_child(
    lessons: list[str], measure: str, threshold: float, repeat: int
) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    with ctx.Pool(1) as pool:
        return pool.apply(_run_join, (lessons, measure, threshold, repeat))


def _matrix(lessons: list[str], measure: str) -> tuple[sp.csr_matrix, np.ndarray]:
    """The reference's string token sets as a sparse 0/1 matrix (independent of ``encode``)."""
    ids: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for i, text in enumerate(lessons):
        for token in token_set(text, measure):
            rows.append(i)
            cols.append(ids.setdefault(token, len(ids)))
    data = np.ones(len(rows), dtype=np.int32)
    matrix = sp.csr_matrix((data, (rows, cols)), shape=(len(lessons), max(len(ids), 1)))
    return matrix, np.asarray(matrix.sum(axis=1)).ravel().astype(np.int64)


def exact_pairs(
    lessons: list[str], measure: str, threshold: float, rows: list[int] | None
) -> PairSet:
    """Every pair with Jaccard >= threshold (only pairs touching ``rows`` when given)."""
    matrix, sizes = _matrix(lessons, measure)
    empty = np.flatnonzero(sizes == 0)
    wanted = list(range(len(lessons))) if rows is None else rows
    empty_set = set(empty.tolist())
    found: PairSet = set()
    transposed = matrix.T.tocsc()
    for lo in range(0, len(wanted), 200):
        block = wanted[lo : lo + 200]
        overlap = (matrix[block] @ transposed).tocoo()
        i = np.asarray(block)[overlap.row]
        j = overlap.col
        o = overlap.data.astype(np.int64)
        similarity = o / (sizes[i] + sizes[j] - o)
        keep = (similarity >= threshold) & (i != j)
        for a, b in zip(i[keep].tolist(), j[keep].tolist(), strict=True):
            found.add((min(a, b), max(a, b)))
        for a in block:
            if a in empty_set:
                found.update((min(a, b), max(a, b)) for b in empty.tolist() if b != a)
    return found


def naive_seconds(lessons: list[str], measure: str, threshold: float) -> float:
    started = time.perf_counter()
    pairwise_join(lessons, threshold, measure)
    return time.perf_counter() - started


def reference_pair_seconds(lessons: list[str], measure: str, samples: int = 200_000) -> float:
    """Per-pair cost of the reference style: the stored lesson is re-normalised every time."""
    rng = random.Random(1)
    pairs = [(rng.randrange(len(lessons)), rng.randrange(len(lessons))) for _ in range(samples)]
    started = time.perf_counter()
    if measure == Measure.BIGRAMS:
        for i, j in pairs:
            bigram_jaccard(lessons[i], lessons[j])
    else:
        for i, j in pairs:
            jaccard(word_tokens(lessons[i]), word_tokens(lessons[j]))
    return (time.perf_counter() - started) / samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000, 100000])
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--measures", nargs="+", default=[m.value for m in Measure])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--naive-size", type=int, default=5000)
    parser.add_argument("--sample", type=int, default=2000, help="rows checked exactly above 20k")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    t = args.threshold

    naive: dict[str, float] = {}
    per_pair_reference: dict[str, float] = {}
    base = generate(args.naive_size, seed=args.seed).lessons
    for measure in args.measures:
        naive[measure] = naive_seconds(base, measure, t)
        per_pair_reference[measure] = reference_pair_seconds(base, measure)
    base_pairs = args.naive_size * (args.naive_size - 1) / 2

    rows: list[list[Any]] = []
    records: list[dict[str, Any]] = []
    for n in args.sizes:
        corpus = generate(n, seed=args.seed)
        lessons = corpus.lessons
        sample = None if n <= 20_000 else random.Random(n).sample(range(n), min(args.sample, n))
        for measure in args.measures:
            run = join_in_child(lessons, measure, t, args.repeat)
            found = set(zip(run["left"].tolist(), run["right"].tolist(), strict=True))
            exact = exact_pairs(lessons, measure, t, sample)
            if sample is not None:
                chosen = set(sample)
                found = {p for p in found if p[0] in chosen or p[1] in chosen}
            recall = len(found & exact) / len(exact) if exact else 1.0
            precision = len(found & exact) / len(found) if found else 1.0
            planted = [
                (a, b)
                for a, b in corpus.planted
                if jaccard(token_set(lessons[a], measure), token_set(lessons[b], measure)) >= t
            ]
            all_found = set(zip(run["left"].tolist(), run["right"].tolist(), strict=True))
            planted_recall = (
                sum((min(a, b), max(a, b)) in all_found for a, b in planted) / len(planted)
                if planted
                else 1.0
            )
            scale = n * (n - 1) / 2 / base_pairs
            naive_est = naive[measure] * scale
            reference_est = per_pair_reference[measure] * n * (n - 1) / 2
            record = {
                "n": n,
                "measure": measure,
                "threshold": t,
                "seconds": run["seconds"],
                "peak_rss_mib": run["peak_rss_mib"],
                "pairs": run["pairs"],
                "recall": recall,
                "precision": precision,
                "recall_checked": "all pairs"
                if sample is None
                else f"all pairs of {len(sample)} random lessons",
                "planted_pairs_at_threshold": len(planted),
                "planted_recall": planted_recall,
                "naive_seconds": naive_est,
                "naive_measured": n == args.naive_size,
                "speedup_vs_naive": naive_est / run["seconds"],
                "reference_style_seconds": reference_est,
                "speedup_vs_reference_style": reference_est / run["seconds"],
                "stats": run["stats"],
            }
            records.append(record)
            rows.append(
                [
                    n,
                    measure,
                    f"{run['seconds']:.3f}",
                    f"{run['peak_rss_mib']:.0f}",
                    run["pairs"],
                    f"{recall:.4f}",
                    f"{planted_recall:.4f}",
                    f"{naive_est:.1f}" + ("" if n == args.naive_size else " (extrap.)"),
                    f"{naive_est / run['seconds']:.0f}x",
                    f"{reference_est / run['seconds']:.0f}x",
                ]
            )
            console.print({k: v for k, v in record.items() if k != "stats"}, record["stats"])
    out = Table(title=f"similarity join, Jaccard >= {t} (naive scan measured at {args.naive_size})")
    for column in (
        "lessons",
        "measure",
        "seconds",
        "peak RSS MiB",
        "pairs",
        "recall",
        "planted recall",
        "naive s",
        "vs naive",
        "vs reference-style",
    ):
        out.add_column(column)
    for row in rows:
        out.add_row(*(str(v) for v in row))
    console.print(out)
    save(
        "consolidation_join",
        {
            "threshold": t,
            "naive_size": args.naive_size,
            "naive_seconds": naive,
            "reference_per_pair_seconds": per_pair_reference,
            "runs": records,
        },
    )


if __name__ == "__main__":
    main()
