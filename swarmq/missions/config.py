"""The ``missions:`` section of swarm.yaml (dispatch, agent runs and recall budgets) and the
``workers:`` entries that run them."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from swarmq.names import direct_queue
from swarmq.profiles.config import WorkerProfile


class TranscriptSource(StrEnum):
    """Which transcript of a mission run forge mines (``agent.transcript``)."""

    AUTO = "auto"
    """Claude Code (program ``claude``) and Codex (``codex exec``) are recognised by the
    command; anything else is ``stdout``."""
    CLAUDE_CODE = "claude-code"
    """The session file Claude Code writes under ``<CLAUDE_CONFIG_DIR or ~/.claude>/projects``."""
    CODEX = "codex"
    """The rollout Codex writes under ``<CODEX_HOME or ~/.codex>/sessions``."""
    STDOUT = "stdout"
    """What the agent prints (the mission's ``transcript-<assignmentId>.log``)."""


class AgentConfig(BaseModel):
    """The coding agent a worker runs for a mission (used by ``missions.run``); a worker's
    ``agent:`` in swarm.yaml."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)

    command: Annotated[list[str], Field(min_length=1)]
    """argv template; ``{prompt}`` and ``{prompt_file}`` are substituted, no shell involved."""
    timeout_seconds: Annotated[float, Field(gt=0, le=7 * 86_400)] = 3600.0
    env: dict[str, str] = Field(default_factory=dict)
    cwd: Path | None = None
    transcript: TranscriptSource = TranscriptSource.AUTO
    """What forge receives when the run ends: the agent's own session file (every tool call,
    error and retry) or its stdout. The stdout log is kept either way (markers, the pane); a
    session that cannot be found is forged from stdout and the mission records why."""


class MissionsConfig(BaseModel):
    """How missions are dispatched and run; every default is what a fresh swarm needs."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    require_live_worker: bool = True
    """Refuse to queue for a worker that is not running: no presence key and no answer to ping
    (the mission is marked blocked)."""
    ping_timeout_seconds: Annotated[float, Field(gt=0, le=30)] = 1.0
    heartbeat_seconds: Annotated[float, Field(gt=0, le=600)] = 10.0
    """How often a running assignment stamps its heartbeat (heartbeat file + runtime.json)."""
    stale_after_seconds: Annotated[float, Field(gt=0, le=86_400)] = 60.0
    """A claim whose heartbeat is older than this is taken over by a redelivery."""
    reap_after_seconds: Annotated[float, Field(gt=0, le=86_400)] = 120.0
    """The reaper resumes an executing mission elsewhere when its heartbeat is this old and its
    worker node does not answer (or answers but no longer runs it)."""
    reap_every_seconds: Annotated[float, Field(ge=0, le=3600)] = 30.0
    """How often the active beat runs the reaper (0: never; ``swarmq mission reap`` by hand)."""
    redis_outage_grace_seconds: Annotated[float, Field(ge=0, le=86_400)] = 300.0
    """How long a running mission waits for an unreachable Redis to come back when it needs a
    store lock (recording a marker, settling), before the run fails for want of it."""
    kill_grace_seconds: Annotated[float, Field(ge=0, le=600)] = 5.0
    """Between SIGTERM and SIGKILL when an agent times out or its mission is cancelled."""
    echo_output: bool = True
    """Copy the agent's output to the worker's stdout (its tmux pane) besides the transcript."""
    context_budget_chars: Annotated[int, Field(ge=500, le=1_000_000)] = 24_000
    """Upper bound of the whole resume prompt."""
    recall_budget_chars: Annotated[int, Field(ge=0, le=100_000)] = 4_000
    """Automatic recall of relevant episodes (AutoCode's automatic recall limit)."""
    search_budget_chars: Annotated[int, Field(ge=100, le=1_000_000)] = 7_000
    """Manual recall (memory search) output budget, whole results only."""
    knowledge_budget_chars: Annotated[int, Field(ge=0, le=100_000)] = 4_000
    """The knowledge directives block injected into the prompt."""
    archive_completed: bool = True
    ledger_keep_finished: Annotated[int, Field(ge=0, le=100_000)] = 50
    """Complete/cancelled missions kept in swarm-missions.json (newest); older ones are retired
    to the archive ``<shared>/swarm/missions/<id>/mission.json`` and ``missions-index.jsonl``."""
    ledger_keep_finished_seconds: Annotated[float, Field(ge=0, le=30 * 86_400)] = 3600.0
    """...and for at most this long after they finished."""
    extract_transcripts: bool = True
    """Enqueue ``forge.extract`` with the transcript when that task is registered."""


class PoolKind(StrEnum):
    PREFORK = "prefork"
    SOLO = "solo"
    THREADS = "threads"


class WorkerConfig(WorkerProfile):
    """One roster entry: a Celery worker process with a Swarm2 identity, the queues it consumes
    and the agent it runs for missions."""

    queues: list[str] = Field(default_factory=list)
    """Job-family queues this worker consumes besides its own ``worker.<id>`` queue."""
    concurrency: Annotated[int, Field(ge=1, le=64)] = 1
    pool: PoolKind = PoolKind.PREFORK
    agent: AgentConfig | None = None

    @property
    def direct_queue(self) -> str:
        return direct_queue(self.id)

    def all_queues(self) -> list[str]:
        """Every queue the worker consumes, its direct queue first."""
        return [self.direct_queue, *(q for q in self.queues if q != self.direct_queue)]
