"""The scan of held code rows and its cut, against what they replace (issue 28).

The held code rows are kept field by field (:class:`~swarmq.knowledge._vecindex.HeldCodes`)
and the scan's cut is found from a sample first (:func:`~swarmq.knowledge._vecindex.kth_largest`):
both must give the very bits the structured rows and the full partition gave, since the
bounds, the survivors and so every answer follow from them.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from swarmq.knowledge import _vecindex


def _unit_rows(rng: np.random.Generator, count: int, dim: int) -> np.ndarray:
    rows = rng.standard_normal((count, dim)).astype(np.float32)
    rows[::7, 0] *= 40.0  # spiky rows: a coarse scale
    rows[3] = 0.0  # a text with no tokens
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    np.divide(rows, norms, out=rows, where=norms > 0)
    return rows.astype(np.float16).astype(np.float32)


@pytest.mark.parametrize("seed", [0, 1])
def test_held_code_rows_scan_to_the_same_bits_as_the_mapped_file(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan over the held rows (read in two steps: rows appended after the first hold)
    equals the scan of the mapped file, approximate cosine and radius, bit for bit."""
    monkeypatch.setattr(_vecindex, "RESIDENT_AFTER", 1)
    rng = np.random.default_rng(seed)
    dim, first, count = 384, 9000, 20000
    rows = _unit_rows(rng, count, dim)
    index = tmp_path / "knowledge.index.sqlite"
    _vecindex._write_rows(index, "t", 0, rows)
    codes = os.open(_vecindex.codes_path(index, "t"), os.O_RDONLY)
    key = (str(index), "t", dim)
    try:
        _vecindex._forget_resident()
        early = _vecindex._resident_codes(key, codes, first, dim)
        assert early is not None and len(early) == first
        held = _vecindex._resident_codes(key, codes, count, dim)  # the appended rows read
        assert held is not None and len(held) == count
        assert held.codes.flags.c_contiguous and held.scales.flags.c_contiguous
        for _ in range(3):
            query = rng.standard_normal(dim).astype(np.float32)
            query /= np.linalg.norm(query)
            mapped = _vecindex.scan(codes, count, dim, query)
            kept = _vecindex.scan(codes, count, dim, query, held)
            assert mapped[0].tobytes() == kept[0].tobytes()
            assert mapped[1].tobytes() == kept[1].tobytes()
            part = _vecindex.scan(codes, first, dim, query, early)
            assert part[0].tobytes() == mapped[0][:first].tobytes()
            assert part[1].tobytes() == mapped[1][:first].tobytes()
    finally:
        _vecindex._forget_resident()
        os.close(codes)


def _partitioned(values: np.ndarray, k: int) -> np.float32:
    return np.partition(values, len(values) - k)[len(values) - k]


@pytest.mark.parametrize("seed", range(6))
def test_the_kth_largest_is_the_full_partitions(seed: int) -> None:
    """Sizes below and above the sample's reach, ties, dead rows (-inf), NaN, signed zeros,
    every k from 1 to a few hundred and the largest: the value the partition finds, and the
    values left as they were."""
    rng = np.random.default_rng(seed)
    for size in (1, 5, 63, 64, 100, 1023, 4096, 100_000):
        values = rng.standard_normal(size).astype(np.float32)
        if seed % 2:
            values = np.round(values, 1)  # many ties
        if size > 10:
            values[rng.choice(size, size // 10, replace=False)] = -np.inf
        if seed == 4 and size > 3:
            values[rng.choice(size, 3, replace=False)] = np.nan
        if seed == 5 and size > 4:
            values[:2], values[2:4] = np.float32(-0.0), np.float32(0.0)
        before = values.copy()
        for k in sorted({1, 2, 64, min(size, 300), size, max(1, size // 2)}):
            if k > size:
                continue
            found, expected = _vecindex.kth_largest(values, k), _partitioned(values, k)
            assert found.tobytes() == expected.tobytes() or (
                float(found) == float(expected) == 0.0  # -0.0 and 0.0: the same cut
            ), (size, k, found, expected)
        assert values.tobytes() == before.tobytes()
