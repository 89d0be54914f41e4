"""Fusion's grouping against the rule it implements, tested on every pair."""

from __future__ import annotations

import random

from swarmq.federated.finding import Finding, Store
from swarmq.federated.fuse import _Groups, _Shape, fuse

TEXTS = [
    "`cat docs/workflow.md` failed: use the Read tool",
    "`cat docs/workflow.md` failed: use the Read tool!",
    "`cat docs/step-01-init.md` failed: use the Read tool",
    "Pin the node version in .nvmrc for CI",
    "pin the Node version in .nvmrc for CI.",
    "CI: pin the node version in .nvmrc",
    "Use pnpm fetch in Docker",
    "!!!",
    "",
]


def _every_pair(findings: list[Finding], threshold: float) -> set[frozenset[str]]:
    """The groups of the fold rule applied to every pair (links left out: none given)."""
    groups = _Groups(len(findings))
    shapes = [_Shape.of(f.text) for f in findings]
    for i in range(len(findings)):
        for j in range(i + 1, len(findings)):
            stores = (findings[i].store, findings[j].store)
            if shapes[i].folds(shapes[j], stores, threshold):
                groups.join(i, j)
    out: dict[int, set[str]] = {}
    for index, finding in enumerate(findings):
        out.setdefault(groups.find(index), set()).add(finding.id)
    return {frozenset(ids) for ids in out.values()}


def test_fusion_groups_as_the_rule_applied_to_every_pair() -> None:
    """Two findings of one deduplicating store are joined by their text through a dictionary
    (a session start on a 100k store fuses a thousand); the groups must be those of testing
    every pair, across stores and within memory included."""
    generator = random.Random(7)
    stores = [Store.SWARM, Store.HIVE, Store.LEARNING, Store.SHARED_MEMORY, Store.WORKER_MEMORY]
    for trial in range(60):
        findings = [
            Finding(store, f"{trial}-{n}", generator.choice(TEXTS), n + 1, 0.5, f"{n}")
            for n, store in enumerate(generator.choices(stores, k=generator.randint(1, 14)))
        ]
        answers: dict[Store, list[Finding]] = {}
        for finding in findings:
            answers.setdefault(finding.store, []).append(finding)
        ordered = [f for answer in answers.values() for f in answer]
        fused = fuse(list(answers.values()), dedup_threshold=0.6)
        got = {frozenset([f.finding.id, *(m.id for m in f.also)]) for f in fused}
        assert got == _every_pair(ordered, 0.6)
        assert sum(len(group) for group in got) == len(findings)
