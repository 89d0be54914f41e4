"""The demo's steps against a real swarm: start it, run the missions, close the loop, stop it."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarmq.demo.report import MISSIONS, DemoError, DemoReport, Say, wait_for
from swarmq.flywheel.metrics import compute_metrics
from swarmq.forge.ledger import ledger_path
from swarmq.missions.ledger import Mission
from swarmq.names import FORGE_CLOSE_LOOP
from swarmq.roster.loader import load_roster
from swarmq.storage.jsonl import JsonlLine, iter_jsonl
from swarmq.wiring.flywheel import layout_for

if TYPE_CHECKING:
    from celery import Celery

    from swarmq.client import MissionClient
    from swarmq.flywheel.config import GateRules
    from swarmq.knowledge.project import KnowledgeStore
    from swarmq.workers.launcher import Supervisor

SETTLED = {"complete", "failed", "blocked", "cancelled", "review"}
PUBLISHED = {"added", "reinforced", "provisional", "confirmed"}
"""Knowledge outcomes of a close loop that leave a lesson injectable."""
ACK_SECONDS = 120.0
"""How long the demo waits for its last missions' acknowledgements to be recorded."""
FLYWHEEL_KEYS = (
    "sigma",
    "rho",
    "delta",
    "velocity",
    "status",
    "total_artifacts",
    "citations_this_period",
    "unique_cited_artifacts",
)


def learned_text(markdown: str) -> str:
    """The lesson itself out of a forged block or a learning file: its "What We Learned"
    section (the whole text, never the heading's shortened title)."""
    _, found, rest = markdown.partition("## What We Learned")
    if not found:
        return markdown.strip()
    return rest.split("\n## ", 1)[0].strip()


def lesson_key(text: str) -> str:
    return " ".join(text.lower().split())


def held_words(reason: str, rules: GateRules) -> str:
    """A promotion gate's reason in words a first-time user follows."""
    if reason.startswith("age"):
        return (
            "no agent has applied it yet, and it is younger than the "
            f"{rules.promotion_age_hours:g} h a lesson waits before use alone can promote it"
        )
    if reason.startswith("cited") or reason.startswith("bronze"):
        return f"not confirmed often enough yet ({reason})"
    return reason


class DemoSwarm:
    def __init__(
        self, config: Path, report: DemoReport, *, say: Say, use_tmux: bool | None, timeout: float
    ) -> None:
        self.config = config
        self.report = report
        self.say = say
        self.timeout = timeout
        self.roster = load_roster(config, env={})
        self.use_tmux = use_tmux
        self.supervisor: Supervisor | None = None
        self.celery: Celery | None = None
        self.client: MissionClient | None = None
        self.logs = str(self.roster.runtime_dir / "logs")

    # -- processes -----------------------------------------------------------------------------

    def start(self) -> None:
        from swarmq.client import MissionClient
        from swarmq.coord.cluster import Cluster
        from swarmq.workers.app import create_app
        from swarmq.workers.launcher import Supervisor

        self.say(f"workspace {self.report.workspace}")
        self.supervisor = Supervisor(
            self.roster, self.config, use_tmux=self.use_tmux, notify=self.say
        )
        result = self.supervisor.up()
        self.say(
            f"redis: {result.redis}; " + ", ".join(f"{a.name} {a.outcome}" for a in result.actions)
        )
        if self.supervisor.tmux is not None:
            self.report.attach = f"tmux -L {self.supervisor.tmux.socket} attach -t swarm-ada"
        self.celery = create_app(self.roster)
        self.client = MissionClient(
            self.roster,
            celery=self.celery,
            locks=Cluster.connect(self.roster.cluster_config(), timeout=2.0).locks,
        )
        ids = [w.id for w in self.roster.workers]
        wait_for(
            lambda: self.client is not None and self.client.live_workers(ids) == set(ids),
            self.timeout,
            "both workers to answer ping",
            self.logs,
        )
        self.say("workers ada and grace answer ping")

    def stop(self) -> None:
        if self.celery is not None:
            self.celery.close()
        if self.supervisor is not None:
            actions = self.supervisor.down(timeout=20.0)
            self.report.stopped = True
            self.say("stopped: " + ", ".join(f"{a.name} {a.outcome}" for a in actions))

    # -- the loop ------------------------------------------------------------------------------

    def learn(self) -> None:
        layout = layout_for(self.roster)
        self.report.flywheel_before = self._flywheel()
        first = self._missions(MISSIONS[:2])
        self._forged(first)
        self._close_loop("ingest missions 1-2")
        third = self._missions(MISSIONS[2:3])
        self._forged(third)
        closed = self._close_loop("promote what mission 3 applied")
        if not self.report.promoted or not self.report.published:
            raise DemoError(
                f"nothing was promoted into the knowledge store (held: {closed['held']}); "
                f"see {layout.root / 'pool'}"
            )
        last = self._missions(MISSIONS[3:])
        self.report.injected = self._injected(last[0])
        # The acknowledgements land through a worker's maturity task, which under the default
        # MiniLM model first loads it, and on a machine's first run builds its quantised copy
        # (5-10 s idle, a minute and more under a loaded machine's test suite): the bound is for
        # work that never lands, not for a slow start.
        self.report.acknowledged = wait_for(
            self._acknowledged,
            ACK_SECONDS,
            "the acknowledgements to land",
            str(self.roster.swarm_dir),
        )
        self._close_loop("measure")
        self.report.flywheel_after = self._flywheel()
        self.report.forged = [
            line[len("# Learning: ") :]
            for p in sorted((layout.root / "knowledge").rglob("*.md"))
            for line in p.read_text("utf-8").splitlines()
            if line.startswith("# Learning: ")
        ]
        self.report.files = self._files()
        self.report.lessons = self._lessons(last[0])

    def _missions(self, specs: tuple[tuple[str, str, str], ...]) -> list[Mission]:
        assert self.client is not None
        client = self.client
        submitted = [
            client.submit(
                objective,
                title=title,
                worker=worker,
                client_key=f"demo-{MISSIONS.index((worker, title, objective)) + 1}",
            )
            for worker, title, objective in specs
        ]
        for mission in submitted:
            self.say(f"mission {mission.id} → {mission.worker_id}: {mission.title}")

        def settled() -> list[Mission] | None:
            now = [client.get(m.id) for m in submitted]
            return now if all(m.state.value in SETTLED for m in now) else None

        done: list[Mission] = wait_for(settled, self.timeout, "the missions to finish", self.logs)
        for mission in done:
            self.report.missions.append(
                {
                    "id": mission.id,
                    "title": mission.title,
                    "worker": mission.worker_id,
                    "state": mission.state.value,
                    "reason": mission.reason,
                }
            )
            self.say(f"mission {mission.id}: {mission.state.value} ({mission.reason})")
            if mission.state.value != "complete":
                raise DemoError(
                    f"mission {mission.id} ended {mission.state.value}: {mission.reason}; "
                    f"see `swarmq --config {self.config} mission show {mission.id}`"
                )
        return done

    def _forged(self, missions: list[Mission]) -> None:
        """Wait until forge has read each mission's transcript (keyed by assignment id)."""
        keys = {a.id for m in missions for a in m.assignments}
        ledger = ledger_path(layout_for(self.roster))

        def seen() -> bool:
            return keys <= {
                str(item.value.get("key"))
                for item in iter_jsonl(ledger)
                if isinstance(item, JsonlLine) and isinstance(item.value, dict)
            }

        wait_for(seen, self.timeout, "forge to read the transcripts", self.logs)
        self.say(f"forge read {len(keys)} transcript(s)")

    def _close_loop(self, why: str) -> dict[str, Any]:
        assert self.celery is not None
        result: dict[str, Any] = self.celery.send_task(FORGE_CLOSE_LOOP).get(timeout=self.timeout)
        ingest = result["ingest"]
        self.report.pooled += int(ingest["added"])
        self.report.promoted += [p["artifact_path"] for p in result["promoted"]]
        self.report.published += [
            k["entry_id"]
            for k in result["knowledge"]
            if k.get("entry_id")
            and k.get("outcome") in PUBLISHED
            and k["entry_id"] not in self.report.published
        ]
        self.say(
            f"close loop ({why}): {ingest['added']} lesson(s) scored into the pool, "
            f"{len(result['promoted'])} promoted to learnings, {len(result['knowledge'])} "
            "knowledge store change(s)"
        )
        return result

    def _knowledge(self) -> KnowledgeStore:
        from swarmq.storage.locking import LocalLocks
        from swarmq.wiring.knowledge import knowledge_store

        return knowledge_store(self.roster, LocalLocks(self.roster.runtime_dir / "locks"))

    def _injected(self, mission: Mission) -> list[str]:
        assignment = mission.assignments[-1].id
        prompts = list(self.roster.profiles_dir.rglob(f"prompt-{assignment}.txt"))
        if not prompts:
            raise DemoError(f"no prompt file for {assignment} under {self.roster.profiles_dir}")
        text = prompts[0].read_text("utf-8")
        block = re.search(
            r"<swarm_knowledge_directives>(.*?)</swarm_knowledge_directives>", text, re.S
        )
        self.report.files["injected prompt"] = str(prompts[0])
        shown = re.findall(r"^- id: (\S+)$", block.group(1), re.M) if block else []
        # The knowledge entries only: the block may also carry another store's record (a
        # mission's handoff in shared memory, found relevant), whose acknowledgement is that
        # store's feedback and never lands as a count in the knowledge store.
        store = self._knowledge()
        return [entry_id for entry_id in shown if store.swarm.get(entry_id) is not None]

    def _acknowledged(self) -> list[str]:
        store = self._knowledge()
        acked = []
        for entry_id in self.report.injected:
            entry = store.swarm.get(entry_id)
            if entry is not None and entry.counter("applied_explicit_count") >= 1:
                acked.append(entry_id)
        return acked if self.report.injected and len(acked) == len(self.report.injected) else []

    def _lessons(self, last: Mission) -> list[dict[str, Any]]:
        """Each lesson the agents taught, whole, with what became of it and why: promoted (and
        what confirmed it), or still in the pool (and which gate holds it); whether it was shown
        to an agent, and what the agent answered."""
        from swarmq.flywheel.artifacts import learning_files, read_learning
        from swarmq.flywheel.citations import citation_stats
        from swarmq.flywheel.pool import Pool
        from swarmq.flywheel.promotion import gate_for

        layout = layout_for(self.roster)
        store = self._knowledge()
        entries = {lesson_key(e.lesson): e.id for e in store.swarm.read().entries}
        injected = set(self.report.injected)
        acknowledged = set(self.report.acknowledged)
        lessons: list[dict[str, Any]] = []

        def story(text: str, **facts: Any) -> dict[str, Any]:
            entry = entries.get(lesson_key(text))
            return {
                "lesson": text,
                **facts,
                "entry_id": entry,
                "injected_into": last.title if entry in injected else None,
                "acknowledged": entry in acknowledged,
            }

        for path in learning_files(layout.learnings, layout.patterns):
            learning = read_learning(path)
            if learning is not None:
                lessons.append(
                    story(
                        learned_text(learning.text),
                        fate="promoted",
                        why=(
                            "forged with high confidence, it was shown at once (marked "
                            f'provisional) to "{MISSIONS[2][1]}", whose agent applied it '
                            "(KNOWLEDGE_APPLIED); use in a session other than the one it was "
                            "learned in confirms a lesson, so it did not wait the "
                            f"{self.roster.flywheel.promotion_age_hours:g} h"
                        ),
                        learning=str(path),
                    )
                )
        stats = citation_stats(layout)
        rules = self.roster.flywheel.gate_rules()
        now = datetime.now(UTC)
        for entry in Pool(layout).entries():
            meta = entry.candidate.get("metadata") or {}
            shown = bool(meta.get("provisional_outcome"))
            gate = gate_for(entry, stats, now, rules)
            why = "kept in the pool, not promoted: " + held_words(gate.reason, rules)
            if not shown:
                why += (
                    "; and not shown to agents meanwhile: only high-confidence lessons (or ones "
                    "naming a failure) are shown before use confirms them, and this one was "
                    f"forged with {meta.get('pending_confidence') or 'lower'} confidence"
                )
            lessons.append(story(learned_text(str(entry.candidate.get("content", ""))),
                                 fate="held", why=why, learning=None))  # fmt: skip
        return lessons

    def _flywheel(self) -> dict[str, Any]:
        metrics = compute_metrics(layout_for(self.roster), days=self.roster.flywheel.metrics_days)
        return {k: metrics.get(k) for k in FLYWHEEL_KEYS}

    def _files(self) -> dict[str, str]:
        roster = self.roster
        files = dict(self.report.files)
        files.update(
            {
                "roster": str(self.config),
                "transcripts": str(
                    roster.profiles_dir / "<worker>" / "memory" / "missions" / "<mission>"
                ),
                "forged lessons": str(roster.agents_dir / "knowledge"),
                "pool": str(roster.agents_dir / "pool"),
                "learnings": str(roster.agents_dir / "learnings"),
                "knowledge store": str(roster.swarm_dir),
                "worker logs": self.logs,
            }
        )
        return files
