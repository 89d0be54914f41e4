"""Consolidating one knowledge tier (swarm, link or hive store).

The whole run happens under the store lock: recover a run a crash left open, plan on the
entries as they are, journal the plan and every changed entry to the events file, then write the
store once (temp file + rename: readers see it before or after, never between), then mark the
run committed. Entries nobody changed keep their exact bytes; superseded entries stay in the
store, archived, with a pointer to the entry that replaced them.
"""

from __future__ import annotations

import functools
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple, Required, TypedDict, Unpack

from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.events import (
    ENTRY_CHANGED,
    RUN_ABORTED,
    RUN_COMMITTED,
    RUN_STARTED,
    EventLog,
)
from swarmq.consolidation.merge import (
    KEEP_APART,
    RUN_KEY,
    link_entries,
    merge_entries,
    strength,
    supersede_entries,
)
from swarmq.consolidation.plan import Action, ActionKind, Item, Plan, Planner
from swarmq.consolidation.templates import template_key
from swarmq.knowledge.config import ValidationMode
from swarmq.knowledge.contradiction import Contexts, negation_contexts, opposed
from swarmq.knowledge.files import TierFiles
from swarmq.knowledge.model import Entry, Tier
from swarmq.knowledge.store import TierStore
from swarmq.knowledge.transaction import Transaction
from swarmq.similarity.measure import Measure
from swarmq.similarity.text import normalize_opencode
from swarmq.storage.clock import iso
from swarmq.storage.locking import Lease

CRASH_ENV = "SWARMQ_CONSOLIDATION_CRASH_AT"
"""Test hook: the named step (``journaled`` or ``committed``) kills the process right there."""

ProgressFn = Callable[[str, dict[str, Any]], None]


def crash_point(step: str) -> None:
    if os.environ.get(CRASH_ENV) == step:
        os._exit(86)


def events_path(files: TierFiles) -> Path:
    """``knowledge-consolidation.jsonl`` / ``shared-learnings-consolidation.jsonl``."""
    return files.root / f"{files.knowledge.stem}-consolidation.jsonl"


@functools.lru_cache(maxsize=262_144)
def _contexts(text: str, mode: ValidationMode) -> Contexts:
    return negation_contexts(text, mode)


def contradiction_test(mode: ValidationMode) -> Callable[[str, str], bool]:
    """The validator's test for one pair: opposing negation phrases with a shared neighbour,
    counting only phrases that just one of the texts says ("always X" against "always X, never
    Y" is a refinement, not a contradiction)."""

    def contradict(left: str, right: str) -> bool:
        a, b = _contexts(left, mode), _contexts(right, mode)
        only_a = {k: v for k, v in a.items() if k not in b}
        only_b = {k: v for k, v in b.items() if k not in a}
        return opposed(only_a, only_b)

    return contradict


@dataclass
class ScopeReport:
    """The outcome of consolidating one scope."""

    scope: str
    plan: Plan
    run_id: str | None = None
    dry_run: bool = False
    entries: int = 0
    changed: int = 0
    recovered: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        return {
            "scope": self.scope, "run_id": self.run_id, "dry_run": self.dry_run,
            "entries": self.entries, "active": self.plan.compared, "changed": self.changed,
            "rounds": self.plan.rounds, "converged": self.plan.converged,
            "counts": self.plan.counts(), "recovered": self.recovered,
            "seconds": round(self.seconds, 3),
        }


class KnowledgePopulation:
    """The entries of a tier being consolidated, changed in memory only."""

    def __init__(self, entries: list[Entry], *, at: str, run_id: str, store: TierStore,
                 config: ConsolidationConfig) -> None:
        self.current: dict[str, Entry] = {}
        for entry in entries:
            self.current.setdefault(entry.id, entry)  # a duplicated id: the first one counts
        self.order = {entry_id: n for n, entry_id in enumerate(self.current)}
        self.changed: dict[str, Entry] = {}
        self.at, self.run_id, self.store, self.config = at, run_id, store, config
        self._items: dict[str, Item] = {}

    def _item(self, entry: Entry) -> Item:
        item = self._items.get(entry.id)
        if item is None:
            item = self._items[entry.id] = self._build_item(entry)
        return item

    def _build_item(self, entry: Entry) -> Item:
        apart = entry.get(KEEP_APART)
        normalized = normalize_opencode(entry.lesson)
        template = template_key(entry.lesson)
        project = entry.get("project_name") if self.store.tier != Tier.HIVE else None
        project = project if isinstance(project, str) and project else None
        # Same fields of a templated note, or same normalised text (two words at least), in one
        # project: one group, merged in a single round.
        key = f"template:{template}" if template else f"text:{normalized}" if " " in normalized else None
        return Item(
            id=entry.id, text=entry.lesson, created=entry.created_at, order=self.order[entry.id],
            strength=strength(entry),
            fingerprint=None if key is None else f"{project or ''}\x00{key}",
            apart=frozenset(a for a in apart if isinstance(a, str)) if isinstance(apart, list) else frozenset(),
            template=template, project=project,
        )

    def items(self) -> list[Item]:
        return [self._item(e) for e in self.current.values() if e.is_active]

    def _set(self, entry: Entry) -> None:
        self._items.pop(entry.id, None)
        self.current[entry.id] = entry
        self.changed[entry.id] = entry

    def apply(self, action: Action) -> bool:
        keep, other = self.current[action.keep], self.current[action.other]
        if action.kind is ActionKind.MERGE:
            kept, gone = merge_entries(keep, other, at=self.at, run_id=self.run_id,
                                       reason=action.reason.value, config=self.store.config)
        elif action.kind is ActionKind.SUPERSEDE:
            kept, gone = supersede_entries(keep, other, at=self.at, run_id=self.run_id,
                                           reason=action.reason.value)
        else:
            left, right = link_entries(keep, other, run_id=self.run_id)
            for entry in (left, right):
                if entry is not None:
                    self._set(entry)
            return left is not None or right is not None
        self._set(kept)
        self._set(gone)
        return True


def action_record(action: Action, run_id: str, at: str) -> dict[str, Any]:
    kind = {"merge": "merged", "supersede": "superseded", "link": "linked"}[action.kind.value]
    return {"type": kind, "run_id": run_id, "at": at, "keep": action.keep, "other": action.other,
            "similarity": action.similarity, "reason": action.reason.value, "round": action.round,
            "scores": action.scores}


class RunStart(NamedTuple):
    """What every consolidation run opens with: its clock, id, planner and progress hook."""

    started: float
    at: str
    run_id: str
    planner: Planner
    on_round: Callable[[int, int], None]


def open_run(config: ConsolidationConfig, measure: Measure, *, scope: str,
             progress: ProgressFn | None, clock: Callable[[], datetime] | None) -> RunStart:
    """Start a run (knowledge tier or learnings): timestamp, run id, planner, round reporter."""
    started = time.monotonic()
    at = iso((clock or (lambda: datetime.now(UTC)))())
    run_id = f"{at[:10]}-{uuid.uuid4().hex[:12]}"
    planner = Planner(config, measure, contradiction_test(config.contradiction_mode))

    def on_round(round_no: int, actions: int) -> None:
        if progress is not None:
            progress("round", {"scope": scope, "round": round_no, "actions": actions})

    return RunStart(started, at, run_id, planner, on_round)


def recover(log: EventLog, entries: list[Entry], lease: Lease) -> list[str]:
    """Close every run a crash left open: committed if the store shows its marks, else aborted."""
    marks = {e.get(RUN_KEY) for e in entries}
    closed: list[str] = []
    for run in log.open_runs():
        done = run.run_id in marks
        log.append([{"type": RUN_COMMITTED if done else RUN_ABORTED, "run_id": run.run_id,
                     "at": iso(), "recovered": True}], lease)
        closed.append(run.run_id)
    return closed


class RunOptions(TypedDict, total=False):
    """How a run is asked for; the same keywords for a knowledge tier and for learnings."""

    scope: Required[str]
    dry_run: bool
    progress: ProgressFn | None
    clock: Callable[[], datetime] | None


PlanOnly = Callable[[RunStart], tuple[Plan, int, int]]
"""A dry run: the plan, how many entries were read, how many the plan would change."""


def drive_run(config: ConsolidationConfig, measure: Measure, options: RunOptions, *,
              plan_only: PlanOnly, commit: Callable[[RunStart], ScopeReport]) -> ScopeReport:
    """Open a run, then either only plan it or commit it; time it and report it done."""
    scope, progress = options["scope"], options.get("progress")
    run = open_run(config, measure, scope=scope, progress=progress, clock=options.get("clock"))
    if options.get("dry_run", False):
        plan, total, changed = plan_only(run)
        return ScopeReport(scope, plan, None, True, total, changed,
                           seconds=time.monotonic() - run.started)
    report = commit(run)
    report.seconds = time.monotonic() - run.started
    if progress is not None:
        progress("done", report.summary())
    return report


def consolidate_tier(store: TierStore, config: ConsolidationConfig,
                     **options: Unpack[RunOptions]) -> ScopeReport:
    """Consolidate one knowledge store; with ``dry_run`` only plan (nothing is written)."""
    scope = options["scope"]

    def plan_only(run: RunStart) -> tuple[Plan, int, int]:
        snapshot = store.read()
        population = KnowledgePopulation(list(snapshot.entries), at=run.at, run_id=run.run_id,
                                         store=store, config=config)
        plan = run.planner.run(population, on_round=run.on_round)
        return plan, len(snapshot.entries), len(population.changed)

    def commit(run: RunStart) -> ScopeReport:
        at, run_id = run.at, run.run_id
        log = EventLog(events_path(store.files))
        with store.locks.hold(store.files.resource, timeout=config.lock_timeout_seconds) as lease, \
                store.mirror.mutex:
            store.mirror.refresh()
            txn = Transaction(store, lease)
            entries = txn.entries
            recovered = recover(log, entries, lease)
            population = KnowledgePopulation(entries, at=at, run_id=run_id, store=store,
                                             config=config)
            plan = run.planner.run(population, on_round=run.on_round)
            report = ScopeReport(scope, plan, run_id if plan.changes else None, False,
                                 len(entries), len(population.changed), recovered)
            if plan.changes:
                before = {e.id: e for e in entries}
                after = {entry_id: txn.put(entry) for entry_id, entry in population.changed.items()}
                log.append([
                    {"type": RUN_STARTED, "run_id": run_id, "at": at, "scope": scope,
                     "store": str(store.files.knowledge), "counts": plan.counts(),
                     "rounds": plan.rounds},
                    *(action_record(a, run_id, at) for a in plan.actions),
                    *({"type": ENTRY_CHANGED, "run_id": run_id, "id": entry_id,
                       "before": before[entry_id].line(), "after": entry.line()}
                      for entry_id, entry in after.items()),
                ], lease)
                crash_point("journaled")
                txn.commit(lease)
                crash_point("committed")
                log.append([{"type": RUN_COMMITTED, "run_id": run_id, "at": iso()}], lease)
        return report

    return drive_run(config, config.measure, options, plan_only=plan_only, commit=commit)


def restore_superseded(
    store: TierStore, entry_id: str, *, clock: Callable[[], datetime] | None = None
) -> Entry:
    """Undo a merge or supersession of ``entry_id``: it returns to its status before, loses its
    ``superseded_by`` pointer, and the two entries are kept apart by later runs (so the next
    night does not undo the restore). The survivor keeps what it absorbed; the change is
    journalled like any other."""
    from swarmq.consolidation.merge import SUPERSEDED_BY
    from swarmq.knowledge.errors import EntryNotFound
    from swarmq.knowledge.quarantine import PRE_ARCHIVE_KEY

    at = iso((clock or (lambda: datetime.now(UTC)))())
    run_id = f"{at[:10]}-restore-{uuid.uuid4().hex[:8]}"
    log = EventLog(events_path(store.files))
    with store.transaction() as txn:
        current = txn.get(entry_id)
        if current is None or not isinstance(current.get(SUPERSEDED_BY), str):
            raise EntryNotFound(f"no superseded entry {entry_id} in {store.files.knowledge}")
        survivor_id = str(current.get(SUPERSEDED_BY))
        prior = current.get(PRE_ARCHIVE_KEY)
        status = prior if isinstance(prior, str) and prior != "archived" else "candidate"
        apart = [*_strings(current.get(KEEP_APART)), survivor_id]
        revived = txn.put(current.changed(
            {"status": status, "updated_at": at, KEEP_APART: apart, RUN_KEY: run_id},
            remove=(SUPERSEDED_BY, "superseded_at", "supersede_reason", PRE_ARCHIVE_KEY),
            bump_revision=False))
        records: list[dict[str, Any]] = [
            {"type": RUN_STARTED, "run_id": run_id, "at": at, "scope": "restore",
             "store": str(store.files.knowledge)},
            {"type": "restored", "run_id": run_id, "at": at, "id": entry_id, "was_superseded_by": survivor_id},
            {"type": ENTRY_CHANGED, "run_id": run_id, "id": entry_id, "before": current.line(),
             "after": revived.line()},
        ]
        survivor = txn.get(survivor_id)
        if survivor is not None:
            kept = txn.put(survivor.changed(
                {KEEP_APART: [*_strings(survivor.get(KEEP_APART)), entry_id], RUN_KEY: run_id},
                bump_revision=False))
            records.append({"type": ENTRY_CHANGED, "run_id": run_id, "id": survivor_id,
                            "before": survivor.line(), "after": kept.line()})
        log.append(records, txn.lease)
    log.append([{"type": RUN_COMMITTED, "run_id": run_id, "at": iso()}], None)
    return revived


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
