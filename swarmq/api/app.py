"""The FastAPI app: Swarm2's ``/api/swarm-memory`` contract plus mission endpoints.

Bad input never reaches the disk: ids are checked and paths proven inside their roots by the
domain code, whose errors map to clear 4xx answers (``{"ok": false, "error": ...}``).
"""

from __future__ import annotations

import hmac
import os
import resource
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, HTTPException, Path, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from swarmq.api._connections import guarded_protocol
from swarmq.api.guard import Guard
from swarmq.api.metrics import add_metrics_route
from swarmq.api.models import (
    ID_SCHEMA,
    MemoryWriteBody,
    MissionCancelBody,
    MissionResumeBody,
    MissionSubmitBody,
    answers,
)
from swarmq.client import MissionClient
from swarmq.errors import Conflict, InvalidInput, NotFound, SwarmqError, Unavailable
from swarmq.missions.states import MissionState
from swarmq.profiles.access import (
    MemoryKind,
    MemoryWrite,
    read_memory,
    write_memory,
)
from swarmq.profiles.search import MAX_LIMIT, Scope, memory_search
from swarmq.roster.schema import Roster
from swarmq.storage.paths import check_id

_bearer = HTTPBearer(auto_error=False)

MissionIdPath = Annotated[str, Path(max_length=256, json_schema_extra=ID_SCHEMA)]
"""A mission id in the path: the pattern documented, checked by ``check_id`` (400)."""


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"ok": False, "error": message}, status_code=status)


_FROM_ENV = "<from the roster's token_env>"


def create_app(
    roster: Roster, *, client: MissionClient | None = None, token: str | None = _FROM_ENV
) -> FastAPI:
    """The API for one roster; ``client`` lets tests inject a Celery app and locks.

    ``token`` is the bearer token every ``/api/`` request but health must carry (default: the
    roster's ``api.token_env`` variable; ``None``: no authentication, which ``swarmq api``
    allows only on loopback and only when asked). It is checked before any body is read.
    """
    app = FastAPI(
        title="swarmq",
        version="1",
        summary="Swarm2 worker memory and orchestrator missions",
        description="Bearer-token auth, checked before the request body is read.",
    )
    missions = client or MissionClient(roster)
    known = {w.id for w in roster.workers}
    if token == _FROM_ENV:
        token = os.environ.get(roster.api.token_env) if roster.api.token_env else None

    def authorize(creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> None:
        if token is None:
            return
        if creds is None or not hmac.compare_digest(creds.credentials.encode(), token.encode()):
            raise HTTPException(
                401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"}
            )

    auth = [Depends(authorize)]

    app.add_middleware(Guard, token=token, max_body_bytes=roster.api.max_body_bytes)

    # Error families (swarmq/errors.py), not Python built-ins: a stray ValueError is a bug (500),
    # not the caller's fault. Starlette picks the first family in the exception's MRO.
    for family, status in FAMILY_STATUS.items():
        app.add_exception_handler(family, _handler(status))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {}
        where = ".".join(str(part) for part in first.get("loc", ()))
        detail = jsonable_encoder(
            errors, custom_encoder={bytes: lambda b: b.decode("utf-8", "replace")}
        )
        return JSONResponse(
            {
                "ok": False,
                "error": f"{where}: {first.get('msg', 'invalid request')}",
                "detail": detail,
            },
            status_code=422,
        )

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        response = _error(exc.status_code, str(exc.detail))
        for key, value in (exc.headers or {}).items():
            response.headers[key] = value
        return response

    @app.get("/api/health")
    def health() -> dict[str, Any]:
        return {"ok": True, "swarm": roster.swarm, "workers": sorted(known)}

    add_metrics_route(app, roster, dependencies=auth)

    @app.get("/api/swarm-memory", dependencies=auth, responses=answers(400, 401, 404))
    def get_memory(
        kind: MemoryKind = MemoryKind.PROFILE,
        worker_id: Annotated[
            str | None, Query(alias="workerId", max_length=256, json_schema_extra=ID_SCHEMA)
        ] = None,
        mission_id: Annotated[
            str | None, Query(alias="missionId", max_length=256, json_schema_extra=ID_SCHEMA)
        ] = None,
        date: Annotated[str | None, Query(max_length=64)] = None,
    ) -> dict[str, Any]:
        """Read one kind of memory: profile, mission, episodic, handoff or shared."""
        listing = read_memory(
            roster.profiles_dir,
            roster.shared_dir,
            kind,
            worker_id=worker_id,
            mission_id=mission_id,
            day=date,
            known_workers=known,
        )
        return {
            "ok": True,
            "workerId": listing.worker_id,
            "kind": listing.kind.value,
            "path": listing.path,
            "files": [f.as_dict() for f in listing.files],
        }

    @app.post(
        "/api/swarm-memory", dependencies=auth, responses=answers(400, 401, 404, 409, 413, 503)
    )
    def post_memory(body: MemoryWriteBody) -> dict[str, Any]:
        """Append a mission event, write Markdown atomically, or write a handoff (mirrored)."""
        request = MemoryWrite(
            body.kind,
            body.worker_id,
            body.mission_id,
            body.event_type,
            body.content,
            body.event,
            body.file,
            body.mirror,
        )
        result = write_memory(
            roster.profiles_dir, roster.shared_dir, missions.locks, request, known_workers=known
        )
        return {"ok": True, "workerId": body.worker_id, "kind": body.kind.value, **result}

    @app.get("/api/swarm-memory/search", dependencies=auth, responses=answers(400, 401, 404))
    def search_memory(
        query: Annotated[str, Query(min_length=1, max_length=1000)],
        worker_id: Annotated[
            str | None, Query(alias="workerId", max_length=256, json_schema_extra=ID_SCHEMA)
        ] = None,
        scope: Scope = Scope.WORKER,
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 10,
        budget: Annotated[int | None, Query(ge=100, le=1_000_000)] = None,
    ) -> dict[str, Any]:
        """Exact phrase > token overlap > recency; snippets with path and line numbers."""
        if worker_id is not None and check_id(worker_id, "workerId") not in known:
            raise NotFound(f"unknown worker {worker_id!r}: not in the roster")
        result = memory_search(roster.profiles_dir, roster.shared_dir).search(
            query,
            scope=scope,
            worker_id=worker_id,
            limit=limit,
            budget_chars=budget or roster.missions.search_budget_chars,
        )
        return {
            "ok": True,
            "query": query,
            "scope": scope.value,
            "workerId": worker_id,
            "results": [h.as_dict() for h in result.hits],
            "truncated": result.truncated,
            "chars": result.chars,
        }

    @app.post(
        "/api/missions",
        status_code=201,
        dependencies=auth,
        responses=answers(400, 401, 404, 409, 413, 503),
    )
    def submit_mission(
        body: MissionSubmitBody,
        idempotency_key: Annotated[
            str | None, Header(alias="Idempotency-Key", max_length=256)
        ] = None,
    ) -> dict[str, Any]:
        """Submit a mission to a named worker, or by role/specialty to the least-loaded live one."""
        mission = missions.submit(
            body.objective,
            title=body.title,
            worker=body.worker_id,
            role=body.role,
            specialty=body.specialty,
            client_key=body.client_key or idempotency_key,
            mission_id=body.mission_id,
        )
        return {"ok": True, "mission": mission.dump()}

    @app.get("/api/missions", dependencies=auth, responses=answers(400, 401))
    def list_missions(
        state: MissionState | None = None,
        worker_id: Annotated[
            str | None, Query(alias="workerId", max_length=256, json_schema_extra=ID_SCHEMA)
        ] = None,
        limit: Annotated[int, Query(ge=1, le=10_000)] = 100,
    ) -> dict[str, Any]:
        found = missions.list(state=state.value if state else None, worker=worker_id, limit=limit)
        return {"ok": True, "missions": [m.dump() for m in found]}

    @app.get("/api/missions/{mission_id}", dependencies=auth, responses=answers(400, 401, 404))
    def show_mission(mission_id: MissionIdPath) -> dict[str, Any]:
        return {"ok": True, "mission": missions.show(mission_id)}

    @app.post(
        "/api/missions/{mission_id}/cancel",
        dependencies=auth,
        responses=answers(400, 401, 404, 409, 413, 503),
    )
    def cancel(mission_id: MissionIdPath, body: MissionCancelBody | None = None) -> dict[str, Any]:
        check_id(mission_id, "missionId")
        mission = missions.cancel(mission_id, (body or MissionCancelBody()).reason)
        return {"ok": True, "mission": mission.dump()}

    @app.post(
        "/api/missions/{mission_id}/resume",
        dependencies=auth,
        responses=answers(400, 401, 404, 409, 413, 503),
    )
    def resume(mission_id: MissionIdPath, body: MissionResumeBody | None = None) -> dict[str, Any]:
        check_id(mission_id, "missionId")
        body = body or MissionResumeBody()
        mission = missions.resume(mission_id, worker=body.worker_id, note=body.note)
        return {"ok": True, "mission": mission.dump()}

    return app


FAMILY_STATUS: dict[type[SwarmqError], int] = {
    InvalidInput: 400,
    NotFound: 404,
    Conflict: 409,
    Unavailable: 503,
}
"""The status code of each error family; any other ``SwarmqError`` is a 500."""


def _handler(status: int) -> Any:
    async def handle(request: Request, exc: Exception) -> JSONResponse:
        text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        return _error(status, text)

    return handle


def serve(
    roster: Roster,
    *,
    host: str | None = None,
    port: int | None = None,
    token: str | None = _FROM_ENV,
) -> None:
    """Run the API with uvicorn (``swarmq api``): slow-header clients are cut off after
    ``api.header_timeout_seconds`` and connections capped under the descriptor limit
    (:mod:`swarmq.api._connections`)."""
    import uvicorn

    uvicorn.run(
        create_app(roster, token=token),
        host=host or roster.api.host,
        port=port or roster.api.port,
        log_level="info",
        proxy_headers=False,
        http=guarded_protocol(roster.api.header_timeout_seconds, connection_cap(roster)),
        timeout_keep_alive=int(max(1, roster.api.keep_alive_seconds)),
    )


DESCRIPTORS_SPARE = 64
"""Descriptors kept free of client connections (logs, stores, Redis, the listening socket)."""


def connection_cap(roster: Roster) -> int:
    """``api.max_connections``, but never past this process's descriptor limit."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return roster.api.max_connections
    return max(16, min(roster.api.max_connections, soft - DESCRIPTORS_SPARE))
