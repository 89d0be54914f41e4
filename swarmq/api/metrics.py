"""``/metrics``: the swarm's figures in the Prometheus text format, on the API and on the small
exporter ``swarmq metrics`` serves (the same route, the same bearer token guard).

The figures are read on each scrape (:class:`~swarmq.wiring.figures.FigureReader`); one lock
serialises scrapes, since the reader's incremental folds belong to one caller at a time. The
answer is the classic text format (``version=0.0.4``), which every Prometheus 2.x and 3.x reads.
"""

from __future__ import annotations

import threading
from typing import Any

from fastapi import FastAPI, Response
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from swarmq.api.guard import Guard
from swarmq.roster.schema import Roster
from swarmq.wiring.figures import FigureReader
from swarmq.wiring.metrics import exposition, figure_registry


def add_metrics_route(app: FastAPI, roster: Roster, *, dependencies: list[Any]) -> None:
    """``GET /metrics`` on ``app``; the reader is built on the first scrape."""
    lock = threading.Lock()
    registry: list[CollectorRegistry] = []

    @app.get("/metrics", dependencies=dependencies, include_in_schema=False)
    def metrics() -> Response:
        with lock:
            if not registry:
                registry.append(figure_registry(FigureReader(roster)))
            body = exposition(registry[0])
        return Response(body, media_type=CONTENT_TYPE_PLAIN_0_0_4)


def exporter_app(roster: Roster, *, token: str | None) -> FastAPI:
    """The exporter: ``/metrics`` behind the bearer token and ``/api/health`` (public)."""
    app = FastAPI(title="swarmq metrics", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(Guard, token=token, max_body_bytes=roster.api.max_body_bytes)
    add_metrics_route(app, roster, dependencies=[])

    @app.get("/api/health")
    def health() -> dict[str, Any]:
        return {"ok": True, "swarm": roster.swarm}

    return app


def serve_exporter(roster: Roster, *, host: str, port: int, token: str | None) -> None:
    """Run the exporter with uvicorn (``swarmq metrics``)."""
    import uvicorn

    uvicorn.run(
        exporter_app(roster, token=token),
        host=host,
        port=port,
        log_level="warning",
        proxy_headers=False,
    )
