"""The memory and missions HTTP API (FastAPI). Import :mod:`swarmq.api.app` for the app itself;
this package stays import-light because the roster schema imports :mod:`swarmq.api.config`."""
