"""``swarmq learn "…"``: a person records a lesson the swarm should know from now on.

The same path as an agent's ``knowledge_add`` over MCP (:mod:`swarmq.knowledge.recorded`):
validated, deduplicated, durable when it says so, injectable in the next relevant session
without waiting for forge or promotion, and counted apart from mined lessons.
"""

from __future__ import annotations

import getpass
import os
from typing import Annotated

import typer

from swarmq.cli.common import JsonOption, load, store_locks
from swarmq.cli.knowledge import report_add
from swarmq.knowledge.recorded import record_lesson
from swarmq.wiring.knowledge import knowledge_store


def learn(
    ctx: typer.Context,
    lesson: Annotated[
        str, typer.Argument(help="One self-contained, actionable sentence: what to do and why.")
    ],
    category: Annotated[str | None, typer.Option(help="Default: inferred from the text.")] = None,
    tag: Annotated[
        list[str] | None, typer.Option(help="Tag (repeatable); default: inferred.")
    ] = None,
    evidence: Annotated[
        str | None,
        typer.Option(
            help="What showed it, e.g. the failing command and its error: the lesson is then "
            "recalled at that failure."
        ),
    ] = None,
    as_json: bool = JsonOption,
) -> None:
    """Record a lesson the swarm should know from now on (a person's, injectable at once)."""
    roster = load(ctx)
    who = {"kind": "person", "via": "cli"}
    user = os.environ.get("SWARMQ_USER") or _login()
    if user:
        who["user"] = user
    result = record_lesson(
        knowledge_store(roster, store_locks(roster)),
        lesson,
        recorded_by=who,
        category=category,
        tags=tag,
        evidence=evidence,
    )
    report_add(result, as_json, "learn")


def _login() -> str | None:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return None
