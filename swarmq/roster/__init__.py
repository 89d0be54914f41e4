"""The swarm.yaml roster: schema, loader and cross-entry checks (nothing of Celery here)."""
