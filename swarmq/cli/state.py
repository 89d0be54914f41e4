"""What the root command needs before any subcommand is imported: the ``--config`` it was
given (kept light: see swarmq.cli.lazy)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class CliState:
    config: Path | None = None

    @property
    def config_path(self) -> Path:
        from swarmq.roster.loader import find_config

        return find_config(self.config)
