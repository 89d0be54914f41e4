"""A close loop killed at random points and at each step boundary: the next run leaves the
same published knowledge as an uninterrupted run (issue 31 item 6).

Each run copies one project of 60 promotable candidates, runs a close loop in a child process
(forked from a server that has imported swarmq, so a start costs milliseconds), SIGKILLs it at
a random moment or at a named boundary (a wrapper around the step kills its own process), runs
the close loop again to the end, and compares the knowledge store with the uninterrupted run's,
canonicalised (ids and timestamps dropped, paths relative to the project). The projects live
on tmpfs when there is one: a SIGKILL loses nothing the page cache holds, so the fsyncs a disk
would make slow prove nothing here.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import random
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from swarmq.flywheel import closeloop
from swarmq.flywheel.closeloop import close_loop
from swarmq.flywheel.intents import INTENTS_FILE, PublishIntents
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.project import KnowledgeStore
from swarmq.storage.locking import LocalLocks

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
CANDIDATES = 60
WORDS = [
    "alpha",
    "bravo",
    "cobalt",
    "delta",
    "ember",
    "falcon",
    "garnet",
    "harbor",
    "iris",
    "jasper",
    "kelp",
    "lumen",
    "marble",
    "nectar",
    "onyx",
    "pylon",
    "quartz",
    "raven",
    "sierra",
    "tundra",
    "umber",
    "vortex",
    "willow",
    "xenon",
    "yarrow",
    "zephyr",
    "anvil",
    "beacon",
    "cedar",
    "dune",
    "ferro",
    "glacier",
    "hollow",
    "indigo",
    "juniper",
    "krypton",
    "lantern",
    "meadow",
]


def _project(root: Path) -> Path:
    """60 gold candidates, three days old, each confirmed by another session."""
    layout = AgentsLayout(root / ".agents")
    pending = layout.pool / "pending"
    pending.mkdir(parents=True)
    rng = random.Random(31)
    added = (NOW - timedelta(days=3)).isoformat().replace("+00:00", "Z")
    citations = []
    for n in range(CANDIDATES):
        ident = f"cand-{n:03d}"
        content = f"Check the {' '.join(rng.sample(WORDS, 7))} settings before step {n} runs."
        entry = {
            "candidate": {
                "id": ident,
                "type": "solution",
                "content": content,
                "source": {"session_id": "a1", "transcript_path": "/t/a.jsonl"},
                "raw_score": 0.91,
                "tier": "gold",
                "confidence": 0.95,
                "maturity": "provisional",
                "utility": 0.5,
            },
            "scoring_result": {"raw_score": 0.91, "tier_assignment": "gold"},
            "status": "pending",
            "added_at": added,
            "updated_at": added,
        }
        (pending / f"{ident}.json").write_text(json.dumps(entry, indent=2))
        citations.append(
            {
                "artifact_path": f".agents/pool/pending/{ident}.json",
                "session_id": "s2",
                "cited_at": added,
                "citation_type": "helpful",
                "feedback_at": "0001-01-01T00:00:00Z",
            }
        )
    layout.citations.parent.mkdir(parents=True)
    layout.citations.write_text("".join(json.dumps(c) + "\n" for c in citations))
    return root


def _kill_self() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _after(module: Any, name: str, calls: int) -> None:
    """Kill this process right after the ``calls``-th call of ``module.name``."""
    real = getattr(module, name)
    count = [0]

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        count[0] += 1
        if count[0] == calls:
            _kill_self()
        return out

    setattr(module, name, wrapper)


def _before(module: Any, name: str) -> None:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _kill_self()

    setattr(module, name, wrapper)


BOUNDARIES: dict[str, Callable[[], None]] = {
    "intents journaled": lambda: _after(PublishIntents, "begin", 1),
    "first promotion": lambda: _after(closeloop, "promote", 1),
    "half promoted": lambda: _after(closeloop, "promote", CANDIDATES // 2),
    "all promoted, before flush": lambda: _after(closeloop, "promote", CANDIDATES),
    "promotion flushed": lambda: _after(closeloop.PromotedIndex, "flush", 1),
    "first publication": lambda: _after(closeloop, "confirm_provisional", 1),
    "half published": lambda: _after(closeloop, "confirm_provisional", CANDIDATES // 2),
    "all published, before closing": lambda: _before(closeloop, "_close"),
}


def _run(root: str, boundary: str | None) -> None:
    if boundary is not None:
        BOUNDARIES[boundary]()
    project = Path(root)
    locks = LocalLocks(project / ".locks")
    layout = AgentsLayout(project / ".agents")
    sink = KnowledgeStore(
        project / ".swarm", locks=locks, data_dir=project / "hive", project_name="repo"
    )
    close_loop(layout, locks, sink=sink, now=NOW, baseline=False)


def _context() -> mp.context.BaseContext:
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


def _close_loop(ctx: mp.context.BaseContext, root: Path, boundary: str | None = None) -> int:
    proc = ctx.Process(target=_run, args=(str(root), boundary))
    proc.start()
    proc.join(60)
    assert proc.exitcode is not None
    return proc.exitcode


def _published(root: Path) -> list[tuple[Any, ...]]:
    """The knowledge store canonicalised: what a reader sees, without ids and timestamps."""
    out = []
    text = (root / ".swarm" / "knowledge.jsonl").read_text() if (root / ".swarm").exists() else ""
    for line in text.splitlines():
        entry = json.loads(line)
        out.append(
            (
                entry["lesson"],
                entry["category"],
                tuple(entry["tags"]),
                entry["status"],
                entry["confidence"],
                tuple(os.path.relpath(r, root) for r in entry.get("source_refs", [])),
                tuple(sorted(c["phase_number"] for c in entry.get("confirmed_by", []))),
            )
        )
    return sorted(out)


def _learnings(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".agents" / "learnings").glob("*.md"))


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(dir=shm if os.access(shm, os.W_OK) else None) as path:
        yield Path(path)


@pytest.fixture(scope="module")
def template(scratch: Path) -> Path:
    return _project(scratch / "template")


@pytest.fixture(scope="module")
def reference(template: Path, scratch: Path) -> tuple[Any, float]:
    """The uninterrupted run: its store, and how long it took (with the forkserver's start)."""
    root = scratch / "reference"
    shutil.copytree(template, root)
    started = time.monotonic()
    assert _close_loop(_context(), root) == 0
    seconds = time.monotonic() - started
    published = _published(root)
    assert len(published) == CANDIDATES
    assert not (root / ".agents" / "pool" / INTENTS_FILE).exists()
    return (published, _learnings(root)), seconds


def _killed_then_rerun(
    template: Path, root: Path, kill: Callable[[mp.context.BaseContext, Path], None]
) -> tuple[Any, Any]:
    shutil.copytree(template, root)
    ctx = _context()
    kill(ctx, root)
    assert _close_loop(ctx, root) == 0
    assert not (root / ".agents" / "pool" / INTENTS_FILE).exists()
    return _published(root), _learnings(root)


@pytest.mark.parametrize("boundary", list(BOUNDARIES))
def test_killed_at_a_step_boundary_the_next_run_publishes_the_same(
    template: Path, reference: tuple[Any, float], scratch: Path, boundary: str
) -> None:
    def kill(ctx: mp.context.BaseContext, root: Path) -> None:
        assert _close_loop(ctx, root, boundary) == -signal.SIGKILL

    root = scratch / f"boundary-{list(BOUNDARIES).index(boundary)}"
    assert _killed_then_rerun(template, root, kill) == reference[0]


def test_killed_at_random_moments_the_next_run_publishes_the_same(
    template: Path, reference: tuple[Any, float], scratch: Path
) -> None:
    rng = random.Random(6)
    ctx = _context()
    warm = scratch / "random-warm"  # the forkserver is up: how long a run itself takes
    shutil.copytree(template, warm)
    started = time.monotonic()
    assert _close_loop(ctx, warm) == 0
    duration = time.monotonic() - started
    killed = 0
    for run in range(24):  # until ten runs were cut short
        if killed >= 10:
            break

        def kill(ctx: mp.context.BaseContext, root: Path) -> None:
            nonlocal killed, duration
            proc = ctx.Process(target=_run, args=(str(root), None))
            proc.start()
            time.sleep(rng.uniform(0.0, 0.9 * duration))
            proc.kill()
            proc.join(60)
            if proc.exitcode == -signal.SIGKILL:
                killed += 1
            else:  # finished before the kill: the machine is faster now than when timed
                duration *= 0.7

        assert _killed_then_rerun(template, scratch / f"random-{run}", kill) == reference[0], run
    assert killed >= 10, (killed, duration)  # cut short, not finished before the kill
