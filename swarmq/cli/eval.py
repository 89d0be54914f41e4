"""``swarmq eval``: quality figures on labelled real data (see docs/QUALITY.md).

Each evaluation registers its command on ``app`` from its own module, imported below.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Measure judgement on labelled real data: precision, recall, hit rates.",
    no_args_is_help=True,
)

from swarmq.cli import eval_forge as _eval_forge  # noqa: E402,F401  (registers 'forge')
from swarmq.cli import eval_knowledge as _eval_knowledge  # noqa: E402,F401  (registers consolidate, inject)
