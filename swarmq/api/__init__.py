"""The memory and missions HTTP API (FastAPI). Import :mod:`swarmq.api.app` for the app itself;
its settings (the ``api:`` section of swarm.yaml) live in :mod:`swarmq.roster._api_config`."""
