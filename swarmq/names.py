"""Every name two layers must agree on, defined once: task names, quota names, queue names.

The lowest module of the package (it imports nothing of swarmq), so the domain packages may use
it without importing Celery, and a name changed here changes everywhere, the way arq keeps its
key prefixes in one constants module.
"""

from __future__ import annotations

# --- Job families and Celery task names: a task is ``<family>.<job>``; the family is its queue.
JOB_FAMILIES: tuple[str, ...] = (
    "curator",
    "skills",
    "forge",
    "consolidation",
    "maturity",
    "missions",
)
"""One Celery queue per job family; a task named ``<family>.<job>`` is routed to it."""

DEAD_LETTER_QUEUE = "dead_letter"
"""Where poison messages go; no worker consumes it."""
DEAD_LETTER_FILE = "dead-letter.jsonl"
"""Under the runtime dir: one line per dead-lettered message (workers write, the CLI and the
metrics exporter read)."""

OPS_PING = "ops.ping"
MISSIONS_RUN = "missions.run"
FORGE_EXTRACT = "forge.extract"
FORGE_CLOSE_LOOP = "forge.close_loop"
FORGE_SESSION = "forge.session"
"""Forge what a live agent session's transcript gained since its last hook (offset-keyed)."""
CURATOR_ENRICH = "curator.enrich"
SKILLS_IMPROVE = "skills.improve"
SKILLS_GENERATE = "skills.generate"
CONSOLIDATION_SCOPE = "consolidation.scope"
CONSOLIDATION_NIGHTLY = "consolidation.nightly"
MATURITY_SWEEP = "maturity.sweep"
MATURITY_KNOWLEDGE_ADD = "maturity.knowledge_add"
MATURITY_KNOWLEDGE_REINFORCE = "maturity.knowledge_reinforce"
MATURITY_KNOWLEDGE_QUARANTINE = "maturity.knowledge_quarantine"
MATURITY_KNOWLEDGE_RESTORE = "maturity.knowledge_restore"
MATURITY_KNOWLEDGE_ACK = "maturity.knowledge_ack"
MATURITY_EMBED = "maturity.embed"

TASK_MODULES: list[str] = [
    "swarmq.tasks.ops",
    "swarmq.tasks.missions",
    "swarmq.tasks.curator",
    "swarmq.tasks.skills",
    "swarmq.tasks.forge",
    "swarmq.tasks.sessions",
    "swarmq.tasks.maturity",
    "swarmq.tasks.consolidation",
]
"""Modules the worker imports at start (add a module here when adding a job family)."""

# --- LLM quotas (keys of ``quotas:`` in swarm.yaml; opencode-swarm's two daily quota files).
ENRICHMENT_QUOTA = "enrichment"
IMPROVER_QUOTA = "skill_improver"

# --- Queues.
WORKER_QUEUE_PREFIX = "worker."
"""A worker's direct queue is ``worker.<id>``: only that worker consumes it."""


def direct_queue(worker_id: str) -> str:
    """The queue only ``worker_id`` consumes (missions for a named worker go here)."""
    return f"{WORKER_QUEUE_PREFIX}{worker_id}"


def worker_of_queue(queue: str) -> str | None:
    """Inverse of :func:`direct_queue`: the worker id of a direct queue, else None."""
    return (
        queue.removeprefix(WORKER_QUEUE_PREFIX) if queue.startswith(WORKER_QUEUE_PREFIX) else None
    )
