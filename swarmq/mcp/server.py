"""``swarmq mcp``: the swarm's knowledge, memory and missions as MCP tools, on the official SDK.

Every tool goes through the same domain call as its CLI verb: ``knowledge_add`` is
``TierStore.add`` (validation, dedup, reinforcement, group commit, returning only after the
fsync), ``knowledge_ack`` is ``acknowledge_with_feedback`` on a ``KNOWLEDGE_*`` marker, the
mission tools are :class:`~swarmq.client.MissionClient`. Nothing is cached between calls but the
stores' own warm mirrors, which refresh from disk on every read, so any number of servers (one
per agent session, over stdio, or replicas behind HTTP) can serve one workspace at once.

Errors: the four families of :mod:`swarmq.errors` become MCP tool errors (``isError``) whose text
starts with the family and names what was wrong; a refused add is a tool error naming the
validation layer and rule. A write that raised is never answered as a success.
"""

from __future__ import annotations

import functools
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, ParamSpec, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from pydantic import BaseModel, Field

from swarmq.client import MissionClient
from swarmq.errors import Conflict, InvalidInput, NotFound, SwarmqError, Unavailable
from swarmq.federated.finding import Fused
from swarmq.federated.inject import FederatedInjection
from swarmq.federated.inject import inject as federated_inject
from swarmq.federated.recall import recall_failure
from swarmq.federated.search import ask
from swarmq.knowledge.model import Category
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext
from swarmq.knowledge.recorded import EVIDENCE_MAX, record_lesson
from swarmq.missions.states import MissionState
from swarmq.profiles.access import MemoryKind, read_memory
from swarmq.profiles.search import MAX_LIMIT, Scope, memory_search
from swarmq.roster.schema import Roster
from swarmq.storage.call_latency import LatencyRecorder
from swarmq.storage.locking import StoreLocks
from swarmq.storage.paths import check_id
from swarmq.wiring.federated import workspace_stores
from swarmq.wiring.flywheel import acknowledge_with_feedback
from swarmq.wiring.knowledge import knowledge_store

SERVER_NAME = "swarmq"
ACK_SOURCE = "mcp"
"""The receipt ``source`` of an acknowledgement made through the ``knowledge_ack`` tool."""
QUERY_MAX = 2000
ID_PATTERN = r"^[A-Za-z0-9_.-]{1,128}$"
ENTRY_ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,128}$"

INSTRUCTIONS = (
    "swarmq is this swarm's shared memory. Before a task, call knowledge_inject with the task to "
    "get the lessons that apply (keep its trace_id). When a call fails, call "
    "knowledge_recall_error with the command and its error. When you learn something another "
    "agent should know next time (a fix that worked, a trap, a rule of this codebase), record "
    "it at once with knowledge_add: one self-contained, actionable sentence with the reason. "
    "After using or rejecting an injected lesson, call knowledge_ack with the trace_id, the "
    "entry id and your verdict."
)

P = ParamSpec("P")
R = TypeVar("R")

FAMILIES: tuple[tuple[type[SwarmqError], str], ...] = (
    (InvalidInput, "invalid input"),
    (NotFound, "not found"),
    (Conflict, "conflict"),
    (Unavailable, "unavailable"),
)


def describe(exc: SwarmqError) -> str:
    """``<family>: <message>``; the family says what the agent can do (fix the input, re-read,
    retry later)."""
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    for family, label in FAMILIES:
        if isinstance(exc, family):
            return f"{label}: {text}"
    return f"error: {text}"


def tool_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Map the error families to MCP tool errors (the signature is kept for the schema)."""

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except SwarmqError as exc:
            raise ToolError(describe(exc)) from exc

    return call


def timed_tool(latency: LatencyRecorder) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """:func:`tool_errors` that also counts each call's seconds under the tool's name."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        inner = tool_errors(fn)
        name = fn.__name__
        latency.allow(name)

        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                latency.observe(name, time.perf_counter() - started)

        return call

    return wrap


@dataclass(frozen=True, slots=True)
class Caller:
    """Who the server acts for: the worker and session of the agent that started it."""

    worker_id: str | None = None
    session_id: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Caller:
        """What the mission runner exports to its agent (and so to the servers the agent
        starts): ``SWARMQ_WORKER_ID`` and the assignment (else mission) as the session."""
        env = os.environ if environ is None else environ
        session = (
            env.get("SWARMQ_SESSION_ID")
            or env.get("SWARMQ_ASSIGNMENT_ID")
            or env.get("SWARMQ_MISSION_ID")
        )
        return cls(env.get("SWARMQ_WORKER_ID") or None, session or None)

    def record(self) -> dict[str, str]:
        data: dict[str, str] = {"kind": "agent", "via": "mcp"}
        if self.worker_id:
            data["worker_id"] = self.worker_id
        if self.session_id:
            data["session_id"] = self.session_id
        return data


# -- results ------------------------------------------------------------------------------------


class KnowledgeHit(BaseModel):
    id: str
    lesson: str = Field(description="The whole lesson, learning or memory line.")
    store: str = Field(
        description="swarm, hive, learning, pattern, candidate, worker-memory or shared-memory."
    )
    source: str = Field(description="The tier, or the file (path[:line]) it was read from.")
    also_in: list[str] = Field(
        default_factory=list, description="Other stores holding the same fact (shown once)."
    )
    category: str | None = None
    tier: str
    status: str | None = None
    confidence: float | None = None
    score: float


class SearchResult(BaseModel):
    results: list[KnowledgeHit]


class Directives(BaseModel):
    trace_id: str = Field(description="Pass it to knowledge_ack with each entry id.")
    block: str | None = Field(
        description="The <swarm_knowledge_directives> block; null when nothing is relevant."
    )
    entries: list[KnowledgeHit]


class AddOutcome(BaseModel):
    outcome: Literal["added", "reinforced", "already_confirmed_phase", "duplicate", "quarantined"]
    id: str | None
    reason: str | None = None
    warning: str | None = Field(
        default=None, description="A validation warning: stored, flagged for review."
    )


class AckOutcome(BaseModel):
    status: Literal["committed", "duplicate"]
    detail: str | None
    entry_id: str
    counters: dict[str, Any] = Field(
        default_factory=dict, description="The entry's retrieval_outcomes after the ack."
    )


class MemoryHits(BaseModel):
    results: list[dict[str, Any]]
    truncated: bool


class MissionView(BaseModel):
    mission: dict[str, Any]


class MissionList(BaseModel):
    missions: list[dict[str, Any]]


def _fused_hit(fused: Fused) -> KnowledgeHit:
    found = fused.finding
    entry = found.ranked.entry if found.ranked is not None else None
    return KnowledgeHit(
        id=found.id,
        lesson=found.text,
        store=found.store.value,
        source=found.location,
        also_in=[f"{f.store.value} {f.location}" for f in fused.also],
        category=entry.category if entry is not None else None,
        tier=found.store.value,
        status=entry.status if entry is not None else None,
        confidence=entry.confidence if entry is not None else None,
        score=round(fused.score, 6),
    )


def _fused_directives(injection: FederatedInjection) -> Directives:
    return Directives(
        trace_id=injection.trace_id,
        block=injection.block,
        entries=[_fused_hit(f) for f in injection.shown],
    )


MISSION_FIELDS = (
    "id", "title", "objective", "state", "target", "reason", "clientKey", "createdAt", "updatedAt"
)  # fmt: skip


def _mission_brief(data: dict[str, Any]) -> dict[str, Any]:
    return {k: data[k] for k in MISSION_FIELDS if k in data}


# -- the server ---------------------------------------------------------------------------------


def build_server(
    roster: Roster,
    locks: StoreLocks,
    *,
    caller: Caller | None = None,
    missions: MissionClient | None = None,
) -> MCPServer[Any]:
    """The MCP server for one roster's workspace, acting for ``caller`` (default: from the
    environment). ``missions`` lets tests pass a client with their own Celery app."""
    who = caller if caller is not None else Caller.from_env()
    if who.worker_id is not None:
        check_id(who.worker_id, "SWARMQ_WORKER_ID")
    known = {w.id for w in roster.workers}
    mine = who.worker_id if who.worker_id in known else None
    # mine: the caller's profile when the roster knows the worker (else it only signs its adds)
    server: MCPServer[Any] = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING")
    store: KnowledgeStore = knowledge_store(roster, locks)
    stores = workspace_stores(roster, locks, knowledge=store, worker_id=mine)
    client = missions or MissionClient(roster, locks=locks)
    timed = timed_tool(LatencyRecorder(roster.runtime_dir, "mcp", ()))

    @server.tool(
        description="Search everything the swarm knows (swarm and hive knowledge, learnings, "
        "patterns, pool candidates, worker and shared memory) for a topic, error or file; "
        "ranked together, each fact once, best first. Read-only: nothing is recorded."
    )
    @timed
    def knowledge_search(
        query: Annotated[str, Field(min_length=1, max_length=QUERY_MAX, description="Free text.")],
        limit: Annotated[int, Field(ge=1, le=50, description="At most this many.")] = 5,
    ) -> SearchResult:
        results = ask(stores, QueryContext(text=query), limit=limit)
        return SearchResult(results=[_fused_hit(r) for r in results[:limit]])

    @server.tool(
        description="The lessons that apply to a task you are about to do, as the budgeted "
        "<swarm_knowledge_directives> block with a trace_id (block is null when nothing is "
        "relevant). What is shown is recorded; acknowledge each entry with knowledge_ack."
    )
    @timed
    def knowledge_inject(
        task: Annotated[
            str, Field(min_length=1, max_length=QUERY_MAX, description="What you are about to do.")
        ],
    ) -> Directives:
        injection = federated_inject(stores, QueryContext(text=task), session_id=who.session_id)
        return _fused_directives(injection)

    @server.tool(
        description="What every store holds under a failing call's failure signature "
        "(knowledge entries, learnings, pool candidates, memory notes, each fact once): give the "
        "command or tool call and its error output. Empty when nothing matches."
    )
    @timed
    def knowledge_recall_error(
        call: Annotated[
            str, Field(min_length=1, max_length=QUERY_MAX, description="The failing command.")
        ],
        error: Annotated[
            str, Field(max_length=20_000, description="Its error output (the last lines).")
        ] = "",
        limit: Annotated[int, Field(ge=1, le=20)] = 3,
    ) -> Directives:
        text = f"$ {call}\n{error}" if error else call
        injection = recall_failure(
            stores, text, limit=limit, agent=who.worker_id, session_id=who.session_id
        )
        return _fused_directives(injection)

    @server.tool(
        description="Record a lesson you just learned so the next session gets it: one "
        "self-contained, actionable sentence (15-280 characters) saying what to do and why. "
        "A near-duplicate of an existing lesson reinforces it instead. Returns the outcome; a "
        "lesson the validation rules refuse is an error naming the rule."
    )
    @timed
    def knowledge_add(
        lesson: Annotated[str, Field(min_length=1, max_length=2000)],
        category: Annotated[
            Category | None, Field(description="Default: inferred from the text.")
        ] = None,
        tags: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=64)]] | None,
            Field(max_length=20, description="Default: inferred from the text."),
        ] = None,
        evidence: Annotated[
            str | None,
            Field(
                max_length=EVIDENCE_MAX,
                description="What showed it: the failing command and its error ('$ <command>' "
                "then its output; the lesson is then recalled by that failure), the file, the fix.",
            ),
        ] = None,
    ) -> AddOutcome:
        result = record_lesson(
            store,
            lesson,
            recorded_by=who.record(),
            category=category.value if category is not None else None,
            tags=tags,
            evidence=evidence,
        )
        check = result.validation
        if result.outcome == "rejected":
            raise ToolError(
                f"rejected by validation layer {check.layer}: {result.reason}; nothing was stored"
            )
        warning = check.reason if check.severity == "warning" else None
        return AddOutcome(
            outcome="quarantined" if result.outcome == "unactionable" else result.outcome,
            id=result.entry.id if result.entry else None,
            reason=result.reason,
            warning=warning,
        )

    @server.tool(
        description="Acknowledge an injected lesson: applied (you followed it), n_a (did not "
        "apply to this task), ignored, contradicted (it was wrong here) or violated. Same as "
        "printing KNOWLEDGE_<VERDICT>:<trace_id>:<entry_id>."
    )
    @timed
    def knowledge_ack(
        trace_id: Annotated[str, Field(pattern=ID_PATTERN)],
        entry_id: Annotated[str, Field(pattern=ENTRY_ID_PATTERN)],
        verdict: Literal["applied", "n_a", "ignored", "contradicted", "violated"],
        reason: Annotated[str | None, Field(max_length=500)] = None,
    ) -> AckOutcome:
        marker = f"KNOWLEDGE_{verdict.upper()}:{trace_id}:{entry_id}"
        if reason:
            marker += " reason=" + re.sub(r"\s+", " ", reason).strip()
        results = acknowledge_with_feedback(
            roster, locks, marker, knowledge=store, source=ACK_SOURCE, agent=who.worker_id
        )
        if len(results) != 1:  # the patterns above make this a bug, never the agent's input
            raise ToolError(f"the acknowledgement {marker!r} did not parse as one marker")
        ack = results[0]
        if ack.status == "rejected":
            raise ToolError(f"conflict: acknowledgement rejected: {ack.detail}")
        status: Literal["committed", "duplicate"] = (
            "committed" if ack.status == "committed" else "duplicate"
        )
        counters = dict(ack.entry.outcomes) if ack.entry is not None else {}
        return AckOutcome(status=status, detail=ack.detail, entry_id=entry_id, counters=counters)

    @server.tool(
        name="memory_search",
        description="Search worker and shared memory (mission summaries, handoffs, episodes, "
        "MEMORY.md): exact phrase > token overlap > recency, snippets with file and line.",
    )
    @timed
    def search_memory(
        query: Annotated[str, Field(min_length=1, max_length=1000)],
        scope: Annotated[
            Literal["worker", "shared", "all"],
            Field(description="worker: one worker's memory (default: yours); all: everything."),
        ] = "all",
        worker_id: Annotated[str | None, Field(pattern=ID_PATTERN)] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = 10,
    ) -> MemoryHits:
        worker = worker_id or mine
        if worker is not None and worker not in known:
            raise NotFound(f"unknown worker {worker!r}: not in the roster")
        result = memory_search(roster.profiles_dir, roster.shared_dir).search(
            query,
            scope=Scope(scope),
            worker_id=worker,
            limit=limit,
            budget_chars=roster.missions.search_budget_chars,
        )
        return MemoryHits(results=[h.as_dict() for h in result.hits], truncated=result.truncated)

    @server.tool(
        description="Submit a mission (orchestrators only): to a named worker, or by role to the "
        "least-loaded live one. key makes it idempotent: the same key returns the same mission."
    )
    @timed
    def mission_submit(
        objective: Annotated[str, Field(min_length=1, max_length=20_000)],
        worker: Annotated[str | None, Field(pattern=ID_PATTERN)] = None,
        role: Annotated[str | None, Field(max_length=64)] = None,
        key: Annotated[str | None, Field(max_length=256)] = None,
        title: Annotated[str | None, Field(max_length=200)] = None,
    ) -> MissionView:
        mission = client.submit(objective, title=title, worker=worker, role=role, client_key=key)
        return MissionView(mission=_mission_brief(mission.dump()))

    @server.tool(description="One mission: its state, assignments and events.")
    @timed
    def mission_status(mission_id: Annotated[str, Field(pattern=ID_PATTERN)]) -> MissionView:
        return MissionView(mission=client.show(check_id(mission_id, "missionId")))

    @server.tool(description="Missions, newest first, optionally only those in one state.")
    @timed
    def mission_list(
        state: MissionState | None = None,
        limit: Annotated[int, Field(ge=1, le=500)] = 20,
    ) -> MissionList:
        found = client.list(state=state.value if state else None, limit=limit)
        return MissionList(missions=[_mission_brief(m.dump()) for m in found])

    _profile_resources(server, roster, known, mine)
    return server


PROFILE_RESOURCES: dict[str, tuple[MemoryKind, str | None]] = {
    "identity": (MemoryKind.PROFILE, "IDENTITY.md"),
    "memory": (MemoryKind.PROFILE, "MEMORY.md"),
    "handoff": (MemoryKind.HANDOFF, None),
}
"""Resource name → what it reads; a handoff is the worker's most recent one."""


def _profile_resources(
    server: MCPServer[Any], roster: Roster, known: set[str], mine: str | None
) -> None:
    def read(worker_id: str, name: str) -> str:
        if worker_id not in known:
            raise ResourceError(f"not found: unknown worker {worker_id!r}: not in the roster")
        kind, file = PROFILE_RESOURCES[name]
        try:
            listing = read_memory(
                roster.profiles_dir,
                roster.shared_dir,
                kind,
                worker_id=worker_id,
                known_workers=known,
            )
        except SwarmqError as exc:
            raise ResourceError(describe(exc)) from exc
        for found in listing.files:
            if file is None or found.name == file:
                return found.content
        raise ResourceError(f"not found: worker {worker_id} has no {file or 'handoff'} yet")

    for name in PROFILE_RESOURCES:
        label = PROFILE_RESOURCES[name][1] or "latest handoff"

        def template(worker_id: str, name: str = name) -> str:
            return read(worker_id, name)

        server.resource(
            f"swarmq://workers/{{worker_id}}/{name}",
            name=f"worker-{name}",
            description=f"A worker's {label} (Swarm2 profile memory).",
            mime_type="text/markdown",
        )(_bind_template(template))
        if mine is not None:
            worker = mine

            def own(name: str = name, worker: str = worker) -> str:
                return read(worker, name)

            server.resource(
                f"swarmq://workers/{worker}/{name}",
                name=f"my-{name}",
                description=f"Your {label} (worker {worker}).",
                mime_type="text/markdown",
            )(_bind_static(own))


def _bind_template(fn: Callable[..., str]) -> Callable[[str], str]:
    """A one-parameter function (the URI's only variable), as the SDK matches parameters."""

    def read(worker_id: str) -> str:
        return fn(worker_id)

    return read


def _bind_static(fn: Callable[[], str]) -> Callable[[], str]:
    def read() -> str:
        return fn()

    return read
