"""``swarmq eval``: quality figures on labelled real data (see docs/QUALITY.md).

Each evaluation's command lives in its own module; this one registers them on ``app``.
"""

from __future__ import annotations

import typer

from swarmq.cli import eval_forge, eval_knowledge, eval_replay

app = typer.Typer(
    help="Measure judgement on labelled real data: precision, recall, hit rates.",
    no_args_is_help=True,
)
app.command("forge")(eval_forge.forge)
app.command("consolidate")(eval_knowledge.consolidate)
app.command("inject")(eval_knowledge.inject)
app.command("inject-every-store")(eval_knowledge.inject_every_store)
app.command("replay")(eval_replay.replay)
