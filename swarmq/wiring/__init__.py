"""Composition roots: build the domain's collaborators (stores, providers, jobs) from a roster
and a cluster. Shared by the Celery tasks, the CLI and the demo, and free of Celery, so the CLI
never climbs into `swarmq.tasks` to build a job."""
