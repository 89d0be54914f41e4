"""``skills.improve`` (the quota-bounded skill improver) and ``skills.generate`` (the compiler).

Thin wrappers over ``swarmq.skills``. ``skills.improve`` passes its task id as the run id,
so a redelivered message returns the proposal the first delivery wrote instead of paying twice.
Nothing here activates a skill: ``skills.generate`` writes drafts unless asked for ``active``.
"""

from __future__ import annotations

from typing import Any

from swarmq.names import SKILLS_GENERATE, SKILLS_IMPROVE
from swarmq.wiring.llm import compiler_for, run_improver
from swarmq.workers.app import app
from swarmq.workers.base import SwarmTask

IMPROVE_TASK = SKILLS_IMPROVE
GENERATE_TASK = SKILLS_GENERATE


@app.task(name=IMPROVE_TASK, bind=True)
def improve(
    self: SwarmTask, trigger: str = "manual", approved: bool = False, write_mode: str | None = None
) -> dict[str, Any]:
    if trigger not in ("manual", "scheduled"):
        raise ValueError(f"trigger must be 'manual' or 'scheduled', not {trigger!r}")
    if write_mode not in (None, "proposal", "draft_skills"):
        raise ValueError(f"write_mode must be 'proposal' or 'draft_skills', not {write_mode!r}")
    roster = self.roster
    cluster = self.cluster
    return run_improver(
        roster,
        cluster.locks,
        cluster,
        task_id=self.request.id,
        trigger=trigger,
        approved=bool(approved),
        write_mode=write_mode,
        run_id=self.request.id,
    )


@app.task(name=GENERATE_TASK, bind=True)
def generate(
    self: SwarmTask,
    mode: str = "draft",
    source_ids: list[str] | None = None,
    slug: str | None = None,
    evaluate: bool = True,
) -> dict[str, Any]:
    if mode not in ("draft", "active"):
        raise ValueError(f"mode must be 'draft' or 'active', not {mode!r}")
    if source_ids is not None and not (
        isinstance(source_ids, list) and all(isinstance(i, str) for i in source_ids)
    ):
        raise ValueError("source_ids must be a list of entry id strings")
    if not self.roster.curator.skill_generation_enabled:
        return {"refused": "disabled: curator.skill_generation_enabled is false", "results": []}
    compiler = compiler_for(self.roster, self.cluster.locks)
    results = compiler.generate(
        mode="active" if mode == "active" else "draft",
        source_ids=source_ids,
        slug=slug,
        evaluate_it=bool(evaluate),
    )
    return {"results": [r.as_dict() for r in results]}
