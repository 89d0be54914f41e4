"""Nightly runs join only what changed since the last run, and never lose a change."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bench.lesson_corpus import generate
from swarmq.consolidation._watermark import watermark_path
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.knowledge import consolidate_tier, events_path
from swarmq.knowledge.model import Entry
from swarmq.similarity.join import similarity_join
from swarmq.similarity.sets import encode
from tests.consolidation.support import entry, open_store, write_store

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ConsolidationConfig()


def _lessons(seed: int, n: int) -> list[str]:
    return generate(n, seed=seed, dup_rate=0.02, odd_rate=0.0, dark_rate=0.0).lessons


@pytest.mark.parametrize("seed", [11, 12, 13, 14])
def test_incremental_pairs_are_the_full_joins_pairs_of_the_changed(seed: int) -> None:
    """The focused planner's first-round pairs equal the full join restricted to new/changed
    entries."""
    from swarmq.consolidation._nightly import FocusedPlanner
    from swarmq.consolidation.items import Item

    rng = random.Random(seed)
    texts = _lessons(seed, 1500)
    for _ in range(40):  # near-duplicates of old lessons among the new ones
        texts.append(texts[rng.randrange(len(texts))] + " again")
    items = [Item(id=f"e{k}", text=t, created="", order=k) for k, t in enumerate(texts)]
    changed = {f"e{k}" for k in rng.sample(range(len(texts)), 60)}
    planner = FocusedPlanner(CONFIG, CONFIG.measure, None, changed)
    sets = encode(texts, CONFIG.measure)
    for threshold in (CONFIG.complement_threshold, CONFIG.conflict_threshold):
        full = similarity_join(sets, threshold)
        got = planner.round_pairs(sets, threshold, items)
        expected = {
            (i, j)
            for i, j in zip(full.left.tolist(), full.right.tolist(), strict=True)
            if f"e{i}" in changed or f"e{j}" in changed
        }
        assert {(i, j) for i, j, _ in got} == expected


def _store_with(tmp_path: Path, lessons: list[str]) -> None:
    write_store(tmp_path, [entry(f"e{k}", text) for k, text in enumerate(lessons)])


def _add(tmp_path: Path, entry_id: str, lesson: str) -> None:
    with open_store(tmp_path).swarm.transaction() as txn:
        txn.append(entry(entry_id, lesson, created="2026-02-01T00:00:00.000Z"))


def _actions(report_plan: object) -> set[tuple[str, str, str]]:
    from swarmq.consolidation.items import Plan

    assert isinstance(report_plan, Plan)
    return {(a.kind.value, a.keep, a.other) for a in report_plan.actions}


@pytest.mark.parametrize("seed", [21, 22, 23])
def test_nightly_acts_like_the_full_pass_on_new_entries(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    lessons = _lessons(seed, 400)
    _store_with(tmp_path, lessons)
    first = consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm")
    assert first.focus is None  # no watermark: a full pass
    assert watermark_path(events_path(open_store(tmp_path).swarm.files)).exists()
    again = consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm")
    assert again.focus == 0 and not again.plan.actions
    for k in range(8):  # new near-duplicates and new unrelated lessons
        source = lessons[rng.randrange(len(lessons))]
        _add(tmp_path, f"n{k}", f"{source} again" if k % 2 else _lessons(seed + 100, 8)[k])
    dry_full = consolidate_tier(
        open_store(tmp_path).swarm, CONFIG, scope="swarm", dry_run=True, full=True
    )
    nightly = consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm")
    assert nightly.focus == 8
    assert _actions(nightly.plan) == _actions(dry_full.plan)
    after = consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm", full=True)
    assert not after.plan.actions  # the nightly run left a fixpoint the full pass agrees with


def test_a_reinforced_entry_is_rejoined(tmp_path: Path) -> None:
    _store_with(
        tmp_path,
        [
            "Pin the node version in the ci workflow before running the integration tests",
            "Use sqlite in memory databases for fast repository unit tests",
        ],
    )
    consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm")
    store = open_store(tmp_path).swarm
    with store.transaction() as txn:
        current = txn.get("e1")
        assert current is not None
        txn.put(current.changed({"confidence": 0.9}))
    report = consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm")
    assert report.focus == 1


def test_a_settings_change_means_a_full_pass(tmp_path: Path) -> None:
    _store_with(tmp_path, _lessons(3, 50))
    consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm")
    other = CONFIG.model_copy(update={"duplicate_threshold": 0.9})
    assert consolidate_tier(open_store(tmp_path).swarm, other, scope="swarm").focus is None
    off = CONFIG.model_copy(update={"incremental": False})
    assert consolidate_tier(open_store(tmp_path).swarm, off, scope="swarm").focus is None


BLOCKING_RUN = """
import sys, time
from pathlib import Path
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.knowledge import consolidate_tier
from tests.consolidation.support import open_store
root = Path(sys.argv[1])
def progress(stage, meta):
    if stage == "round":
        (root / "planning").write_text("x")
        while not (root / "go").exists():
            time.sleep(0.02)
consolidate_tier(open_store(root).swarm, ConsolidationConfig(), scope="swarm", progress=progress)
"""


def _blocked_run(root: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-c", BLOCKING_RUN, str(root)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        stderr=subprocess.PIPE,
    )
    marker = root / "planning"
    for _ in range(3000):
        if marker.exists() or proc.poll() is not None:
            break
        threading.Event().wait(0.02)
    assert marker.exists(), proc.stderr.read().decode() if proc.stderr else ""
    return proc


def _entries(root: Path) -> dict[str, Entry]:
    return {e.id: e for e in open_store(root).swarm.read().entries}


BASE = [
    "Pin the node version in the ci workflow before running the integration tests",
    "Use sqlite in memory databases for fast repository unit tests",
    "Always rebase the feature branch onto main before opening the pull request",
]


def test_an_add_during_a_run_is_joined_by_the_next(tmp_path: Path) -> None:
    _store_with(tmp_path, BASE)
    consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm")
    _add(tmp_path, "n0", "A brand new lesson about caching the docker layers in ci builds")
    proc = _blocked_run(tmp_path)  # holds the store lock, planning
    late = threading.Thread(target=_add, args=(tmp_path, "late", BASE[1] + " always"), daemon=True)
    late.start()  # waits for the store lock the run holds
    (tmp_path / "go").write_text("x")
    assert proc.wait(timeout=120) == 0
    late.join(timeout=60)
    assert not late.is_alive() and "late" in _entries(tmp_path)
    report = consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm")
    assert report.focus == 1  # the late add, not lost
    assert ("merge", "e1", "late") in _actions(report.plan) or (
        "merge",
        "late",
        "e1",
    ) in _actions(report.plan)


def test_a_killed_run_does_not_advance_the_watermark(tmp_path: Path) -> None:
    _store_with(tmp_path, BASE)
    consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm")
    mark = watermark_path(events_path(open_store(tmp_path).swarm.files))
    before = mark.read_bytes()
    _add(tmp_path, "dup", BASE[0] + " now")
    proc = _blocked_run(tmp_path)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert mark.read_bytes() == before
    report = consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm")
    assert report.focus == 1
    assert report.plan.counts()["duplicate"] == 1


def test_a_damaged_watermark_means_a_full_pass_and_a_dry_run_writes_none(
    tmp_path: Path,
) -> None:
    _store_with(tmp_path, BASE)
    mark = watermark_path(events_path(open_store(tmp_path).swarm.files))
    dry = consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm", dry_run=True)
    assert dry.focus is None and not mark.exists()
    consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm")
    mark.write_bytes(mark.read_bytes()[:40])
    assert consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm").focus is None
    assert consolidate_tier(open_store(tmp_path).swarm, CONFIG, scope="swarm").focus == 0


def test_dense_proposals_are_the_full_passes_restricted_to_the_focus() -> None:
    import numpy as np

    from swarmq.consolidation._nightly import FocusedPlanner
    from swarmq.consolidation._paraphrase import dense_pairs

    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors[150:] = vectors[:150] + rng.normal(scale=0.3, size=(150, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = [f"lesson {k}" for k in range(300)]
    planner = FocusedPlanner(CONFIG, CONFIG.measure, None, set())
    paraphrases = planner.paraphrases
    focus = set(rng.choice(300, 40, replace=False).tolist())
    paraphrases.focus_texts = {texts[k] for k in focus}  # type: ignore[attr-defined]
    left, right, _ = dense_pairs(vectors, CONFIG.dense_duplicate_threshold)
    want = {
        (a, b)
        for a, b in zip(left.tolist(), right.tolist(), strict=True)
        if a in focus or b in focus
    }
    got_left, got_right, _ = paraphrases.dense_join(vectors, texts)
    assert want and set(zip(got_left.tolist(), got_right.tolist(), strict=True)) == want


@pytest.mark.parametrize("seed", [31, 32, 33, 34])
def test_later_rounds_join_only_what_is_new_and_find_every_pair(seed: int) -> None:
    """Rounds where entries leave the population, change lesson, enter it and enter the
    focus: each round's pairs (joined incrementally) are the full join's pairs with a focus
    entry that the structure allows (templated only with its own template key), similarity
    included."""
    from swarmq.consolidation._pairs import round_pairs
    from swarmq.consolidation.items import Item
    from swarmq.knowledge.templates import template_key

    rng = random.Random(seed)
    base = generate(900, seed=seed, dup_rate=0.02, odd_rate=0.0, dark_rate=0.1).lessons
    pool = base + [base[rng.randrange(len(base))] + " again" for _ in range(120)]
    assert sum(template_key(t) is not None for t in base) > 50  # co-change notes: a clique
    texts = {f"e{k}": t for k, t in enumerate(pool[:700])}
    waiting = [(f"e{k}", t) for k, t in enumerate(pool[700:], start=700)]
    focus = set(rng.sample(sorted(texts), 40))
    previous = None
    found = 0
    for threshold in (CONFIG.complement_threshold, CONFIG.conflict_threshold):
        for _ in range(6):
            items = [
                Item(id=i, text=t, created="", order=k, template=template_key(t))
                for k, (i, t) in enumerate(texts.items())
            ]
            sets = encode([item.text for item in items], CONFIG.measure)
            got, previous = round_pairs(previous, sets, threshold, items, focus)
            full = similarity_join(sets, threshold)
            want = {
                (i, j, s)
                for i, j, s in zip(
                    full.left.tolist(), full.right.tolist(), full.similarity.tolist(), strict=True
                )
                if (items[i].id in focus or items[j].id in focus)
                and items[i].template == items[j].template  # comparable by structure
            }
            assert len(got) == len(set(got)) and set(got) == want
            found += len(want)
            ids = sorted(texts)
            for gone in rng.sample(ids, 15):  # merged away or archived
                del texts[gone]
            ids = sorted(texts)
            for changed in rng.sample(ids, 10):  # a survivor took the other's lesson
                texts[changed] = pool[rng.randrange(len(pool))]
            for _ in range(20):  # read into the population by a widened focus
                if waiting:
                    entry_id, text = waiting.pop()
                    texts[entry_id] = text
            focus.update(rng.sample(sorted(texts), 25))
    assert found > 100
