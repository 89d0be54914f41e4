"""Replayed histories: does a lesson learned in one session reach the later session that needs it?

Each labelled project (``eval/replay/labels.yaml``; sessions in ``eval/replay/histories/<id>/``)
is replayed in a fresh workspace with a fresh default ``swarm.yaml``, on the sessions' own clock:
every event happens at the timestamp the session recorded, and that moment is what the knowledge
store, forge, the flywheel's gates and consolidation read as "now". Events in time order:

- **a session starts**: the session-start recall from every store
  (:func:`swarmq.federated.recall.recall_session_start`) and the injection for its first user
  request from every store, as the prompt hook makes it (:func:`swarmq.federated.inject.inject`);
- **a tool call fails**: :func:`swarmq.federated.recall.recall_failure` with the call and its
  error, as the hooks call it, and the failure reported to the flywheel
  (``swarmq.flywheel.confirm.record_failure``: a recurrence confirms a lesson); also ``inject``
  with the same text (issue 24 asks for it; the hooks call only recall);
- **a session ends**: forge of its transcript, then the flywheel's close loop (ingest, feedback,
  promotion gates, publication to the knowledge store);
- between events, consolidation whenever the roster's ``schedule:`` would have run it (the
  default roster schedules none).

Everything runs with recording on, as deployed: injections write their receipts and counters,
and the flywheel lessons they show are cited as exposure (``swarmq.federated.inject.record``, as the hooks do);
nothing is bypassed or opened to make a figure. What still reads the wall clock (no gate does)
is listed in docs/QUALITY.md.

A recurrence is caught *before* the session when the session-start or first-request injection
shows an entry matching its mistake, *at the failure* when recall or injection at the failing
call does, else it is *missed*; an injected entry is *relevant* when it matches any mistake or
fact of the project (the rule is stated in the labels file). Each recurrence is also scored
*with the cure*: the same, counting only entries that state the mistake's right cause or cure
where its label names one (``cure`` in the labels; without it both readings agree), since an entry
quoting the error with a wrong diagnosis matches the mistake.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import yaml

from swarmq.consolidation.scopes import run_scope, scopes_for
from swarmq.eval._replay_history import FailingCall, Session, read_session
from swarmq.eval._replay_schedule import consolidation_runs
from swarmq.eval.replay_labels import Project, ReplayLabels, ReplayLabelsError
from swarmq.federated.inject import FederatedInjection
from swarmq.federated.inject import inject as federated_inject
from swarmq.federated.recall import recall_failure, recall_session_start
from swarmq.flywheel.confirm import record_failure
from swarmq.flywheel.pool import Pool
from swarmq.forge.agentops_queue import close_loop_with_queue
from swarmq.forge.extract import forge_transcript
from swarmq.knowledge.inject import Injection
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext
from swarmq.roster.loader import load_report
from swarmq.roster.schema import Roster
from swarmq.storage.clock import iso
from swarmq.storage.locking import LocalLocks
from swarmq.wiring.federated import workspace_stores
from swarmq.wiring.flywheel import layout_for

BEFORE = ("session_start", "first_request")
AT_FAILURE = ("recall_error", "inject_failure")

Recall = Callable[..., FederatedInjection]

ROSTER = """\
# A fresh default roster: nothing but what a swarm needs to exist (every setting its default).
swarm: {name}
locks: single-host
workers:
  - id: local
    role: local
"""


class SessionClock:
    """The replay's "now": the timestamp of the event being replayed (never moves back)."""

    def __init__(self, moment: datetime) -> None:
        self.moment = moment

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, moment: datetime) -> datetime:
        if moment > self.moment:
            self.moment = moment
        return self.moment


@dataclass(frozen=True, slots=True)
class Shown:
    entry_id: str
    tier: str
    text: str
    matches: tuple[str, ...]
    cures: tuple[str, ...] = ()
    """The mistakes among ``matches`` whose cure the text also states."""

    @property
    def relevant(self) -> bool:
        return bool(self.matches)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.entry_id,
            "tier": self.tier,
            "text": self.text,
            "matches": list(self.matches),
            "cures": list(self.cures),
        }


@dataclass(frozen=True, slots=True)
class InjectionLog:
    """One moment knowledge could reach the agent, and what it showed."""

    session: str
    kind: str
    """``session_start``, ``first_request``, ``recall_error`` or ``inject_failure``."""
    at: datetime
    line: int | None
    shown: tuple[Shown, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "kind": self.kind,
            "at": iso(self.at),
            "line": self.line,
            "shown": [s.as_dict() for s in self.shown],
        }


@dataclass(slots=True)
class SessionFigures:
    session: str
    start: datetime
    end: datetime
    failures: int
    injections: list[InjectionLog] = field(default_factory=list)
    forged: int = 0
    """Candidates forge added to the pool from this session (new ones)."""
    promoted: int = 0
    entries_after: int = 0
    """Active entries in the project's knowledge store after this session's close loop."""

    def shown(self) -> dict[str, Shown]:
        """Unique entries shown to this session, by id (first showing kept)."""
        out: dict[str, Shown] = {}
        for log in self.injections:
            for item in log.shown:
                out.setdefault(item.entry_id, item)
        return out

    def as_dict(self) -> dict[str, Any]:
        shown = self.shown()
        return {
            "session": self.session,
            "start": iso(self.start),
            "end": iso(self.end),
            "failures": self.failures,
            "entries_shown": len(shown),
            "relevant_shown": sum(1 for s in shown.values() if s.relevant),
            "forged": self.forged,
            "promoted": self.promoted,
            "entries_after": self.entries_after,
        }


@dataclass(frozen=True, slots=True)
class RecurrenceOutcome:
    mistake: str
    session: str
    line: int
    status: str
    """``before``, ``failure`` or ``missed``."""
    failure: str
    entry: str | None = None
    """The id of the matching entry shown (when caught)."""
    shown_at_failure: tuple[str, ...] = ()
    """What recall and injection showed at the failing call (texts, for a miss's diagnosis)."""
    learned: bool = False
    """When the session started, a pool candidate or a store entry stated the lesson (forge had
    learned it; a promoted candidate leaves the pool)."""
    in_store: bool = False
    """When the session started, an active knowledge entry stated it (it could be injected)."""
    cured: str = "missed"
    """``status`` counting only entries that state the mistake's cure (see ``Shown.cures``)."""
    cured_entry: str | None = None
    entry_text: str | None = None
    """The text of ``entry`` as it was shown (a catch is read by hand from it)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "mistake": self.mistake,
            "learned": self.learned,
            "in_store": self.in_store,
            "session": self.session,
            "line": self.line,
            "status": self.status,
            "entry": self.entry,
            "entry_text": self.entry_text,
            "status_with_cure": self.cured,
            "entry_with_cure": self.cured_entry,
            "failure": self.failure,
            "shown_at_failure": list(self.shown_at_failure),
        }


@dataclass(frozen=True, slots=True)
class Tally:
    """Recurrences and injected entries, summed over projects or sessions."""

    recurrences: int = 0
    before: int = 0
    at_failure: int = 0
    sessions: int = 0
    shown: int = 0
    relevant: int = 0
    cured_before: int = 0
    cured_at_failure: int = 0

    @property
    def missed(self) -> int:
        return self.recurrences - self.before - self.at_failure

    @property
    def caught_rate(self) -> float:
        return (self.before + self.at_failure) / self.recurrences if self.recurrences else 0.0

    @property
    def cured(self) -> int:
        """Recurrences caught by an entry that states the cure (the strict reading)."""
        return self.cured_before + self.cured_at_failure

    @property
    def relevant_share(self) -> float:
        return self.relevant / self.shown if self.shown else 0.0

    @property
    def shown_per_session(self) -> float:
        return self.shown / self.sessions if self.sessions else 0.0

    def __add__(self, other: Tally) -> Tally:
        return Tally(
            self.recurrences + other.recurrences,
            self.before + other.before,
            self.at_failure + other.at_failure,
            self.sessions + other.sessions,
            self.shown + other.shown,
            self.relevant + other.relevant,
            self.cured_before + other.cured_before,
            self.cured_at_failure + other.cured_at_failure,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "recurrences": self.recurrences,
            "caught_before": self.before,
            "caught_at_failure": self.at_failure,
            "missed": self.missed,
            "caught_rate": round(self.caught_rate, 3),
            "caught_with_cure_before": self.cured_before,
            "caught_with_cure_at_failure": self.cured_at_failure,
            "caught_with_cure": self.cured,
            "sessions": self.sessions,
            "entries_shown": self.shown,
            "relevant_shown": self.relevant,
            "relevant_share": round(self.relevant_share, 3),
            "shown_per_session": round(self.shown_per_session, 3),
        }


@dataclass(slots=True)
class ProjectFigures:
    project: str
    split: str
    sessions: list[SessionFigures] = field(default_factory=list)
    recurrences: list[RecurrenceOutcome] = field(default_factory=list)
    consolidations: list[datetime] = field(default_factory=list)

    def tally(self) -> Tally:
        shown = [s.shown() for s in self.sessions]
        return Tally(
            len(self.recurrences),
            sum(1 for r in self.recurrences if r.status == "before"),
            sum(1 for r in self.recurrences if r.status == "failure"),
            len(self.sessions),
            sum(len(s) for s in shown),
            sum(1 for s in shown for item in s.values() if item.relevant),
            sum(1 for r in self.recurrences if r.cured == "before"),
            sum(1 for r in self.recurrences if r.cured == "failure"),
        )

    def irrelevant(self) -> Iterator[tuple[str, Shown]]:
        """Every (session, entry) shown that no label marks relevant."""
        for session in self.sessions:
            for item in session.shown().values():
                if not item.relevant:
                    yield session.session, item

    def as_dict(self, *, verbose: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "project": self.project,
            "split": self.split,
            **self.tally().as_dict(),
            "consolidations": [iso(c) for c in self.consolidations],
            "sessions_detail": [s.as_dict() for s in self.sessions],
            "recurrence_outcomes": [r.as_dict() for r in self.recurrences],
        }
        if verbose:
            data["injections"] = [i.as_dict() for s in self.sessions for i in s.injections]
        return data


@dataclass(slots=True)
class ReplayFigures:
    split: str
    settings: dict[str, Any] = field(default_factory=dict)
    """Roster sections set on top of the defaults (empty: default settings, the product)."""
    projects: list[ProjectFigures] = field(default_factory=list)

    def tally(self, split: str | None = None) -> Tally:
        total = Tally()
        for project in self.projects:
            if split is None or project.split == split:
                total = total + project.tally()
        return total

    def as_dict(self, *, verbose: bool = False) -> dict[str, Any]:
        splits = sorted({p.split for p in self.projects})
        return {
            "split": self.split,
            "settings": self.settings or "defaults",
            "overall": self.tally().as_dict(),
            "by_split": {s: self.tally(s).as_dict() for s in splits},
            "projects": [p.as_dict(verbose=verbose) for p in self.projects],
        }


@dataclass(slots=True)
class _Workspace:
    roster: Roster
    locks: LocalLocks
    clock: SessionClock
    knowledge: KnowledgeStore


def _workspace(
    root: Path, project: Project, start: datetime, settings: Mapping[str, Any] | None
) -> _Workspace:
    """A fresh project directory with a default swarm.yaml (plus ``settings``, a diagnostic
    override never used for a bar), its stores, and an isolated home."""
    directory = root / "project"
    for sub in (".swarm", ".agents"):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    config = directory / "swarm.yaml"
    text = ROSTER.format(name=f"replay-{project.id}")
    if settings:
        text += "# NOT the defaults: --settings\n" + yaml.safe_dump(dict(settings), sort_keys=True)
    config.write_text(text, encoding="utf-8")
    env = {
        "HOME": str(root / "home"),
        "XDG_DATA_HOME": str(root / "data"),
        "XDG_CACHE_HOME": str(root / "cache"),
    }
    report = load_report(config, env=env)
    if report.roster is None:
        raise ReplayLabelsError(f"{config}: the default roster does not load: {report.errors}")
    roster = report.roster
    locks = LocalLocks(root / "locks")
    clock = SessionClock(start)
    knowledge = KnowledgeStore(
        roster.swarm_dir,
        locks=locks,
        config=roster.knowledge,
        data_dir=roster.hive_dir,
        project_name=roster.knowledge.project_name or roster.workspace_dir.name,
        clock=clock,
    )
    return _Workspace(roster, locks, clock, knowledge)


def _entry_text(data: Any) -> str:
    lesson = data.get("lesson") if hasattr(data, "get") else None
    tags = data.get("tags") if hasattr(data, "get") else None
    words = " ".join(str(t) for t in tags) if isinstance(tags, list) else ""
    return f"{lesson or ''} {words}".strip()


def _shown(project: Project, injection: Injection | FederatedInjection) -> tuple[Shown, ...]:
    out = []
    if isinstance(injection, FederatedInjection):
        for fused in injection.shown:
            found = fused.finding
            text = _entry_text(found.ranked.entry.data) if found.ranked else found.text
            out.append(_judged(project, found.id, found.store.value, text))
        return tuple(out)
    for ranked in injection.shown:
        out.append(_judged(project, ranked.entry.id, ranked.tier, _entry_text(ranked.entry.data)))
    return tuple(out)


def _judged(project: Project, entry_id: str, tier: str, text: str) -> Shown:
    return Shown(entry_id, tier, text, project.matching(text), project.curing(text))


def _caught(
    logs: list[InjectionLog], line: int, mistake: str, ids: Callable[[Shown], tuple[str, ...]]
) -> tuple[str, Shown | None]:
    """Where a recurrence of ``mistake`` at ``line`` was caught by an entry whose ``ids`` hold
    it: ``before`` (the session start or its first request), ``failure`` (recall or injection
    at that call) or ``missed``; with the entry."""
    status, entry = "missed", None
    for log in logs:
        hit = next((s for s in log.shown if mistake in ids(s)), None)
        if hit is None:
            continue
        if log.kind in BEFORE:
            return "before", hit
        if log.kind in AT_FAILURE and log.line == line and status == "missed":
            status, entry = "failure", hit
    return status, entry


class _Replay:
    """One project's replay: the workspace, its event loop, and what each moment showed."""

    def __init__(
        self,
        project: Project,
        sessions: list[Session],
        root: Path,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        self.project = project
        self.sessions = sessions
        self.ws = _workspace(root, project, sessions[0].start, settings)
        self.stores = workspace_stores(self.ws.roster, self.ws.locks, knowledge=self.ws.knowledge)
        self.figures = ProjectFigures(project.id, project.split)
        self.by_session: dict[str, SessionFigures] = {}
        self.learned: dict[str, tuple[set[str], set[str]]] = {}
        """Per session: the mistakes stated by a pool candidate / a store entry at its start."""

    def run(self) -> ProjectFigures:
        events: list[tuple[datetime, int, int, FailingCall | None]] = []
        for n, session in enumerate(self.sessions):
            events.append((session.start, 0, n, None))
            events.extend((f.moment, 1, n, f) for f in session.failures)
            events.append((session.end, 2, n, None))
        events.sort(key=lambda e: (e[0], e[1], e[2], e[3].line if e[3] else 0))
        last = self.sessions[0].start
        for moment, kind, n, failure in events:
            self._consolidate(last, moment)
            last = self.ws.clock.advance(moment)
            session = self.sessions[n]
            if kind == 0:
                self._start(session)
            elif kind == 1 and failure is not None:
                self._failure(session, failure)
            elif kind == 2:
                self._end(session)
        self.figures.sessions = [self.by_session[s.session_id] for s in self.sessions]
        self.figures.recurrences = self._outcomes()
        return self.figures

    def _ask(self, session: Session, kind: str, line: int | None, context: QueryContext) -> None:
        """An injection for a task, as the prompt hook makes it: from every store, recorded
        (receipt, counters, the flywheel's exposure) on the replay's clock."""
        at = self.ws.clock()
        injection = federated_inject(self.stores, context, session_id=session.session_id)
        self.by_session[session.session_id].injections.append(
            InjectionLog(session.session_id, kind, at, line, _shown(self.project, injection))
        )

    def _log(self, session: Session, kind: str, line: int | None, fn: Recall, **kw: Any) -> None:
        """A recall as the hooks make it: from every store, recorded (receipt, counters, the
        flywheel's exposure) on the replay's clock."""
        figures = self.by_session[session.session_id]
        at = self.ws.clock()
        injection = fn(self.stores, session_id=session.session_id, **kw)
        figures.injections.append(
            InjectionLog(session.session_id, kind, at, line, _shown(self.project, injection))
        )

    def _learned(self) -> tuple[set[str], set[str]]:
        pool = {
            m.id
            for entry in Pool(layout_for(self.ws.roster)).entries()
            for m in self.project.mistakes
            if m.match.matches(entry.content)
        }
        store = {
            m.id
            for entry in self.ws.knowledge.swarm.list(active_only=True)
            for m in self.project.mistakes
            if m.match.matches(_entry_text(entry.data))
        }
        return pool, store

    def _start(self, session: Session) -> None:
        self.by_session[session.session_id] = SessionFigures(
            session.session_id, session.start, session.end, len(session.failures)
        )
        self.learned[session.session_id] = self._learned()
        self._log(session, "session_start", None, recall_session_start)
        if session.first_request:
            self._ask(session, "first_request", None, QueryContext(text=session.first_request))

    def _failure(self, session: Session, failure: FailingCall) -> None:
        text = failure.text()
        self._log(session, "recall_error", failure.line, recall_failure, text=text)
        self._ask(
            session, "inject_failure", failure.line, QueryContext(text=text, tool=failure.tool)
        )
        # What a hook on the failure reports to the flywheel: a recurrence confirms a lesson.
        record_failure(
            layout_for(self.ws.roster),
            self.ws.locks,
            text,
            session_id=session.session_id,
            when=failure.moment,
        )

    def _end(self, session: Session) -> None:
        ws, roster = self.ws, self.ws.roster
        layout = layout_for(roster)
        forged = forge_transcript(
            session.path, layout, ws.locks, roster.forge, now=session.end, completer=None
        )
        bridge = roster.flywheel.knowledge_bridge and roster.swarm_dir.is_dir()
        result = close_loop_with_queue(
            layout,
            ws.locks,
            roster.forge,
            roster.flywheel,
            sink=ws.knowledge if bridge else None,
            now=session.end,
        )
        figures = self.by_session[session.session_id]
        figures.forged = forged.new
        figures.promoted = len(result.promoted)
        figures.entries_after = len(ws.knowledge.swarm.list(active_only=True))

    def _consolidate(self, since: datetime, until: datetime) -> None:
        roster = self.ws.roster
        for moment in consolidation_runs(
            roster.schedule, since, until, origin=self.sessions[0].start
        ):
            self.ws.clock.advance(moment)
            for scope in scopes_for(
                roster.consolidation, hive_enabled=roster.knowledge.hive_enabled
            ):
                run_scope(
                    scope,
                    config=roster.consolidation,
                    locks=self.ws.locks,
                    agents_dir=roster.agents_dir,
                    knowledge=self.ws.knowledge,
                    clock=self.ws.clock,
                )
            self.figures.consolidations.append(moment)

    def _outcomes(self) -> list[RecurrenceOutcome]:
        out = []
        for mistake in self.project.mistakes:
            for item in mistake.recurrences:
                figures = self.by_session[Path(item.session).stem]
                session = next(s for s in self.sessions if s.path.name == item.session)
                failure = session.failure_at(item.line)
                assert failure is not None  # checked before the replay started
                logs = figures.injections
                status, hit = _caught(logs, item.line, mistake.id, lambda s: s.matches)
                cured, cure = _caught(logs, item.line, mistake.id, lambda s: s.cures)
                at_failure = [
                    f"{log.kind}: {s.text[:160]}"
                    for log in logs
                    if log.kind in AT_FAILURE and log.line == item.line
                    for s in log.shown
                ]
                pool, store = self.learned[session.session_id]
                out.append(
                    RecurrenceOutcome(
                        mistake.id,
                        item.session,
                        item.line,
                        status,
                        failure.text()[:300],
                        hit.entry_id if hit else None,
                        tuple(at_failure),
                        mistake.id in pool or mistake.id in store,
                        mistake.id in store,
                        cured,
                        cure.entry_id if cure else None,
                        hit.text if hit else None,
                    )
                )
        return out


def load_project(history: Path, project: Project) -> list[Session]:
    """The project's sessions, checked against the labels: the files exist, their own
    timestamps put them in the labelled order, and every labelled line is a failing call."""
    directory = history / project.id
    sessions = []
    for name in project.sessions:
        path = directory / name
        if not path.is_file():
            raise ReplayLabelsError(f"{project.id}: session file {path} does not exist")
        try:
            sessions.append(read_session(path))
        except ValueError as exc:
            raise ReplayLabelsError(f"{project.id}: {exc}") from exc
    for before, after in pairwise(sessions):
        if after.start < before.start:
            raise ReplayLabelsError(
                f"{project.id}: {after.path.name} starts ({iso(after.start)}) before "
                f"{before.path.name} ({iso(before.start)}); list the sessions in time order"
            )
    by_name = {s.path.name: s for s in sessions}
    for mistake in project.mistakes:
        for item in (mistake.first, *mistake.recurrences):
            if by_name[item.session].failure_at(item.line) is None:
                raise ReplayLabelsError(
                    f"{project.id}: mistake {mistake.id}: line {item.line} of {item.session} "
                    "is not a failing tool result"
                )
    return sessions


def replay_project(
    history: Path, project: Project, work: Path, *, settings: Mapping[str, Any] | None = None
) -> ProjectFigures:
    """Replay one project under ``work`` (a fresh directory per project; a knowledge store
    already in ``work/project/.swarm`` is used as it is, which is how a test seeds one)."""
    sessions = load_project(history, project)
    return _Replay(project, sessions, work, settings).run()


def replay(
    history: Path,
    labels: ReplayLabels,
    *,
    split: str = "all",
    projects: tuple[str, ...] = (),
    work: Path | None = None,
    progress: Callable[[str], None] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> ReplayFigures:
    """Replay the selected projects (``projects`` narrows by id), each in its own workspace under
    ``work`` (a temporary directory, removed afterwards, unless given)."""
    chosen = labels.select(split)
    if projects:
        unknown = set(projects) - {p.id for p in chosen}
        if unknown:
            raise ReplayLabelsError(f"no project {sorted(unknown)} in split {split!r}")
        chosen = tuple(p for p in chosen if p.id in projects)
    figures = ReplayFigures(split, dict(settings or {}))
    with tempfile.TemporaryDirectory(prefix="swarmq-replay-") as scratch:
        base = work or Path(scratch)
        for project in chosen:
            if progress is not None:
                progress(project.id)
            figures.projects.append(
                replay_project(history, project, base / project.id, settings=settings)
            )
    return figures
