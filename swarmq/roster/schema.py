"""The swarm.yaml schema: the roster of workers and everything a swarm needs to run.

Every model refuses unknown keys, so a typo (``queus:``) is an error instead of a silently
ignored setting. Cross-field rules (duplicate ids, unconsumed queues) live in
:mod:`swarmq.roster.checks` so they can point at the exact line of the offending entry.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from swarmq.consolidation.config import ConsolidationConfig
from swarmq.coord.quota_config import QuotaConfig, default_quotas
from swarmq.coord.settings import ClusterConfig
from swarmq.curation.config import CuratorConfig
from swarmq.flywheel.config import FlywheelConfig
from swarmq.forge.config import ForgeConfig
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.llm.config import LLMConfig
from swarmq.missions.config import MissionsConfig, WorkerConfig
from swarmq.names import JOB_FAMILIES
from swarmq.profiles.config import SafeName
from swarmq.roster._api_config import ApiConfig
from swarmq.roster.metrics_config import MetricsConfig
from swarmq.skills.config import SkillImproverConfig, SkillsConfig


class StrictModel(BaseModel):
    """Base of every roster model: unknown keys are errors, values are validated on assignment."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)


class PathsConfig(StrictModel):
    """Canonical roots. ``None`` means the documented default, filled in by the loader."""

    profiles: Path | None = None
    """Worker profiles root (Swarm2: ``~/.hermes/profiles``)."""
    runtime: Path | None = None
    """Control-plane runtime dir: mission ledger, pid files, logs, embedded Redis data."""
    shared: Path | None = None
    """Shared swarm memory root (Swarm2: ``~/.openclaw/workspace/memory``)."""
    hive: Path | None = None
    """opencode-swarm hive data dir (``$XDG_DATA_HOME/opencode-swarm``)."""


_CRON_FIELD = re.compile(
    r"^(\*|[0-9a-z]+(-[0-9a-z]+)?)(/[0-9]+)?(,(\*|[0-9a-z]+(-[0-9a-z]+)?)(/[0-9]+)?)*$"
)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|d)?\s*$")
_UNIT_SECONDS = {None: 1.0, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(value: str | float | int) -> float:
    """``90`` → 90.0, ``"30m"`` → 1800.0, ``"6h"`` → 21600.0."""
    if isinstance(value, bool):
        raise ValueError("expected seconds or a duration like '30m', '6h', '1d'")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        match = _DURATION.match(value)
        if match is None:
            raise ValueError(
                f"{value!r} is neither a duration like '30m', '6h', '1d' nor a crontab"
            )
        seconds = float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    if seconds <= 0:
        raise ValueError("an interval must be positive")
    return seconds


def check_crontab(value: str) -> str:
    """Validate the five fields of a crontab string (minute hour day-of-month month day-of-week)."""
    fields = value.split()
    if len(fields) != 5:
        raise ValueError(
            f"crontab {value!r} has {len(fields)} fields; expected 5: "
            "minute hour day-of-month month day-of-week"
        )
    names = ("minute", "hour", "day-of-month", "month", "day-of-week")
    for name, field in zip(names, fields, strict=True):
        if _CRON_FIELD.match(field.lower()) is None:
            raise ValueError(f"crontab {value!r}: {name} field {field!r} is not valid")
    minute, hour = fields[0], fields[1]
    for name, field, top in (("minute", minute, 59), ("hour", hour, 23)):
        for number in re.findall(r"(?<![/0-9])(\d+)", field):
            if int(number) > top:
                raise ValueError(f"crontab {value!r}: {name} {number} is out of range 0-{top}")
    return value


class ScheduleEntry(StrictModel):
    """A periodic job run by the single beat (schedules are evaluated in UTC)."""

    task: str
    cron: str | None = None
    every: float | None = None
    args: list[Any] = Field(default_factory=list)
    kwargs: dict[str, Any] = Field(default_factory=dict)
    queue: str | None = None

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        return None if value is None else check_crontab(value)

    @field_validator("every", mode="before")
    @classmethod
    def _every(cls, value: Any) -> float | None:
        return None if value is None else parse_duration(value)

    @model_validator(mode="after")
    def _exactly_one(self) -> ScheduleEntry:
        if (self.cron is None) == (self.every is None):
            raise ValueError("give exactly one of cron (a crontab string) or every (an interval)")
        return self


def _expand_schedule_shorthand(value: Any) -> Any:
    """``job: "0 3 * * *"`` or ``job: 6h`` → ``{task: job, cron|every: ...}``."""
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for name, spec in value.items():
        if isinstance(spec, str) and len(spec.split()) >= 2:
            out[name] = {"task": name, "cron": spec}
        elif isinstance(spec, str | int | float) and not isinstance(spec, bool):
            out[name] = {"task": name, "every": spec}
        elif isinstance(spec, dict) and "task" not in spec:
            out[name] = {"task": name, **spec}
        else:
            out[name] = spec
    return out


class FamilyLimits(StrictModel):
    soft_time_limit_seconds: Annotated[float, Field(gt=0)]
    time_limit_seconds: Annotated[float, Field(gt=0)]

    @model_validator(mode="after")
    def _soft_below_hard(self) -> FamilyLimits:
        if self.soft_time_limit_seconds >= self.time_limit_seconds:
            raise ValueError("soft_time_limit_seconds must be below time_limit_seconds")
        return self


def default_family_limits() -> dict[str, FamilyLimits]:
    """Generous for agent runs, tight for bookkeeping jobs."""
    short = FamilyLimits(soft_time_limit_seconds=600, time_limit_seconds=660)
    limits = {family: short for family in JOB_FAMILIES}
    limits["missions"] = FamilyLimits(
        soft_time_limit_seconds=4 * 3600, time_limit_seconds=4 * 3600 + 120
    )
    limits["consolidation"] = FamilyLimits(soft_time_limit_seconds=1800, time_limit_seconds=1860)
    limits["curator"] = FamilyLimits(soft_time_limit_seconds=1200, time_limit_seconds=1260)
    limits["skills"] = FamilyLimits(soft_time_limit_seconds=1200, time_limit_seconds=1260)
    return limits


class TasksConfig(StrictModel):
    """Reliability knobs shared by every task."""

    max_deliveries: Annotated[int, Field(ge=1, le=100)] = 5
    """A message started this many times without finishing is dead-lettered."""
    max_retries: Annotated[int, Field(ge=0, le=20)] = 3
    retry_backoff_max_seconds: Annotated[float, Field(ge=0, le=3600)] = 300.0
    limits: dict[str, FamilyLimits] = Field(default_factory=default_family_limits)

    @field_validator("limits", mode="before")
    @classmethod
    def _merge_defaults(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {**default_family_limits(), **value}
        return value

    @field_validator("limits")
    @classmethod
    def _known_families(cls, value: dict[str, FamilyLimits]) -> dict[str, FamilyLimits]:
        unknown = sorted(set(value) - set(JOB_FAMILIES))
        if unknown:
            raise ValueError(f"unknown job family {unknown[0]!r}; known: {', '.join(JOB_FAMILIES)}")
        return value

    def longest_time_limit(self) -> float:
        return max(limit.time_limit_seconds for limit in self.limits.values())


class FlowerConfig(StrictModel):
    address: str = "127.0.0.1"
    port: Annotated[int, Field(ge=1, le=65535)] = 5555


class Roster(StrictModel):
    """A whole swarm.yaml, with paths already expanded and made absolute by the loader."""

    swarm: SafeName
    """The swarm's name; also namespaces its Redis keys."""
    workspace: Path | None = None
    """Project root holding ``.swarm/`` and ``.agents/`` (default: swarm.yaml's directory)."""
    paths: PathsConfig = Field(default_factory=PathsConfig)
    redis_url: str = "redis://127.0.0.1:6379/0"
    locks: Literal["cluster", "single-host"] = "cluster"
    """Store lock discipline: ``cluster`` (Redis locks; an unreachable Redis is an error, never a
    fallback) or ``single-host`` (same-host file locks, for a machine with no cluster). Recorded
    in the workspace id file so the two are never mixed (see docs/locking.md)."""
    broker_url: str | None = None
    """Defaults to ``redis_url``; ``amqp://`` selects RabbitMQ as the broker."""
    llm: LLMConfig = Field(default_factory=LLMConfig)
    quotas: dict[str, QuotaConfig] = Field(default_factory=default_quotas)
    schedule: dict[str, ScheduleEntry] = Field(default_factory=dict)
    tasks: TasksConfig = Field(default_factory=TasksConfig)
    flower: FlowerConfig = Field(default_factory=FlowerConfig)
    missions: MissionsConfig = Field(default_factory=MissionsConfig)
    api: ApiConfig = Field(default_factory=ApiConfig)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    """The Prometheus exporter and the LLM price table (see docs/metrics.md)."""
    knowledge: KnowledgeConfig = Field(default_factory=KnowledgeConfig)
    """opencode-swarm's ``knowledge.*`` settings (its defaults; see docs/knowledge.md)."""
    curator: CuratorConfig = Field(default_factory=CuratorConfig)
    """Enrichment batches and the skill compiler's readiness gate (see docs/skills.md)."""
    skill_improver: SkillImproverConfig = Field(default_factory=SkillImproverConfig)
    """opencode-swarm's ``skill_improver`` settings; its budget is ``quotas.skill_improver``."""
    skills: SkillsConfig = Field(default_factory=SkillsConfig)
    """Where active generated skills are published for Claude Code and Codex (docs/skills.md)."""
    forge: ForgeConfig = Field(default_factory=ForgeConfig)
    """Transcript mining into AgentOps pending files (see docs/flywheel.md)."""
    flywheel: FlywheelConfig = Field(default_factory=FlywheelConfig)
    """AgentOps pool promotion gates, maturity and metrics (see docs/flywheel.md)."""
    consolidation: ConsolidationConfig = Field(default_factory=ConsolidationConfig)
    """Nightly merge/supersede/link thresholds and scopes (see docs/consolidation.md)."""
    workers: Annotated[list[WorkerConfig], Field(min_length=1)]

    @field_validator("quotas", mode="before")
    @classmethod
    def _merge_default_quotas(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {**{k: v.model_dump() for k, v in default_quotas().items()}, **value}
        return value

    @field_validator("schedule", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return _expand_schedule_shorthand(value)

    @field_validator("redis_url")
    @classmethod
    def _redis_scheme(cls, value: str) -> str:
        if not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("expected a redis://, rediss:// or unix:// URL")
        return value

    @field_validator("broker_url")
    @classmethod
    def _broker_scheme(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(
            ("redis://", "rediss://", "amqp://", "amqps://", "pyamqp://", "redis+socket://")
        ):
            raise ValueError("expected a redis:// or amqp:// URL")
        return value

    # Filled by the loader; typed here so every consumer sees absolute paths.
    @property
    def workspace_dir(self) -> Path:
        assert self.workspace is not None, "roster not resolved by the loader"
        return self.workspace

    @property
    def swarm_dir(self) -> Path:
        """opencode-swarm's per-project store."""
        return self.workspace_dir / ".swarm"

    @property
    def agents_dir(self) -> Path:
        """AgentOps' per-project store."""
        return self.workspace_dir / ".agents"

    @property
    def profiles_dir(self) -> Path:
        assert self.paths.profiles is not None
        return self.paths.profiles

    @property
    def runtime_dir(self) -> Path:
        assert self.paths.runtime is not None
        return self.paths.runtime

    @property
    def shared_dir(self) -> Path:
        assert self.paths.shared is not None
        return self.paths.shared

    @property
    def hive_dir(self) -> Path:
        assert self.paths.hive is not None
        return self.paths.hive

    @property
    def effective_broker_url(self) -> str:
        return self.broker_url or self.redis_url

    def cluster_config(self) -> ClusterConfig:
        """What the coordination layer needs of this roster: its Redis, key namespace, quotas
        and lock discipline with the roots it is recorded in."""
        return ClusterConfig(
            redis_url=self.redis_url,
            swarm=self.swarm,
            quotas=self.quotas,
            quota_dir=self.swarm_dir,
            locks=self.locks,
            workspace_dir=self.workspace_dir,
            roots=(self.profiles_dir, self.shared_dir, self.hive_dir, self.runtime_dir),
            runtime_dir=self.runtime_dir,
        )

    def worker(self, worker_id: str) -> WorkerConfig:
        for worker in self.workers:
            if worker.id == worker_id:
                return worker
        raise KeyError(f"no worker {worker_id!r} in the roster of swarm {self.swarm!r}")

    def consumers(self, queue: str) -> list[WorkerConfig]:
        return [w for w in self.workers if queue in w.all_queues()]


Severity = Literal["error", "warning"]
