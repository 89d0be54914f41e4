"""Failure signatures on the real failing calls of eval/recall/failures.json: how often the same
failure in two sessions gets the same signature, how often different failures collide, with the
exact signature and with a looser same-program same-class fallback, and whether a lesson in
forge's tool-error form carries the signature of the failure it came from.

    python eval/recall/measure.py [--verbose]
"""

from __future__ import annotations

import json
import sys
from itertools import combinations
from pathlib import Path
from typing import Any

from swarmq.forge._calls import error_excerpt, summarise_call
from swarmq.forge._sequences import Sequence
from swarmq.knowledge.signature import failure_signature, failure_signatures

FIXTURE = Path(__file__).with_name("failures.json")
UNLABELLED = ("none", "other")


def cases() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))["cases"]
    return data


def hook_text(case: dict[str, Any]) -> str:
    """What a hook hands to recall: the call on a ``$`` line, then the tool's output."""
    call = case["call"].splitlines()[0] if case["call"] else case["tool"]
    return f"$ {call}\n{case['error']}"


def lesson_text(case: dict[str, Any]) -> str:
    """The lesson forge writes for a failed call that no retry fixed, as ``_sequences`` writes
    it (the call, its error line, what the error says about the machine)."""
    call = summarise_call(case["call"])
    return Sequence(case["tool"], call, error_excerpt(case["error"]), "", "", 0, 0, None).content()


def fallback(signature: str | None) -> str | None:
    """Same program, same class: the signature without what it names (``…: commands``)."""
    if signature is None:
        return None
    head, _, rest = signature.partition(": ")
    return f"{head}: {rest.split(': ')[0]}" if rest else signature


def pairs(rows: list[dict[str, Any]], key: str) -> dict[str, int]:
    """Over pairs of labelled failures from different sessions: matches of one failure (same
    group), misses of one failure, and collisions of different failures."""
    out = {"same_matched": 0, "same_missed": 0, "different_matched": 0, "different": 0}
    for a, b in combinations(rows, 2):
        if a["file"] == b["file"]:
            continue
        same = a["group"] == b["group"] and a["group"] not in UNLABELLED
        matched = a[key] is not None and a[key] == b[key]
        if same:
            out["same_matched" if matched else "same_missed"] += 1
        elif a["group"] != "none" and b["group"] != "none":
            out["different"] += 1
            out["different_matched"] += matched
    return out


def main() -> None:
    verbose = "--verbose" in sys.argv
    rows = cases()
    for row in rows:
        row["exact"] = failure_signature(hook_text(row))
        row["fallback"] = fallback(row["exact"])
    none = [r for r in rows if r["group"] == "none"]
    labelled = [r for r in rows if r["group"] not in UNLABELLED]
    groups: dict[str, set[str | None]] = {}
    for row in labelled:
        groups.setdefault(row["group"], set()).add(row["exact"])
    split = {g: s for g, s in groups.items() if len(s) > 1 or None in s}
    owners: dict[str, set[str]] = {}
    for group, signatures in groups.items():
        for signature in signatures - {None}:
            owners.setdefault(signature, set()).add(group)
    shared = {s: g for s, g in owners.items() if len(g) > 1}
    trip = [
        r for r in labelled if failure_signature(lesson_text(r)) in failure_signatures(hook_text(r))
    ]
    report = {
        "cases": len(rows),
        "sessions": len({r["file"] for r in rows}),
        "groups": len(groups),
        "groups_recurring_across_sessions": sum(
            1 for g in groups if len({r["file"] for r in labelled if r["group"] == g}) > 1
        ),
        "no_failure_silent": f"{sum(r['exact'] is None for r in none)}/{len(none)}",
        "groups_with_one_signature": f"{len(groups) - len(split)}/{len(groups)}",
        "signatures_shared_by_groups": len(shared),
        "exact_pairs": pairs(rows, "exact"),
        "fallback_pairs": pairs(rows, "fallback"),
        "forge_lesson_roundtrip": f"{len(trip)}/{len(labelled)}",
    }
    print(json.dumps(report, indent=1))
    if verbose:
        for group, signatures in sorted(split.items()):
            print("split:", group, signatures)
        for signature, owner in sorted(shared.items()):
            print("shared:", signature, owner)
        for row in labelled:
            if row not in trip:
                print(
                    "roundtrip:",
                    row["group"],
                    "|",
                    lesson_text(row)[:160],
                    "=>",
                    failure_signature(lesson_text(row)),
                    "vs",
                    row["exact"],
                )


if __name__ == "__main__" and "--facts" not in sys.argv:
    main()


def facts() -> None:
    """The project-fact rule on the labelled lessons of eval/forge (eval/recall/facts.json)."""
    from swarmq.knowledge._factrule import fact_kind

    rows = json.loads(FIXTURE.with_name("facts.json").read_text(encoding="utf-8"))["lessons"]
    for split in ("tune", "held-out"):
        part = [r for r in rows if r["split"] == split]
        said = [r for r in part if fact_kind(r["lesson"]) is not None]
        true = [r for r in part if r["fact"]]
        hit = [r for r in said if r["fact"]]
        print(
            f"facts {split}: {len(part)} lessons, {len(true)} facts; rule says {len(said)}, "
            f"precision {len(hit) / max(1, len(said)):.2f}, recall {len(hit) / max(1, len(true)):.2f}"
        )
        if "--verbose" in sys.argv:
            for r in part:
                if (fact_kind(r["lesson"]) is not None) != bool(r["fact"]):
                    print("  ", "FP" if r["fact"] is None else "FN", r["lesson"][:150])


if __name__ == "__main__" and "--facts" in sys.argv:
    facts()
