"""Consolidating one knowledge tier (swarm, link or hive store).

The whole run happens under the store lock: recover a run a crash left open, plan on the
entries as they are, journal the plan and every changed entry to the events file, then write the
store once (temp file + rename: readers see it before or after, never between), then mark the
run committed. Entries nobody changed keep their exact bytes; superseded entries stay in the
store, archived, with a pointer to the entry that replaced them.
"""

from __future__ import annotations

import functools
import gc
import os
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from swarmq.consolidation import _indexed
from swarmq.consolidation._events import (
    ENTRY_CHANGED,
    RUN_ABORTED,
    RUN_COMMITTED,
    RUN_STARTED,
    EventLog,
)
from swarmq.consolidation._lean import LeanPopulation
from swarmq.consolidation._merge import (
    KEEP_APART,
    RUN_KEY,
    SUPERSEDED_BY,
)
from swarmq.consolidation._mlvectors import vectors_file
from swarmq.consolidation._nightly import FocusedPlanner
from swarmq.consolidation._plan import Planner
from swarmq.consolidation._population import KnowledgePopulation
from swarmq.consolidation._watermark import (
    DigestArray,
    line_digests,
    load,
    save_digests,
    watermark_path,
)
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.items import Action, Plan
from swarmq.knowledge import postings, storesets
from swarmq.knowledge.contradiction import pair_contradicts
from swarmq.knowledge.errors import EntryNotFound
from swarmq.knowledge.files import TierFiles
from swarmq.knowledge.model import PRE_ARCHIVE_KEY, Entry
from swarmq.knowledge.store import TierStore
from swarmq.similarity.measure import Measure
from swarmq.similarity.script import non_latin
from swarmq.similarity.static_embedder import default_embedder
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
    focus: int | None = None
    """Entries changed since the last run that this run joined against the store; ``None``
    for a full pass."""
    indexed: bool = False
    """Whether the run read the store through its index (only the focus and its possible
    partners parsed) rather than loaded."""
    parsed: int | None = None
    """Entries the indexed run parsed (``None`` when the store was loaded)."""

    def summary(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "run_id": self.run_id,
            "dry_run": self.dry_run,
            "entries": self.entries,
            "active": self.plan.compared,
            "changed": self.changed,
            "rounds": self.plan.rounds,
            "converged": self.plan.converged,
            "counts": self.plan.counts(),
            "recovered": self.recovered,
            "mode": "full" if self.focus is None else "incremental",
            "focus": self.focus,
            "indexed": self.indexed,
            "parsed": self.parsed,
            "seconds": round(self.seconds, 3),
        }


def action_record(action: Action, run_id: str, at: str) -> dict[str, Any]:
    kind = {"merge": "merged", "supersede": "superseded", "link": "linked"}[action.kind.value]
    return {
        "type": kind,
        "run_id": run_id,
        "at": at,
        "keep": action.keep,
        "other": action.other,
        "similarity": action.similarity,
        "reason": action.reason.value,
        "round": action.round,
        "scores": action.scores,
    }


class ConsolidationRun(ABC):
    """One run over one scope (a knowledge tier or learnings): its clock, id, planner and
    progress reports. A dry run only plans; otherwise :meth:`commit` plans and writes under the
    scope's lock."""

    def __init__(
        self,
        config: ConsolidationConfig,
        measure: Measure,
        *,
        scope: str,
        progress: ProgressFn | None,
        clock: Callable[[], datetime] | None,
    ) -> None:
        self.config, self.scope, self.progress = config, scope, progress
        self.started = time.monotonic()
        self.at = iso((clock or (lambda: datetime.now(UTC)))())
        self.run_id = f"{self.at[:10]}-{uuid.uuid4().hex[:12]}"
        self.planner = Planner(
            config,
            measure,
            functools.partial(pair_contradicts, mode=config.contradiction_mode),
            default_embedder,
        )

    def on_round(self, round_no: int, actions: int) -> None:
        if self.progress is not None:
            self.progress("round", {"scope": self.scope, "round": round_no, "actions": actions})

    def execute(self, *, dry_run: bool) -> ScopeReport:
        """Plan only (``dry_run``) or commit; time the run and report it done."""
        if dry_run:
            plan, total, changed = self.plan_only()
            return ScopeReport(
                self.scope,
                plan,
                None,
                True,
                total,
                changed,
                seconds=time.monotonic() - self.started,
            )
        report = self.commit()
        report.seconds = time.monotonic() - self.started
        if self.progress is not None:
            self.progress("done", report.summary())
        return report

    @abstractmethod
    def plan_only(self) -> tuple[Plan, int, int]:
        """A dry run: the plan, how many entries were read, how many the plan would change."""

    @abstractmethod
    def commit(self) -> ScopeReport:
        """Recover, plan, journal and write the plan, all under the scope's lock."""


def recover(log: EventLog, marks: set[object], lease: Lease) -> list[str]:
    """Close every run a crash left open: committed if the store shows its marks (``marks``:
    every entry's ``consolidation_run``), else aborted."""
    closed: list[str] = []
    for run in log.open_runs():
        done = run.run_id in marks
        log.append(
            [
                {
                    "type": RUN_COMMITTED if done else RUN_ABORTED,
                    "run_id": run.run_id,
                    "at": iso(),
                    "recovered": True,
                }
            ],
            lease,
        )
        closed.append(run.run_id)
    return closed


class TierRun(ConsolidationRun):
    """A run over one knowledge store: incremental (the entries changed since the last run's
    watermark against the whole store) unless ``full``, ``consolidation.incremental`` is off or
    there is no valid watermark."""

    def __init__(
        self,
        store: TierStore,
        config: ConsolidationConfig,
        *,
        scope: str,
        progress: ProgressFn | None,
        clock: Callable[[], datetime] | None,
        full: bool = False,
    ) -> None:
        super().__init__(config, config.measure, scope=scope, progress=progress, clock=clock)
        self.store = store
        self.full = full
        self.watermark = watermark_path(events_path(store.files))
        self.focus: int | None = None
        self.parsed: int | None = None
        self.planner.paraphrases.vector_file = store.files.knowledge

    def population(self) -> LeanPopulation:
        """The store scanned into the planner's items (:mod:`._lean`), with the entries changed
        since the last run when a valid watermark says which (unless this is a full pass)."""
        mark = (
            None if self.full or not self.config.incremental else load(self.watermark, self.config)
        )
        return LeanPopulation(
            self.store,
            at=self.at,
            run_id=self.run_id,
            config=self.config,
            known=None if mark is None else mark.digests,
        )

    def planner_for(self, changed: set[str] | None) -> Planner:
        """The focused planner on the entries ``changed`` since the last run, else (``None``:
        no valid watermark, or a full pass) the full one."""
        if changed is None:
            self.focus = None
            return self.planner
        self.focus = len(changed)
        planner = FocusedPlanner(
            self.config,
            self.config.measure,
            self.planner.contradicts,
            changed,
            self.planner.paraphrases.embedder,
        )
        planner.paraphrases.vector_file = self.store.files.knowledge
        return planner

    def advance(self, digests: Callable[[], DigestArray], plan: Plan, lease: Lease) -> None:
        """After a committed run: the store as written (``digests`` of its lines) becomes the
        next run's starting point. A run that stopped short of its fixpoint leaves none (the
        next run is full)."""
        if not plan.converged:
            self.watermark.unlink(missing_ok=True)
        elif plan.changes or self.focus != 0 or not self.watermark.exists():
            save_digests(
                self.watermark, digests(), self.config, run_id=self.run_id, at=self.at, lease=lease
            )

    def plan_indexed(self) -> tuple[Plan, _indexed.IndexedPopulation, int] | None:
        """Plan through the store's persisted index (:mod:`._indexed`): the plan, the
        population it changed and the store's entry count; ``None`` when this run cannot
        (a full pass, no valid watermark, no index, another measure, a store small enough for
        the dense pass, an index found stale), and the store is loaded instead."""
        config = self.config
        if self.full or not config.incremental or config.measure is not Measure.BIGRAMS:
            return None
        if not self.store.config.persistent_index:
            return None
        mark = load(self.watermark, config)
        if mark is None:
            return None
        reader = postings.open_reader(self.store.files.knowledge)
        if reader is None:
            return None
        try:
            dense = config.dense_duplicates and config.paraphrase_threshold < 1.0
            if dense and reader.active_count <= config.dense_max_entries:
                return None
            initial = reader.entries(reader.changed(mark.digests).tolist())
            if self._crosslingual(initial.values(), reader.active_count):
                return None  # the cross-language pass needs the whole scope: load it
            sets = storesets.load(reader.db)
            planner = _indexed.IndexedPlanner(
                config, self.planner.contradicts, (e.id for e in initial.values()), sets
            )
            inner = KnowledgePopulation(
                [], at=self.at, run_id=self.run_id, store=self.store, config=config
            )
            population = _indexed.IndexedPopulation(
                reader, planner.focus, config, inner, initial, sets
            )
            planner.population = population
            focus = len(planner.focus)
            gc.freeze()  # the entries read stay: rounds need not rescan them for cycles
            try:
                indexed_plan = planner.run(population, on_round=self.on_round)
            finally:
                gc.unfreeze()
            sets.release()
        except postings.StaleIndex:
            return None
        finally:
            postings.close(reader)
        self.focus = focus
        self.parsed = reader.read_count
        return indexed_plan, population, reader.count

    def _crosslingual(self, new: Iterable[Entry], active: int) -> bool:
        """Whether the cross-language pass may find pairs tonight, so the store must be loaded
        (it needs every lesson of the scope; the indexed path reads only the focus's word
        partners): the pass is on, the store within its size, and a new lesson is non-Latin or
        an earlier run kept multilingual vectors beside the store (it held a non-Latin lesson)."""
        config = self.config
        model = self.planner.paraphrases.multilingual
        if (
            not config.multilingual_duplicates
            or config.paraphrase_threshold >= 1.0
            or model is None
            or active > config.multilingual_max_entries
        ):
            return False
        kept = vectors_file(self.store.files.knowledge, model().name)
        return kept.exists() or any(non_latin(entry.lesson) for entry in new)

    def plan_only(self) -> tuple[Plan, int, int]:
        routed = self.plan_indexed()
        if routed is not None:
            plan, indexed, total = routed
            return plan, total, len(indexed.changed)
        with self.population() as population:
            plan = self.planner_for(population.fresh).run(population, on_round=self.on_round)
        return plan, population.total, len(population.changed)

    def execute(self, *, dry_run: bool) -> ScopeReport:
        report = super().execute(dry_run=dry_run)
        report.focus = self.focus
        report.indexed = self.parsed is not None
        report.parsed = self.parsed
        return report

    def commit(self) -> ScopeReport:
        store, config, scope, at, run_id = self.store, self.config, self.scope, self.at, self.run_id
        log = EventLog(events_path(store.files))
        with store.locked(timeout=config.lock_timeout_seconds) as txn:
            lease = txn.lease
            routed = None if log.open_runs() else self.plan_indexed()
            recovered: list[str] = []
            if routed is not None:
                plan, indexed, total = routed
                before, changed = indexed.before, indexed.changed
            else:
                with self.population() as population:  # scanned under the lock: it is the store
                    recovered = recover(log, population.marks, lease)
                    plan = self.planner_for(population.fresh).run(
                        population, on_round=self.on_round
                    )
                total, changed, before = population.total, population.changed, population.read
            path = store.files.knowledge

            def digests() -> DigestArray:
                if not path.exists():  # no store yet: no lines
                    return line_digests(())
                return postings.file_digests(path)[0]

            report = ScopeReport(
                scope,
                plan,
                run_id if plan.changes else None,
                False,
                total,
                len(changed),
                recovered,
            )
            if plan.changes:
                after = {entry_id: txn.put(entry) for entry_id, entry in changed.items()}
                log.append(
                    [
                        {
                            "type": RUN_STARTED,
                            "run_id": run_id,
                            "at": at,
                            "scope": scope,
                            "store": str(store.files.knowledge),
                            "counts": plan.counts(),
                            "rounds": plan.rounds,
                        },
                        *(action_record(a, run_id, at) for a in plan.actions),
                        *(
                            {
                                "type": ENTRY_CHANGED,
                                "run_id": run_id,
                                "id": entry_id,
                                "before": before[entry_id].line(),
                                "after": entry.line(),
                            }
                            for entry_id, entry in after.items()
                        ),
                    ],
                    lease,
                )
                crash_point("journaled")
                txn.commit()
                crash_point("committed")
                log.append([{"type": RUN_COMMITTED, "run_id": run_id, "at": iso()}], lease)
            self.advance(digests, plan, lease)
        return report


def consolidate_tier(
    store: TierStore,
    config: ConsolidationConfig,
    *,
    scope: str,
    dry_run: bool = False,
    progress: ProgressFn | None = None,
    clock: Callable[[], datetime] | None = None,
    full: bool = False,
) -> ScopeReport:
    """Consolidate one knowledge store; with ``dry_run`` only plan (nothing is written);
    ``full`` joins the whole store even where a watermark allows an incremental run."""
    run = TierRun(store, config, scope=scope, progress=progress, clock=clock, full=full)
    return run.execute(dry_run=dry_run)


def restore_superseded(
    store: TierStore, entry_id: str, *, clock: Callable[[], datetime] | None = None
) -> Entry:
    """Undo a merge or supersession of ``entry_id``: it returns to its status before, loses its
    ``superseded_by`` pointer, and the two entries are kept apart by later runs (so the next
    night does not undo the restore). The survivor keeps what it absorbed; the change is
    journalled like any other."""
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
        revived = txn.put(
            current.changed(
                {"status": status, "updated_at": at, KEEP_APART: apart, RUN_KEY: run_id},
                remove=(SUPERSEDED_BY, "superseded_at", "supersede_reason", PRE_ARCHIVE_KEY),
                bump_revision=False,
            )
        )
        records: list[dict[str, Any]] = [
            {
                "type": RUN_STARTED,
                "run_id": run_id,
                "at": at,
                "scope": "restore",
                "store": str(store.files.knowledge),
            },
            {
                "type": "restored",
                "run_id": run_id,
                "at": at,
                "id": entry_id,
                "was_superseded_by": survivor_id,
            },
            {
                "type": ENTRY_CHANGED,
                "run_id": run_id,
                "id": entry_id,
                "before": current.line(),
                "after": revived.line(),
            },
        ]
        survivor = txn.get(survivor_id)
        if survivor is not None:
            kept = txn.put(
                survivor.changed(
                    {KEEP_APART: [*_strings(survivor.get(KEEP_APART)), entry_id], RUN_KEY: run_id},
                    bump_revision=False,
                )
            )
            records.append(
                {
                    "type": ENTRY_CHANGED,
                    "run_id": run_id,
                    "id": survivor_id,
                    "before": survivor.line(),
                    "after": kept.line(),
                }
            )
        log.append(records, txn.lease)
    log.append([{"type": RUN_COMMITTED, "run_id": run_id, "at": iso()}], None)
    return revived


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
