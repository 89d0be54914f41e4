"""Fusion's grouping against the rule it implements, tested on every pair."""

from __future__ import annotations

import random

from swarmq.federated.finding import Finding, Store
from swarmq.federated.fuse import _Groups, _Shape, fuse, stated

TEXTS = [
    "`cat docs/workflow.md` failed: use the Read tool",
    "`cat docs/workflow.md` failed: use the Read tool!",
    "`cat docs/step-01-init.md` failed: use the Read tool",
    "Pin the node version in .nvmrc for CI",
    "pin the Node version in .nvmrc for CI.",
    "CI: pin the node version in .nvmrc",
    "Use pnpm fetch in Docker",
    "`apply_patch A.md` failed (invalid hunk at line 3); in an `*** Add File:` hunk every line"
    " needs a `+` prefix; `apply_patch B` worked instead.",
    "`apply_patch C.yaml` failed (invalid hunk at line 9 (x)); in an `*** Add File:` hunk every"
    " line needs a `+` prefix",
    "`cat a/workflow.md` failed (No such file); `cat b/workflow.md` worked instead.",
    "`cat a/step-01.md` failed (No such file); `cat b/step-01.md` worked instead.",
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


def test_tool_error_lessons_saying_the_same_beyond_their_instance_are_one_result() -> None:
    """One rule met on three calls is three forged lessons that differ in their call and error
    only: one result. Lessons whose cure differs (where the missing file really is) stay two,
    and so do lessons whose stated part is too short to tell anything."""
    rule = "in an apply_patch `*** Add File:` hunk every line of the new file needs a `+` prefix"
    texts = [
        f"`apply_patch *** Add File: assets/README.md (e.g., copy…` failed (error: invalid hunk at"
        f" line 3, 'x' (y)); {rule}; `apply_patch *** Begin Patch` worked instead.",
        f"`apply_patch *** Begin…m-lock.yaml…` failed (error: invalid hunk at line 9); {rule}.",
        f"`apply_patch *** Add File: ci.yml` failed (error: invalid hunk at line 2); {rule}; after"
        " `apply_patch x` the same call worked.",
        "`cat a/workflow.md` failed (No such file); `cat b/workflow.md` worked instead.",
        "`cat a/step-01.md` failed (No such file); `cat b/step-01.md` worked instead.",
        "`npm test` failed (exit 1); run it twice.",
        "`npm run lint` failed (exit 1); run it twice.",
    ]
    assert len({stated(t) for t in texts[:3]}) == 1 and stated(texts[0])
    assert stated(texts[3]) == stated(texts[5]) == ""
    assert stated("`x` failed (never closed; a clipped lesson") == ""
    findings = [Finding(Store.SWARM, f"e{n}", t, n + 1, 0.5, "swarm") for n, t in enumerate(texts)]
    fused = fuse([findings])
    assert [f.finding.id for f in fused] == ["e0", "e3", "e4", "e5", "e6"]
    assert [m.id for m in fused[0].also] == ["e1", "e2"]
