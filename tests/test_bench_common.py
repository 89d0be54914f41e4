"""The benchmarks' shared scratch directory: a ``--dir`` that does not exist yet is created, not
a crash after the run's arguments were read (bench/hooks.py, cli_startup.py, knowledge_add.py)."""

from __future__ import annotations

from pathlib import Path

from bench.common import scratch_dir


def test_a_missing_parent_is_created_and_the_run_gets_its_own_directory(tmp_path: Path) -> None:
    parent = tmp_path / "not" / "there"
    first = scratch_dir("bench-hooks-", parent)
    second = scratch_dir("bench-hooks-", parent)
    assert first.is_dir() and second.is_dir() and first != second
    assert first.parent == parent and first.name.startswith("bench-hooks-")


def test_without_a_parent_the_directory_is_a_fresh_temp_one() -> None:
    made = scratch_dir("bench-hooks-", None)
    try:
        assert made.is_dir() and not any(made.iterdir())
    finally:
        made.rmdir()
