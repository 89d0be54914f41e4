"""Top-level commands imported only when they run, so ``swarmq --help`` and every command pay
for their own imports alone (not for Celery, numpy, httpx and the whole domain of the others).

``COMMANDS`` names each command's module and the one-line help ``swarmq --help`` shows; a test
checks every line against the command's own help, so the table cannot drift.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand, TyperGroup

from swarmq.cli.errors import exit_for
from swarmq.errors import SwarmqError

if TYPE_CHECKING:  # typer vendors click since 0.29; only the annotations need its types
    from typer._click import Command, Context, HelpFormatter


@dataclass(frozen=True)
class Lazy:
    """Where a top-level command lives: ``module.attr`` is a function (a command) or a Typer
    (a group of subcommands); ``help`` is the first paragraph of its help."""

    module: str
    attr: str
    help: str


def _cli(name: str, attr: str, help: str) -> Lazy:
    return Lazy(f"swarmq.cli.{name}", attr, help)


COMMANDS: Mapping[str, Lazy] = {
    # Running the swarm (commands before groups, as typer lists eagerly registered ones)
    "demo": _cli("demo", "demo", "Two workers, an embedded Redis and a scripted EXAMPLE agent: four "
                 "missions, lessons forged,\npromoted, injected and acknowledged; then everything "
                 "it started is stopped (unless --keep)."),
    "up": _cli("processes", "up", "Start Redis (embedded if none answers), one worker per roster "
               "entry, one beat; idempotent."),
    "reload": _cli("processes", "reload", "Restart exactly the running processes whose swarm.yaml "
                   "entry changed since they started."),
    "down": _cli("processes", "down", "Stop this host's workers gracefully (SIGTERM, wait, then "
                 "remove the session), beat, Flower, embedded Redis."),
    "status": _cli("processes", "status", "Redis, each worker's session, its Celery ping, queues, "
                   "active tasks and current mission."),
    "api": _cli("api", "api", "Serve /api/swarm-memory and /api/missions (OpenAPI at /docs); "
                "loopback unless told otherwise."),
    "metrics": _cli("metrics", "metrics", "Serve /metrics in the Prometheus text format: quotas, "
                    "LLM spend, knowledge, flywheel,\nmissions."),
    "top": _cli("top", "top", "A live terminal view of the swarm's figures: quotas, LLM spend, "
                "knowledge, flywheel,\nmissions (what /metrics exports), for an operator without "
                "Prometheus."),
    "mcp": _cli("mcp", "app", "Serve knowledge, memory and missions to coding agents over MCP "
                "(stdio; --http)."),
    # Knowledge: forge and flywheel, curation, consolidation
    "forge": _cli("forge", "forge", "Mine transcripts for decisions, solutions, learnings, "
                  "failures and references."),
    "lookup": _cli("lookup", "lookup", "Find what every store knows about QUERY, each fact "
                   "once, and cite the flywheel artifacts found."),
    "learn": _cli("learn", "learn", "Record a lesson the swarm should know from now on (a "
                  "person's, injectable at once)."),
    "curate": _cli("curate", "curate", "Enrich plain-prose knowledge into actionable directives "
                   "(enrichment quota)."),
    "consolidate": _cli("consolidate", "consolidate", "Merge duplicates, supersede outdated or "
                        "contradicted entries, link complements."),
    # Groups: the roster, missions and memory, knowledge stores, quality, budgets, operations
    "roster": _cli("roster", "app", "The swarm.yaml roster."),
    "mission": _cli("mission", "app", "Orchestrator missions dispatched to roster workers."),
    "memory": _cli("memory", "app", "Worker and shared swarm memory (Swarm2 layout)."),
    "knowledge": _cli("knowledge", "app", "Swarm, hive and link knowledge (opencode-swarm format)."),
    "pool": _cli("pool", "app", "The scored candidate pool (.agents/pool, AgentOps format)."),
    "flywheel": _cli("flywheel", "app", "The AgentOps knowledge flywheel: close the loop, measure "
                     "it."),
    "skills": _cli("skills", "app", "Generated skills: compile mature knowledge into SKILL.md "
                   "files."),
    "hooks": _cli("hooks", "app", "Claude Code and Codex hooks that feed the swarm and hand its "
                  "knowledge back."),
    "eval": _cli("eval", "app", "Measure judgement on labelled real data: precision, recall, hit "
                 "rates."),
    "quota": _cli("quota", "app", "Daily LLM-call quotas shared by every worker."),
    "llm": _cli("llm", "app", "Language-model providers and their usage ledger."),
    "workspace": _cli("workspace", "app", "The workspace's recorded lock mode and identity "
                      "(set-locks, reidentify)."),
    "deadletter": _cli("deadletter", "app", "Poison messages moved aside after too many "
                       "deliveries."),
}  # fmt: skip


def load_command(name: str, spec: Lazy) -> Command:
    """The click command typer builds for ``spec``, registered exactly as an eager
    ``app.command(name)`` or ``app.add_typer(..., name=name)`` would register it."""
    target = getattr(importlib.import_module(spec.module), spec.attr)
    holder = typer.Typer(add_completion=False)
    if isinstance(target, typer.Typer):
        holder.add_typer(target, name=name)
    else:
        holder.command(name)(target)
    return typer.main.get_group(holder).commands[name]


class LazyCommands(MutableMapping[str, "Command"]):
    """Every command name from the start (for listing and "did you mean"), each command built
    on first lookup."""

    def __init__(self, table: Mapping[str, Lazy]) -> None:
        self.table = table
        self.loaded: dict[str, Command] = {}

    def __getitem__(self, name: str) -> Command:
        if name not in self.loaded:
            if name not in self.table:
                raise KeyError(name)
            self.loaded[name] = load_command(name, self.table[name])
        return self.loaded[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self.loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self.loaded[name]

    def __iter__(self) -> Iterator[str]:
        yield from self.table
        yield from (name for name in self.loaded if name not in self.table)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, name: object) -> bool:
        return name in self.table or name in self.loaded


class LazyGroup(TyperGroup):
    """A typer group whose top-level commands come from ``COMMANDS``, imported when they run.

    Its help lists each command from the table without importing it. It is also where every
    error swarmq raises on purpose ends: :func:`swarmq.cli.errors.exit_for` turns it into one
    line and its family's exit status."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        commands = LazyCommands(COMMANDS)
        commands.loaded.update(self.commands)  # any registered eagerly on the Typer
        self.commands = commands
        self._describing = False

    def list_commands(self, ctx: Context) -> list[str]:
        return list(self.commands)  # the names only: items() would import every command

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        commands = self.commands
        assert isinstance(commands, LazyCommands)
        spec = COMMANDS.get(cmd_name)
        if self._describing and spec is not None and cmd_name not in commands.loaded:
            return TyperCommand(cmd_name, help=spec.help)  # a help line, not the command
        return commands.get(cmd_name)

    def invoke(self, ctx: Context) -> Any:
        try:
            return super().invoke(ctx)
        except SwarmqError as exc:
            exit_for(exc)

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        self._describing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._describing = False
