"""Celery layer: app factory, queues and routes, beat, the Task base class, process launching."""
