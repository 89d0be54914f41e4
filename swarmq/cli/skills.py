"""``swarmq skills list|generate|apply|inspect|regenerate|improve``: generated skills."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markdown import Markdown
from rich.table import Table

from swarmq.cli.common import JsonOption, emit_json, fail, load, store_locks
from swarmq.cli.console import cell, console, say
from swarmq.cli.jobs import cluster_or_none, short, submit
from swarmq.names import SKILLS_IMPROVE
from swarmq.skills.compiler import SkillWrite
from swarmq.wiring.llm import compiler_for, run_improver

app = typer.Typer(
    help="Generated skills: compile mature knowledge into SKILL.md files.", no_args_is_help=True
)

ForceOption = typer.Option(
    False,
    "--force",
    help=(
        "Write anyway: over a SKILL.md without the generated marker, past a refused evaluation or a "
        "rejected-edit match (the evaluation is still reported)."
    ),
)
NoEvalOption = typer.Option(
    False,
    "--no-eval",
    help=(
        "Skip the eval fixtures under .swarm/skills/evals/<slug>/ and the rejected-edits list they feed."
    ),
)


def _compiler(ctx: typer.Context) -> Any:
    roster = load(ctx)
    return roster, compiler_for(roster, store_locks(roster, cluster_or_none(roster, quiet=True)))


def _guard(action: Any) -> Any:
    try:
        return action()
    except OSError as exc:  # swarmq's own errors go to swarmq.cli.errors
        fail(str(exc))


def _show_writes(results: list[SkillWrite], root: Any, as_json: bool) -> None:
    if as_json:
        emit_json([r.as_dict() for r in results])
    else:
        table = Table()
        for column in ("slug", "written", "mode", "path", "sources", "eval", "reason"):
            table.add_column(column)
        for r in results:
            table.add_row(
                r.slug,
                cell("yes", "green") if r.written else cell("no", "red"),
                r.mode or "-",
                short(r.path, root),
                ", ".join(r.source_ids)
                + (f" (missing: {', '.join(r.missing_ids)})" if r.missing_ids else ""),
                r.evaluation.status if r.evaluation else "-",
                r.reason or "",
            )
        console.print(table)
        for r in results:
            for p in r.published:
                where = short(p.path, root)
                if p.written:
                    say((f"{r.slug}: published for {p.agent}: {where}", "dim"))
                else:
                    say((f"{r.slug}: not published for {p.agent}:", "yellow"), f" {p.reason}")
        if any(
            not r.written and (r.evaluation is not None or "rejected before" in (r.reason or ""))
            for r in results
        ):
            console.print(
                "refused by the eval gate: --force writes it anyway, --no-eval skips the "
                "fixtures and the rejected-edits list",
                style="dim",
            )
    if results and not any(r.written for r in results):
        raise typer.Exit(1)


@app.command("list")
def list_skills(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """Drafts and active generated skills, with their sources and staleness."""
    roster, compiler = _compiler(ctx)
    listing = _guard(compiler.listing)
    if as_json:
        emit_json(listing)
        return
    table = Table(title=f"skills of {roster.workspace_dir}")
    for column in ("slug", "kind", "version", "sources", "path", "notes"):
        table.add_column(column)
    for draft in listing["drafts"]:
        table.add_row(
            draft["slug"],
            cell("draft", "yellow"),
            "-",
            str(len(draft["source_ids"])),
            short(draft["path"], roster.workspace_dir),
            "",
        )
    for skill in listing["active"]:
        notes = (
            "hand-written (no marker)"
            if not skill["generated"]
            else ", ".join(skill["stale"]) or "up to date"
        )
        table.add_row(
            skill["slug"],
            cell("active", "green"),
            str(skill["version"] or "-"),
            str(len(skill["source_ids"])),
            short(skill["path"], roster.workspace_dir),
            notes,
        )
    console.print(table)


@app.command("generate")
def generate(
    ctx: typer.Context,
    active: Annotated[
        bool, typer.Option("--active", help="Write active skills instead of drafts.")
    ] = False,
    ids: Annotated[
        list[str] | None, typer.Option("--id", help="Compile exactly these entries (repeatable).")
    ] = None,
    slug: Annotated[str | None, typer.Option("--slug", help="Slug of the (first) skill.")] = None,
    force: bool = ForceOption,
    no_eval: bool = NoEvalOption,
    as_json: bool = JsonOption,
) -> None:
    """Compile mature knowledge (or the entries named with --id) into skills."""
    roster, compiler = _compiler(ctx)
    if not roster.curator.skill_generation_enabled:
        fail("curator.skill_generation_enabled is false in swarm.yaml")
    results = _guard(
        lambda: compiler.generate(
            mode="active" if active else "draft",
            source_ids=ids or None,
            slug=slug,
            force=force,
            evaluate_it=not no_eval,
        )
    )
    _show_writes(results, roster.workspace_dir, as_json)


@app.command("apply")
def apply(
    ctx: typer.Context,
    slug: str,
    force: bool = ForceOption,
    no_eval: bool = NoEvalOption,
    as_json: bool = JsonOption,
) -> None:
    """Activate the draft .swarm/skills/proposals/<slug>.md."""
    roster, compiler = _compiler(ctx)
    _show_writes(
        [_guard(lambda: compiler.apply(slug, force=force, evaluate_it=not no_eval))],
        roster.workspace_dir,
        as_json,
    )


@app.command("regenerate")
def regenerate(
    ctx: typer.Context,
    slug: str,
    force: bool = ForceOption,
    no_eval: bool = NoEvalOption,
    as_json: bool = JsonOption,
) -> None:
    """Rebuild an active skill from the current state of its source knowledge."""
    roster, compiler = _compiler(ctx)
    _show_writes(
        [_guard(lambda: compiler.regenerate(slug, force=force, evaluate_it=not no_eval))],
        roster.workspace_dir,
        as_json,
    )


@app.command("inspect")
def inspect(
    ctx: typer.Context,
    slug: str,
    draft: Annotated[
        bool, typer.Option("--draft", help="Prefer the draft over the active skill.")
    ] = False,
    as_json: bool = JsonOption,
) -> None:
    """A skill's body and the knowledge it was compiled from."""
    roster, compiler = _compiler(ctx)
    found = _guard(lambda: compiler.inspect(slug, "draft" if draft else "auto"))
    if found is None:
        fail(f"no draft or active skill {slug!r} under {roster.workspace_dir}")
    if as_json:
        emit_json(found)
        return
    say(
        (found["kind"], "bold"),
        f" {short(found['path'], roster.workspace_dir)}",
        ("" if found["generated"] else (" (no generated marker: hand-written)", "yellow")),
    )
    console.print(Markdown(found["content"]))
    table = Table(title="source knowledge")
    for column in ("id", "status", "lesson"):
        table.add_column(column)
    for source in found["sources"]:
        table.add_row(source["id"], source["status"], source["lesson"] or cell("missing", "red"))
    console.print(table)


@app.command("improve")
def improve(
    ctx: typer.Context,
    mode: Annotated[str | None, typer.Option("--mode", help="proposal or draft_skills")] = None,
    submit_it: Annotated[
        bool, typer.Option("--submit", help="Run it on a worker (skills queue).")
    ] = False,
    wait: Annotated[
        float, typer.Option("--wait", help="With --submit: seconds to wait (0 = don't).")
    ] = 600,
    as_json: bool = JsonOption,
) -> None:
    """Run the skill improver once (you are the user approving it); writes a proposal only."""
    roster = load(ctx)
    if mode not in (None, "proposal", "draft_skills"):
        fail(f"--mode must be proposal or draft_skills, not {mode!r}")
    if submit_it:
        outcome = submit(roster, SKILLS_IMPROVE, {"approved": True, "write_mode": mode}, wait=wait)
        if isinstance(outcome, str):
            console.print(f"submitted skills.improve [{outcome}]")
            return
        report = outcome
    else:
        cluster = cluster_or_none(roster)
        locks = store_locks(roster, cluster)
        with console.status("reviewing knowledge and skills…"):
            report = _guard(
                lambda: run_improver(
                    roster, locks, cluster, task_id="cli", approved=True, write_mode=mode
                )
            )
    if as_json:
        emit_json(report)
    elif report["ran"]:
        say(
            ("proposal", "green"),
            f" ({report['source']}): {short(report['proposal'], roster.workspace_dir)}",
        )
        for draft in report.get("drafts") or []:
            console.print(
                f"  draft {draft['slug']}: {'written' if draft['written'] else draft['reason']}"
            )
        if report.get("missing_sections"):
            say(("the model left out:", "yellow"), " " + ", ".join(report["missing_sections"]))
    else:
        say(("not run:", "red"), f" {report['reason']}")
    if not report["ran"]:
        raise typer.Exit(1)
