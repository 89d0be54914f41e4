"""Celery tasks, one module per job family; each task is thin and calls into the domain packages."""
