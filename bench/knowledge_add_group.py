"""The 8-writer mode of ``bench.knowledge_add``: concurrent add-with-dedup into one store with
group commit, against the fsync floor measured on the same filesystem in the same run.

Writers are ``procs`` processes × ``threads`` threads, each adding its share of the workload one
add at a time (it waits for each add to be durable before the next), like Celery worker
processes (``pool: threads``) consuming ``maturity.knowledge_add``. Processes share the store
through the store lock and follow each other's appends; threads of a process group-commit.
After the run the adds are replayed in commit order (``AddResult.order``) through a full-scan
reference, and every decision must match.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from pathlib import Path
from typing import Any

from bench.knowledge_store import build_store, warm
from swarmq.knowledge.model import Entry, Tier
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.reinforcement import NewLesson, new_entry, phase_confirmation, reinforce_entry
from swarmq.knowledge.validation import (
    check_safety,
    check_structure,
    validate_directive_fields,
)
from swarmq.similarity.text import jaccard, word_bigrams
from swarmq.storage.atomic import append_lines
from swarmq.storage.clock import iso
from swarmq.storage.locking import LocalLocks, StoreLocks
from swarmq.storage.workspace_id import ensure_root_id


def fsync_floor(directory: Path, line: str, count: int = 100) -> float:
    """One fsync'd append of ``line`` at a time (``append_lines``, as the store appends), in
    appends/s over one burst of ``count``."""
    path = directory / "fsync-floor.jsonl"
    started = time.perf_counter()
    for _ in range(count):
        append_lines(path, [line])
    elapsed = time.perf_counter() - started
    path.unlink()
    return count / elapsed


class ScanReference:
    """The add decisions recomputed by full scans (no index, no batching), in a given order."""

    def __init__(self, lessons: list[str], config: Any) -> None:
        at = iso()
        self.config = config
        self.entries = [self._entry(text or "(empty)", 1, at) for text in lessons]
        self.grams = [word_bigrams(e.lesson) for e in self.entries]

    def _entry(self, text: str, phase: int | None, at: str) -> Entry:
        return new_entry(
            NewLesson(text),
            tier=Tier.SWARM,
            project_name="bench",
            phase=phase,
            at=at,
            config=self.config,
        )

    def add(self, lesson: str, phase: int) -> str:
        at = iso()
        entry = self._entry(lesson, phase, at)
        for verdict in (
            check_structure(
                entry.lesson, entry.get("category"), entry.get("scope"), entry.get("confidence")
            ),
            check_safety(entry.lesson, self.config.validation_mode),
        ):
            if not verdict.valid:
                return "rejected"
        if validate_directive_fields(entry.data):
            return "rejected"
        candidate = word_bigrams(lesson)
        for index, other in enumerate(self.entries):
            if (
                other.is_active
                and jaccard(candidate, self.grams[index]) >= self.config.dedup_threshold
            ):
                changed, outcome = reinforce_entry(
                    other,
                    phase_confirmation(phase, at, "bench"),
                    max_confirmed_by=self.config.max_confirmed_by,
                )
                self.entries[index] = changed
                return "duplicate" if outcome == "inactive" else outcome
        self.entries.append(entry)
        self.grams.append(candidate)
        return "added"


def _writer_process(
    root: Path,
    config: Any,
    jobs: list[list[tuple[int, str, int]]],
    barrier: Any,
    out: Any,
    redis_url: str | None = None,
    swarm: str = "",
) -> None:
    """One worker process: warm the store, wait for the start, run one thread per job list."""
    locks: StoreLocks = LocalLocks(root / "locks")
    if redis_url:  # what workers use (they refuse single-host locks)
        import redis

        from swarmq.coord.locks import RedisLocks

        locks = RedisLocks(redis.Redis.from_url(redis_url), swarm)
    knowledge = KnowledgeStore(root / ".swarm", locks=locks, config=config, data_dir=root / "hive")
    warm(knowledge)
    results: list[tuple[int, str, tuple[int, int]]] = []
    failures: list[str] = []

    def run(items: list[tuple[int, str, int]]) -> None:
        for index, lesson, phase in items:
            try:
                result = knowledge.swarm.add(NewLesson(lesson), phase=phase)
            except Exception as exc:  # reported, and fails the run
                failures.append(f"{index}: {exc!r}")
                continue
            assert result.order is not None
            results.append((index, result.outcome, result.order))

    threads = [threading.Thread(target=run, args=(items,)) for items in jobs]
    barrier.wait()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out.put((os.getpid(), time.monotonic(), results, failures))


def run_writers(
    root: Path,
    stored: list[str],
    lessons: list[str],
    phases: list[int],
    *,
    procs: int,
    threads: int,
    config: Any,
    redis_url: str | None = None,
    swarm: str = "",
) -> dict[str, Any]:
    """Add ``lessons`` with ``procs`` × ``threads`` writers into a store of ``stored``; check
    every decision against :class:`ScanReference` in commit order."""
    build_store(root / ".swarm" / "knowledge.jsonl", stored)
    # A worker's workspace carries its id file (``ensure_identity`` at start); without one every
    # lock hold walks to / looking for it (about 1 ms a hold), which no worker pays.
    ensure_root_id(root, "cluster" if redis_url else "single-host")
    writers = procs * threads
    items = [(i, lesson, phases[i]) for i, lesson in enumerate(lessons)]
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(procs + 1)
    out = context.Queue()
    workers = [
        context.Process(
            target=_writer_process,
            args=(
                root,
                config,
                [items[p * threads + t :: writers] for t in range(threads)],
                barrier,
                out,
                redis_url,
                swarm,
            ),
        )
        for p in range(procs)
    ]
    for worker in workers:
        worker.start()
    barrier.wait(timeout=300)
    started = time.monotonic()
    reports = [out.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join()
    elapsed = max(report[1] for report in reports) - started
    failures = [f for report in reports for f in report[3]]
    assert not failures, f"adds failed: {failures[:5]}"
    done = sorted(
        (order, index, outcome) for report in reports for index, outcome, order in report[2]
    )
    assert len(done) == len(lessons), f"{len(done)} of {len(lessons)} adds answered"
    reference = ScanReference(stored, config)
    for order, index, outcome in done:
        expected = reference.add(lessons[index], phases[index])
        assert outcome == expected, f"add {index} (commit {order}): {outcome} != {expected}"
    groups = len({order[0] for order, _, _ in done})  # lock holds (one token each)
    outcomes: dict[str, int] = {}
    for _, _, outcome in done:
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return {
        "locks": "redis" if redis_url else "local",
        "procs": procs,
        "threads": threads,
        "ops": len(lessons),
        "ops_per_s": len(lessons) / elapsed,
        "ms_per_op": 1000 * elapsed / len(lessons),
        "groups": groups,
        "mean_group": len(lessons) / groups,
        "outcomes": dict(sorted(outcomes.items())),
    }
