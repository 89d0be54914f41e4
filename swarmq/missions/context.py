"""Loading a worker's context the way Swarm2's startup section describes, and the resume prompt.

Order: IDENTITY, SOUL and MEMORY; runtime.json's currentMissionId; the mission's SUMMARY.md; the
latest local or shared handoff; recent episodes relevant to the mission (automatic recall budget);
the knowledge directives block (its own budget). The prompt is cut to ``context_budget_chars``
by shortening the least important sections first, never the objective or the reporting rules.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

from swarmq.missions.ledger import Assignment, Mission
from swarmq.profiles.handoffs import latest_handoff
from swarmq.profiles.layout import ProfileLayout
from swarmq.profiles.runtime import read_runtime
from swarmq.profiles.search import MemorySearch, Scope, SearchError
from swarmq.profiles.templates import render

KnowledgeProvider = Callable[[str, int], str]
"""``(query, budget_chars) -> Markdown block`` of knowledge directives ('' when none apply)."""

REPORTING_RULES = """\
Report progress with one marker per line (they become mission events, SUMMARY.md and episodes):
  CHECKPOINT: <what is done>      DECISION: <decision and why>     FILE: <path touched>
  NEXT: <next exact action>       BLOCKED: <what you need>         NOTE: <worth keeping>
  RESULT: <outcome>               STATE: DONE | REVIEW | BLOCKED | FAILED
Before exiting print your handoff between a line `BEGIN HANDOFF` and a line `END HANDOFF`,
with the sections ## Completed, ## In progress, ## Files touched, ## Commands run, ## Blockers,
## Next exact action.
If your tools include swarmq's MCP tools: when you learn a lesson the next session should know
(a fix that worked, a trap, a rule of this codebase), record it at once with knowledge_add (one
sentence: what to do and why); when a command fails, ask knowledge_recall_error; acknowledge
directives with knowledge_ack or the KNOWLEDGE_* markers."""


@dataclass
class MissionContext:
    identity: str = ""
    soul: str = ""
    memory: str = ""
    runtime: dict[str, Any] = field(default_factory=dict)
    summary: str = ""
    handoff: str = ""
    handoff_path: str = ""
    episodes: str = ""
    knowledge: str = ""


T = TypeVar("T")


def in_background(work: Callable[[], T]) -> Future[T]:
    """Run ``work`` on a daemon thread now; its result (or exception) comes from the future."""
    future: Future[T] = Future()

    def run() -> None:
        try:
            future.set_result(work())
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, name="mission-context", daemon=True).start()
    return future


def _read(path: Any) -> str:
    try:
        return str(path.read_text("utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        return ""


def load_context(
    layout: ProfileLayout,
    mission: Mission,
    *,
    recall_budget_chars: int,
    knowledge_budget_chars: int,
    knowledge: KnowledgeProvider | None = None,
    search: MemorySearch | None = None,
) -> MissionContext:
    ctx = MissionContext(
        identity=_read(layout.profile_file("IDENTITY.md")),
        soul=_read(layout.profile_file("SOUL.md")),
        memory=_read(layout.profile_file("MEMORY.md")),
        runtime=read_runtime(layout.profiles_dir, layout.worker_id) or {},
    )
    mission_id = str(ctx.runtime.get("currentMissionId") or mission.id)
    if mission_id != mission.id:
        mission_id = mission.id  # the dispatched mission wins over a stale runtime.json
    ctx.summary = _read(layout.summary(mission_id))
    found = latest_handoff(layout, mission_id)
    if found is not None:
        ctx.handoff_path, ctx.handoff = str(found[0]), found[1]
    if recall_budget_chars > 0:
        ctx.episodes = _recall_episodes(layout, mission, recall_budget_chars, search)
    if knowledge is not None and knowledge_budget_chars > 0:
        try:
            ctx.knowledge = knowledge(
                f"{mission.title}\n{mission.objective}", knowledge_budget_chars
            )
        except Exception as exc:  # knowledge is optional context, never fatal
            ctx.knowledge = f"(knowledge directives unavailable: {type(exc).__name__}: {exc})"
        ctx.knowledge = ctx.knowledge[:knowledge_budget_chars]
    return ctx


def _recall_episodes(
    layout: ProfileLayout, mission: Mission, budget: int, search: MemorySearch | None
) -> str:
    """Episode lines mentioning the mission first, then ones matching its objective."""
    search = search or MemorySearch(layout.profiles_dir, layout.shared_dir)
    episodes_prefix = str(layout.episodes_dir)
    blocks: list[str] = []
    used = 0
    seen: set[tuple[str, int]] = set()
    for query in (mission.id, mission.objective[:300]):
        try:
            result = search.search(
                query, scope=Scope.WORKER, worker_id=layout.worker_id, limit=20, budget_chars=budget
            )
        except SearchError:
            continue
        for hit in result.hits:
            if not hit.path.startswith(episodes_prefix) or (hit.path, hit.line) in seen:
                continue
            block = f"{hit.path.rsplit('/', 1)[-1]}:{hit.line}\n{hit.snippet}"
            if used + len(block) + 2 > budget:
                return "\n\n".join(blocks)
            seen.add((hit.path, hit.line))
            blocks.append(block)
            used += len(block) + 2
    return "\n\n".join(blocks)


def render_prompt(
    layout: ProfileLayout,
    mission: Mission,
    assignment: Assignment,
    ctx: MissionContext,
    *,
    resume: bool,
    budget_chars: int,
) -> str:
    """The prompt handed to the agent: fixed head, then context sections shortened to fit."""
    head = [
        f"# Mission {mission.id} — {mission.title}",
        f"Worker: {layout.worker_id} · assignment {assignment.id}"
        + (" · RESUMING: continue from the latest handoff and checkpoints" if resume else ""),
        "",
        "## Objective",
        mission.objective.strip(),
        "",
        "## Resume",
        render("resume.md", memory_dir=str(layout.memory_dir)).strip(),
        "",
        "## Reporting",
        REPORTING_RULES,
    ]
    runtime = {
        k: ctx.runtime.get(k)
        for k in ("currentMissionId", "state", "lastMissionId")
        if k in ctx.runtime
    }
    # Most important first; the tail is what gets shortened when the budget is tight.
    sections = [
        ("Latest handoff", ctx.handoff),
        ("Mission SUMMARY.md", ctx.summary),
        ("IDENTITY.md", ctx.identity),
        ("SOUL.md", ctx.soul),
        ("runtime.json", json.dumps(runtime) if runtime else ""),
        ("MEMORY.md", ctx.memory),
        ("Knowledge directives", ctx.knowledge),
        ("Relevant episodes", ctx.episodes),
    ]
    text = "\n".join(head).strip() + "\n"
    remaining = budget_chars - len(text)
    parts = [text]
    for title, body in sections:
        body = body.strip()
        if not body:
            continue
        header = f"\n## {title}\n\n"
        room = remaining - len(header) - 1
        if room <= 80:
            break
        if len(body) > room:
            cut = len(body) - room + 40
            body = body[: room - 40].rstrip() + f"\n[… {cut} chars cut]"
        parts.append(header + body + "\n")
        remaining -= len(header) + len(body) + 1
    return "".join(parts)
