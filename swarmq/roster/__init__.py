"""The swarm.yaml roster: schema, loader and cross-entry checks (nothing of Celery here).

It composes each package's section model (``knowledge.config``, ``missions.config``, ...) and
imports only config modules, so loading a roster imports no domain code."""
