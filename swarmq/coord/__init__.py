"""Coordination over Redis: the quota gate and store locks (no Celery here)."""
