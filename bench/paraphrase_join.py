"""The full pass's paraphrase candidate join alone, against the blocked join it replaced.

    python -m bench.paraphrase_join --sizes 100000 300000 [--no-reference]

The lessons are those of :func:`bench.consolidation_full.store_lessons` (the full pass's store),
distinct, as term texts encoded under the token measure with their IDF weights, as
:class:`~swarmq.consolidation._paraphrase.Paraphrases` encodes them. Each join runs in a fresh
process: CPU time (``process_time``), its own peak (``tracemalloc``, the numpy arrays it
allocates), the pairs it returns and how many candidates each stage kept. The reference is the
previous implementation: a block of 16,384 sets at a time probes every set's cosine prefix
(:class:`~swarmq.similarity.join.FocusedJoin` with
:func:`~swarmq.similarity.join.cosine_prefix`), and each block's pairs below the cosine are
dropped. Both outputs are compared array for array (pairs, order and Jaccard values).
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing as mp
import time
import tracemalloc
from typing import Any

import numpy as np

from bench.common import save, table
from bench.consolidation_full import store_lessons
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.similarity.join import (
    FloatArray,
    FocusedJoin,
    JoinResult,
    JoinStats,
    cosine_join,
    cosine_prefix,
    idf_weights,
    weighted_overlaps,
)
from swarmq.similarity.measure import Measure
from swarmq.similarity.normalize import term_text
from swarmq.similarity.sets import TokenSets, encode

BLOCK = 16_384


def blocked_join(sets: TokenSets, weights: FloatArray, cosine: float, t: float) -> JoinResult:
    """The reference: the cosine-prefix join a block of sets at a time (each pair kept by the
    block of its right end), pairs below the cosine dropped per block."""
    n = len(sets)
    joiner = FocusedJoin(sets, t, cosine_prefix(sets, weights, cosine))
    lefts, rights, scores = [], [], []
    for lo in range(0, n, BLOCK):
        hi = min(n, lo + BLOCK)
        found = joiner(np.arange(lo, hi, dtype=np.int64))
        mine = np.flatnonzero((found.right >= lo) & (found.right < hi))
        left, right = found.left[mine], found.right[mine]
        near = weighted_overlaps(sets, left, right, weights) >= cosine - 1e-9
        lefts.append(left[near])
        rights.append(right[near])
        scores.append(found.similarity[mine][near])
    left, right = np.concatenate(lefts), np.concatenate(rights)
    order = np.lexsort((right, left))
    none = np.zeros(0, dtype=np.int64)
    return JoinResult(left[order], right[order], np.concatenate(scores)[order], none, t)


def _run(size: int, which: str) -> dict[str, Any]:
    lessons, added = store_lessons(size, 0.01)
    texts = list(dict.fromkeys(lessons + added))
    sets = encode([term_text(text) for text in texts], Measure.TOKENS)
    weights = idf_weights(sets)
    config = ConsolidationConfig()
    cosine, t = config.paraphrase_threshold, config.paraphrase_candidate_threshold
    stats: list[JoinStats] = []
    tracemalloc.start()
    started = time.process_time()
    if which == "cosine":
        result = cosine_join(sets, weights, cosine - 1e-9, t, stats=stats)
    else:
        result = blocked_join(sets, weights, cosine, t)
    seconds = time.process_time() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    digest = hashlib.sha256()
    for array in (result.left, result.right, result.similarity):
        digest.update(np.ascontiguousarray(array).tobytes())
    found = stats[0] if stats else None
    return {
        "size": size,
        "join": which,
        "sets": len(sets),
        "cpu_seconds": seconds,
        "peak_mib": peak / 2**20,
        "pairs": len(result.left),
        "digest": digest.hexdigest(),
        "raw_candidates": found.raw_candidates if found else None,
        "after_filters": found.after_bitmap64 if found else None,
        "after_bitmap256": found.after_bitmap256 if found else None,
        "verified": found.verified if found else None,
        "load": open("/proc/loadavg").read().split()[:3],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000])
    parser.add_argument("--no-reference", action="store_true", help="the cosine join only")
    args = parser.parse_args()
    joins = ["cosine"] if args.no_reference else ["blocked", "cosine"]
    runs: list[dict[str, Any]] = []
    context = mp.get_context("spawn")
    for size in args.sizes:
        for which in joins:
            with context.Pool(1) as pool:
                runs.append(pool.apply(_run, (size, which)))
            print(runs[-1], flush=True)
    reference = {r["size"]: r for r in runs if r["join"] == "blocked"}
    for r in runs:  # the baseline's CPU over this join's, and whether they found the same pairs
        base = reference.get(r["size"])
        r["speedup"] = base["cpu_seconds"] / r["cpu_seconds"] if base and r["cpu_seconds"] else None
        r["same_pairs"] = base["digest"] == r["digest"] if base else None
    rows = [
        [r["size"], r["join"], r["sets"], f"{r['cpu_seconds']:.1f}", f"{r['peak_mib']:.0f}",
         r["pairs"], r["raw_candidates"], r["verified"], r["digest"][:12],
         "-" if r["speedup"] is None else f"{r['speedup']:.1f}x",
         "-" if r["same_pairs"] is None else ("yes" if r["same_pairs"] else "NO"),
         " ".join(r["load"])]
        for r in runs
    ]  # fmt: skip
    table(
        "paraphrase candidate join (speedup: the blocked join's CPU / this one's, same run)",
        ["size", "join", "sets", "CPU s", "peak MiB", "pairs", "raw", "verified", "sha256",
         "speedup", "same pairs", "load"],
        rows,
    )  # fmt: skip
    save("paraphrase_join", {"runs": runs})


if __name__ == "__main__":
    main()
