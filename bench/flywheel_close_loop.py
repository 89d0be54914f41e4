"""Close-loop time over a pool of 10k candidates.

    python bench/flywheel_close_loop.py [--entries 10000] [--learnings 1000] [--citations 20000]

A project is generated in a temporary directory: ``--entries`` pool candidates in AgentOps'
format (tiers from the real score distribution, ages 0-72 h, a tenth staged), ``--learnings``
promoted learnings with front matter, and ``--citations`` citation lines spread over both (some
helpful or harmful). Then ``close_loop`` runs twice with same-host file locks:

* the first pass does the work: rejects discard-tier candidates, promotes every candidate past
  the gates (each a fenced, fsynced artifact plus index line and chain event), applies feedback,
  decays and matures the learnings, measures;
* the second pass is the steady state a scheduled job sees: nothing left to promote.

The baseline named by the issue is simply seconds; a bare scan (read and parse every pool file
once) is printed alongside for scale.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from swarmq.flywheel.closeloop import close_loop
from swarmq.flywheel.config import FlywheelConfig
from swarmq.flywheel.model import ZERO_TIME, assign_tier, rfc3339, tier_config
from swarmq.flywheel.store import AgentsLayout
from swarmq.storage.locking import LocalLocks

TYPES = ["decision", "solution", "learning", "failure", "reference"]


def build(
    root: Path, entries: int, learnings: int, citations: int, now: datetime, seed: int = 7
) -> AgentsLayout:
    rng = random.Random(seed)
    layout = AgentsLayout(root / ".agents")
    for sub in ("pending", "staged"):
        (layout.pool / sub).mkdir(parents=True, exist_ok=True)
    ids = []
    for n in range(entries):
        ident = f"pend-2026-03-01-forge-{n:06d}-f-{rng.getrandbits(40):010x}"
        ids.append(ident)
        raw = min(1.0, max(0.0, rng.gauss(0.72, 0.12)))
        tier = assign_tier(raw)
        added = now - timedelta(hours=rng.uniform(0, 72))
        body = (
            f"# Learning: item {n}\n\n**ID**: f-{n}\n**Category**: {rng.choice(TYPES)}\n\n## What We Learned\n\n"
            f"Candidate {n}: keep `module_{n % 97}.py` behind the lock because run {rng.random():.6f} raced.\n"
        )
        candidate = {
            "id": ident,
            "type": rng.choice(TYPES),
            "content": body,
            "source": {
                "transcript_path": f"/t/{n}.jsonl",
                "message_index": n % 50,
                "timestamp": rfc3339(added),
                "session_id": f"s{n % 300}",
            },
            "raw_score": raw,
            "tier": tier.value,
            "extracted_at": rfc3339(added),
            "metadata": {"pending_category": "learning"},
            "is_current": True,
            "expiry_status": "active",
            "utility": 0.5,
            "last_reward_at": ZERO_TIME,
            "maturity": "provisional",
            "confidence": tier_config(tier).confidence,
            "last_decay_at": rfc3339(added),
        }
        status = "staged" if rng.random() < 0.1 else "pending"
        entry = {
            "candidate": candidate,
            "scoring_result": {
                "raw_score": raw,
                "tier_assignment": tier.value,
                "rubric": {},
                "gate_required": tier.value == "bronze",
                "scored_at": rfc3339(added),
            },
            "status": status,
            "added_at": rfc3339(added),
            "updated_at": rfc3339(added),
        }
        (layout.pool / status / f"{ident}.json").write_text(json.dumps(entry, indent=2))
    layout.learnings.mkdir(parents=True)
    paths = []
    for n in range(learnings):
        path = layout.learnings / f"2026-02-{1 + n % 28:02d}-learning-{n:05d}.md"
        made = now - timedelta(days=rng.uniform(1, 120))
        path.write_text(
            f"---\nid: learning-{n}\ntype: learning\ndate: {made:%Y-%m-%d}\ntier: silver\n"
            f"utility: {rng.uniform(0.1, 0.9):.4f}\nconfidence: {rng.uniform(0.1, 0.95):.4f}\n"
            f"maturity: {rng.choice(['provisional', 'candidate', 'established'])}\n"
            f"reward_count: {rng.randrange(8)}\nhelpful_count: {rng.randrange(5)}\n"
            f"harmful_count: {rng.randrange(3)}\nlast_decay_at: {rfc3339(made)}\n---\n\n"
            f"# Learning: {n}\n\n## What We Learned\n\nLearning body {n}.\n"
        )
        paths.append(f".agents/learnings/{path.name}")
    layout.citations.parent.mkdir(parents=True, exist_ok=True)
    kinds = ["retrieved"] * 8 + ["helpful", "harmful"]
    with layout.citations.open("w") as handle:
        for n in range(citations):
            target = (
                f".agents/pool/pending/{rng.choice(ids)}.json"
                if rng.random() < 0.5
                else rng.choice(paths)
            )
            handle.write(
                json.dumps(
                    {
                        "artifact_path": target,
                        "session_id": f"s{n % 500}",
                        "cited_at": rfc3339(now - timedelta(hours=rng.uniform(0, 200))),
                        "citation_type": rng.choice(kinds),
                        "feedback_at": ZERO_TIME,
                    }
                )
                + "\n"
            )
    return layout


def bare_scan(layout: AgentsLayout) -> float:
    started = time.perf_counter()
    for sub in ("pending", "staged", "rejected"):
        directory = layout.pool / sub
        if directory.exists():
            for name in os.listdir(directory):
                json.loads((directory / name).read_text())
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--learnings", type=int, default=1_000)
    parser.add_argument("--citations", type=int, default=20_000)
    args = parser.parse_args()
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp:
        layout = build(Path(tmp), args.entries, args.learnings, args.citations, now)
        locks = LocalLocks(Path(tmp) / "locks")
        scan = bare_scan(layout)
        first = close_loop(layout, locks, FlywheelConfig(), now=now)
        second = close_loop(layout, locks, FlywheelConfig(), now=now + timedelta(minutes=5))
    print(f"pool {args.entries} entries, {args.learnings} learnings, {args.citations} citations")
    print(f"bare scan (read + parse every pool file): {scan:.2f} s")
    print(
        f"close-loop, first pass : {first.seconds:6.2f} s  (promoted {len(first.promoted)}, "
        f"rejected discard {first.rejected_discard}, held {dict(first.held)}, feedback rewards "
        f"{first.feedback['rewards']}, maturity transitions {len(first.maturity.transitions)}, "
        f"decayed {first.maturity.decayed}, evicted {len(first.maturity.evicted)})"
    )
    print(
        f"close-loop, steady     : {second.seconds:6.2f} s  (promoted {len(second.promoted)}, "
        f"held {sum(second.held.values())})"
    )


if __name__ == "__main__":
    main()
