"""The demo waits for the acknowledgements of the knowledge entries its last mission was shown,
and only those: the block may also carry another store's record (a mission's handoff in shared
memory), whose acknowledgement never lands in the knowledge store, so waiting for it would
time out a demo whose loop closed."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import cast

from swarmq.demo.report import DemoReport
from swarmq.demo.steps import DemoSwarm
from swarmq.knowledge.reinforcement import NewLesson
from swarmq.missions.ledger import Mission
from tests.support import write_roster


def test_the_injected_are_the_knowledge_entries_of_the_block_not_another_stores_records(
    tmp_path: Path,
) -> None:
    config = write_roster(tmp_path, "demoacks", "redis://127.0.0.1:6379/15")
    demo = DemoSwarm(
        config, DemoReport(tmp_path, config), say=lambda _: None, use_tmux=False, timeout=5.0
    )
    lesson = "The invoice export must be idempotent: a redelivered message runs it twice."
    entry = demo._knowledge().swarm.add(NewLesson(lesson), phase=1).entry
    assert entry is not None
    prompt = demo.roster.profiles_dir / "grace" / "memory" / "missions" / "m1"
    prompt.mkdir(parents=True)
    (prompt / "prompt-assign-1.txt").write_text(
        "Add a retry to the invoice export\n<swarm_knowledge_directives>\ntrace_id: t\n"
        f"- id: {entry.id}\n  lesson: {lesson}\n"
        "- id: memory:ea807ad317a9\n  source: shared memory handoff.md:11\n"
        "  lesson: Customers got duplicate invoices when a worker crashed mid-export.\n"
        "</swarm_knowledge_directives>\n",
        encoding="utf-8",
    )
    mission = cast(Mission, SimpleNamespace(assignments=[SimpleNamespace(id="assign-1")]))
    assert demo._injected(mission) == [entry.id]
