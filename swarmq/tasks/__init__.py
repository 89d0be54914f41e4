"""Celery tasks, one module per job family; each task is thin and calls into `swarmq.memory`."""

TASK_MODULES: list[str] = [
    "swarmq.tasks.ops",
    "swarmq.tasks.missions",
    "swarmq.tasks.curator",
    "swarmq.tasks.skills",
    "swarmq.tasks.forge",
    "swarmq.tasks.maturity",
    "swarmq.tasks.consolidation",
]
"""Modules the worker imports at start (add a module here when adding a job family)."""
