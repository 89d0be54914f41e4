"""A test-only task: one worker process running a seeded mix of store operations through the
public knowledge API with the cluster's Redis store locks (loaded via ``SWARMQ_EXTRA_TASKS``)."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from swarmq.knowledge.reinforcement import NewLesson
from swarmq.wiring.knowledge import knowledge_store
from swarmq.workers.app import app
from swarmq.workers.base import SwarmTask


def lesson(rng: random.Random, worker: int, index: int) -> str:
    words = " ".join(f"{rng.getrandbits(24):06x}" for _ in range(4))
    return f"Prefer {words} over w{worker}x{index} when running checks"


@app.task(name="maturity.test_stress", bind=True)
def stress(self: SwarmTask, worker: int, ops: int, seed: int) -> dict[str, Any]:
    knowledge = knowledge_store(self.roster, self.cluster.locks)
    store = knowledge.swarm
    rng = random.Random(seed)
    mine: list[str] = []
    held: list[str] = []
    reinforced: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    for index in range(ops):
        roll = rng.random()
        phase = worker * 1_000_000 + index  # unique across every process and operation
        if roll < 0.4 or not mine:
            result = store.add(NewLesson(lesson(rng, worker, index)), phase=phase)
            assert result.outcome == "added" and result.entry is not None, result
            mine.append(result.entry.id)
            counts["add"] += 1
        elif roll < 0.75:
            ids = [e.id for e in store.read().entries]
            target = rng.choice(ids)
            outcome = store.reinforce(target, phase).outcome
            if outcome == "reinforced":
                reinforced[target] += 1
            counts[f"reinforce:{outcome}"] += 1
        elif roll < 0.9:
            target = mine.pop(rng.randrange(len(mine)))
            store.quarantine(target, f"stress {worker}/{index}", "auto")
            held.append(target)
            counts["quarantine"] += 1
        elif held:
            target = held.pop(rng.randrange(len(held)))
            store.restore(target)
            mine.append(target)
            counts["restore"] += 1
        else:
            counts["noop"] += 1
    return {
        "active": mine,
        "quarantined": held,
        "reinforced": dict(reinforced),
        "counts": dict(counts),
    }
