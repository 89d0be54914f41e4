"""``skill_improver:`` in swarm.yaml (opencode-swarm's keys and defaults).

``max_calls_per_day`` and ``quota_window`` are not here: the budget is ``quotas.skill_improver``
(10 a day by default), counted cluster-wide by the quota gate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_MIN_SKILL_CONFIDENCE = 0.70
DEFAULT_MIN_SKILL_CONFIRMATIONS = 2
"""The skill compiler's readiness gate: a cluster's confidence and confirmations."""

Target = Literal["skills", "spec", "architect_prompt", "knowledge"]


def all_targets() -> list[Target]:
    return ["skills", "spec", "architect_prompt", "knowledge"]


class SkillImproverConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    enabled: bool = False
    """Off by default, as in opencode-swarm: each run is a call to an expensive model."""
    trigger: Literal["manual", "scheduled"] = "manual"
    """``scheduled`` lets beat run ``skills.improve``, cadence-gated by the interval below."""
    consolidation_interval_hours: Annotated[float, Field(gt=0, le=24 * 365)] = 24.0
    consolidation_max_calls_per_run: Annotated[int, Field(ge=1, le=100)] = 1
    """A scheduled run makes at most this many calls (retries included)."""
    targets: list[Target] = Field(default_factory=all_targets)
    write_mode: Literal["proposal", "draft_skills"] = "proposal"
    """``draft_skills`` also writes draft SKILL.md files (never activated automatically)."""
    require_user_approval: bool = True
    """A manual run must be approved by a person (the CLI counts as one); scheduled runs were
    approved by setting ``trigger: scheduled``."""
    allow_deterministic_fallback: bool | None = None
    """``null`` = ``llm.allow_deterministic_fallback``."""
    max_proposal_chars: Annotated[int, Field(ge=500, le=200_000)] = 20_000


DEFAULT_AGENT_DIRS: dict[str, Path] = {
    "claude-code": Path(".claude/skills"),
    "codex": Path(".agents/skills"),
}
"""Where each agent reads a project's skills: Claude Code's project skills, and Codex's repo
skills (``.agents/skills`` from the working directory up to the repository root)."""


class SkillsConfig(BaseModel):
    """``skills:`` in swarm.yaml: where active generated skills are published for the agents.

    Every active skill is written to opencode-swarm's ``.opencode/skills/generated/<slug>/``
    (the canonical copy) and published to ``<dir>/<slug>/SKILL.md`` under each of
    ``agent_dirs``, with the front matter those agents read (``name``, ``description``,
    ``metadata``)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    agent_dirs: dict[str, Path] = Field(default_factory=lambda: dict(DEFAULT_AGENT_DIRS))
    """Agent name → skills directory, relative to the workspace (``~`` for user scope, e.g.
    ``~/.claude/skills``); ``{}`` keeps skills in ``.opencode/skills`` only."""
    link: bool = False
    """Symlink ``<dir>/<slug>`` to the canonical directory instead of writing a copy (the
    agents then read opencode-swarm's front matter, extra keys included)."""
