"""Consolidating an AgentOps learnings store (``.agents/learnings/`` and ``.agents/patterns/``).

Learnings are one Markdown (or JSONL) file each, in the flywheel's formats
(:mod:`swarmq.flywheel.artifacts`). Exact duplicates are found by AgentOps' content
hash, near duplicates by the similarity join on the canonical body. A merged or superseded
learning gets ``superseded_by``, ``is_current: false`` and the reason in its front matter and
moves to ``.agents/archive/learnings/`` (where the flywheel's own evictions go, and from where
it can be moved back); the survivor sums ``reward_count``/``helpful_count``/``harmful_count``,
takes the reward-weighted utility and the higher confidence, and lists what it ``supersedes``.
Bodies are never rewritten, only front-matter keys, so unknown keys and text survive.

A run changes several files, so it is journalled first (the "after" text of every file) and
applied file by file; a crash mid-way is rolled forward by the next run under the same lock,
which leaves the store exactly as the run meant it to be.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from swarmq.consolidation._events import (
    ENTRY_CHANGED,
    RUN_ABORTED,
    RUN_COMMITTED,
    RUN_STARTED,
    EventLog,
)
from swarmq.consolidation._merge import COMPLEMENTS, RUN_KEY, SUPERSEDED_BY, SUPERSEDES
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.items import Action, ActionKind, Item, Plan
from swarmq.consolidation.knowledge import (
    ConsolidationRun,
    ProgressFn,
    ScopeReport,
    action_record,
    crash_point,
)
from swarmq.flywheel.artifacts import (
    Learning,
    learning_files,
    learning_from_text,
    updated_text,
)
from swarmq.flywheel.content import content_hash
from swarmq.flywheel.store import AgentsLayout, remove_file, write_file
from swarmq.storage.clock import iso
from swarmq.storage.locking import Lease, StoreLocks

EVENTS_FILE = "consolidation.jsonl"
"""In ``.agents/ao/``: the journal of learnings consolidation."""

_MATURITY_RANK = {"established": 2.0, "candidate": 1.0, "provisional": 0.0, "anti-pattern": -1.0}


def events_path(layout: AgentsLayout) -> Path:
    return layout.ao / EVENTS_FILE


def _ids(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str) and value.strip():
        return [v.strip() for v in value.strip("[]").split(",") if v.strip()]
    return []


def _flow(ids: list[str]) -> str:
    """A YAML flow sequence (ids are slugs, so no quoting is needed)."""
    return "[" + ", ".join(ids) + "]"


@dataclass
class Doc:
    """One learning file being consolidated: where it is, where it goes, its text."""

    path: Path
    learning: Learning
    target: Path

    @property
    def id(self) -> str:
        return self.learning.id

    @property
    def active(self) -> bool:
        fields = self.learning.fields
        return not fields.get(SUPERSEDED_BY) and fields.get("is_current") not in (False, "false")


class LearningsPopulation:
    def __init__(
        self,
        layout: AgentsLayout,
        docs: list[Doc],
        *,
        at: str,
        run_id: str,
        config: ConsolidationConfig,
    ) -> None:
        self.layout, self.at, self.run_id, self.config = layout, at, run_id, config
        self.docs: dict[str, Doc] = {}
        for doc in docs:
            self.docs.setdefault(doc.id, doc)
        self.order = {doc_id: n for n, doc_id in enumerate(self.docs)}
        self.changed: dict[str, Doc] = {}

    def items(self) -> list[Item]:
        return [self._item(doc) for doc in self.docs.values() if doc.active]

    def item(self, entry_id: str) -> Item:
        return self._item(self.docs[entry_id])

    def _item(self, doc: Doc) -> Item:
        learning = doc.learning
        return Item(
            id=doc.id,
            text=learning.body,
            created=str(learning.fields.get("date") or doc.path.name),
            order=self.order[doc.id],
            strength=(
                _MATURITY_RANK.get(learning.maturity, 0.0),
                learning.utility,
                float(learning.count("reward_count")),
                learning.confidence,
            ),
            fingerprint=content_hash(learning.text)
            if doc.path.suffix == ".md"
            else content_hash(learning.body),
        )

    def _update(self, doc: Doc, updates: dict[str, Any], *, archive: bool = False) -> None:
        text = updated_text(doc.learning, updates)
        learning = learning_from_text(doc.path, text) or doc.learning
        target = doc.target
        if archive and doc.target.parent != self.layout.archive:
            target = self.layout.archive / doc.path.name
            if target.exists() and target != doc.path:
                target = (
                    self.layout.archive / f"{doc.path.stem}-{self.run_id[-8:]}{doc.path.suffix}"
                )
        updated = Doc(doc.path, learning, target)
        self.docs[doc.id] = updated
        self.changed[doc.id] = updated

    def apply(self, action: Action) -> bool:
        keep, other = self.docs[action.keep], self.docs[action.other]
        if action.kind is ActionKind.LINK:
            changed = False
            for a, b in ((keep, other), (other, keep)):
                current = _ids(a.learning.fields.get(COMPLEMENTS))
                if b.id not in current:
                    self._update(a, {COMPLEMENTS: _flow([*current, b.id]), RUN_KEY: self.run_id})
                    changed = True
            return changed
        survivor, gone = keep.learning, other.learning
        updates: dict[str, Any] = {
            SUPERSEDES: _flow([*_ids(survivor.fields.get(SUPERSEDES)), other.id]),
            RUN_KEY: self.run_id,
        }
        if action.kind is ActionKind.MERGE:
            rewards = survivor.count("reward_count") + gone.count("reward_count")
            weight_a, weight_b = survivor.count("reward_count") + 1, gone.count("reward_count") + 1
            updates.update(
                {
                    "reward_count": rewards,
                    "helpful_count": survivor.count("helpful_count") + gone.count("helpful_count"),
                    "harmful_count": survivor.count("harmful_count") + gone.count("harmful_count"),
                    "utility": (survivor.utility * weight_a + gone.utility * weight_b)
                    / (weight_a + weight_b),
                    "confidence": max(survivor.confidence, gone.confidence),
                }
            )
        self._update(keep, updates)
        self._update(
            other,
            {
                SUPERSEDED_BY: keep.id,
                "superseded_at": self.at,
                "supersede_reason": action.reason.value,
                "is_current": False,
                RUN_KEY: self.run_id,
            },
            archive=True,
        )
        return True


def load_docs(layout: AgentsLayout) -> list[Doc]:
    docs: list[Doc] = []
    for path in learning_files(layout.learnings, layout.patterns):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # not a learning swarmq can read; left untouched
        learning = learning_from_text(path, text)
        if learning is not None:
            docs.append(Doc(path, learning, path))
    return docs


def _apply_change(change: dict[str, Any], lease: Lease) -> bool:
    """Write one journalled file change; ``False`` when someone else changed the file since."""
    src, dst = Path(change["path"]), Path(change["target"])
    before, after = change["before"], change["after"]
    try:
        if dst.read_text(encoding="utf-8") == after:
            if src != dst and src.exists() and src.read_text(encoding="utf-8") == before:
                remove_file(src, lease=lease, store=src.parent)
            return True
    except FileNotFoundError:
        pass
    try:
        current = src.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = None
    if current is not None and current != before:
        return False
    write_file(dst, after, lease=lease, store=src.parent, mode=0o644)
    if src != dst:
        remove_file(src, lease=lease, store=src.parent)
    return True


def recover(log: EventLog, lease: Lease) -> list[str]:
    """Roll every run a crash left open forward to its journalled "after" state."""
    closed: list[str] = []
    for run in log.open_runs():
        conflicts = [c["id"] for c in run.changes if not _apply_change(c, lease)]
        log.append(
            [
                {
                    "type": RUN_ABORTED
                    if conflicts and len(conflicts) == len(run.changes)
                    else RUN_COMMITTED,
                    "run_id": run.run_id,
                    "at": iso(),
                    "recovered": True,
                    "conflicts": conflicts,
                }
            ],
            lease,
        )
        closed.append(run.run_id)
    return closed


class LearningsRun(ConsolidationRun):
    """A run over the learnings of one scope."""

    def __init__(
        self,
        layout: AgentsLayout,
        locks: StoreLocks,
        config: ConsolidationConfig,
        *,
        scope: str,
        progress: ProgressFn | None,
        clock: Callable[[], datetime] | None,
    ) -> None:
        super().__init__(
            config, config.learnings_measure, scope=scope, progress=progress, clock=clock
        )
        self.layout, self.locks = layout, locks

    def plan_only(self) -> tuple[Plan, int, int]:
        docs = load_docs(self.layout)
        population = LearningsPopulation(
            self.layout, docs, at=self.at, run_id=self.run_id, config=self.config
        )
        plan = self.planner.run(population, on_round=self.on_round)
        return plan, len(docs), len(population.changed)

    def commit(self) -> ScopeReport:
        layout, config, scope, at, run_id = (
            self.layout,
            self.config,
            self.scope,
            self.at,
            self.run_id,
        )
        log = EventLog(events_path(layout))
        with self.locks.hold(layout.learnings_lock, timeout=config.lock_timeout_seconds) as lease:
            recovered = recover(log, lease)
            docs = load_docs(layout)
            population = LearningsPopulation(layout, docs, at=at, run_id=run_id, config=config)
            plan = self.planner.run(population, on_round=self.on_round)
            report = ScopeReport(
                scope,
                plan,
                run_id if plan.changes else None,
                False,
                len(docs),
                len(population.changed),
                recovered,
            )
            if plan.changes:
                originals = {doc.id: doc for doc in docs}
                changes = [
                    {
                        "type": ENTRY_CHANGED,
                        "run_id": run_id,
                        "id": doc_id,
                        "path": str(doc.path),
                        "target": str(doc.target),
                        "before": originals[doc_id].learning.text,
                        "after": doc.learning.text,
                    }
                    for doc_id, doc in population.changed.items()
                ]
                log.append(
                    [
                        {
                            "type": RUN_STARTED,
                            "run_id": run_id,
                            "at": at,
                            "scope": scope,
                            "store": str(layout.learnings),
                            "counts": plan.counts(),
                            "rounds": plan.rounds,
                        },
                        *(action_record(a, run_id, at) for a in plan.actions),
                        *changes,
                    ],
                    lease,
                )
                crash_point("journaled")
                for number, change in enumerate(changes):
                    _apply_change(change, lease)
                    if number == 0:
                        crash_point("partial")
                log.append([{"type": RUN_COMMITTED, "run_id": run_id, "at": iso()}], lease)
        return report


def consolidate_learnings(
    layout: AgentsLayout,
    locks: StoreLocks,
    config: ConsolidationConfig,
    *,
    scope: str,
    dry_run: bool = False,
    progress: ProgressFn | None = None,
    clock: Callable[[], datetime] | None = None,
) -> ScopeReport:
    """Consolidate the learnings of one scope; with ``dry_run`` only plan (nothing is written)."""
    run = LearningsRun(layout, locks, config, scope=scope, progress=progress, clock=clock)
    return run.execute(dry_run=dry_run)
