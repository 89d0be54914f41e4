"""Celery tasks, one module per job family; each task is thin and calls into the domain packages."""

from swarmq.names import TASK_MODULES

__all__ = ["TASK_MODULES"]
