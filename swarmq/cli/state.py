"""What the root command needs before any subcommand is imported: the ``--config`` it was
given, and, in the resident server, the warm roster and stores it answers a command from (kept
light: see swarmq.cli.lazy)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from swarmq.federated.stores import Stores
    from swarmq.roster.schema import Roster
    from swarmq.storage.locking import StoreLocks


@dataclass(frozen=True)
class Warm:
    """The roster, locks and stores a resident server keeps loaded (``swarmq.cli.served``): a
    command it runs reads through them instead of loading its own."""

    roster: Roster
    locks: StoreLocks
    stores: Stores


@dataclass
class CliState:
    config: Path | None = None
    warm: Warm | None = None

    @property
    def config_path(self) -> Path:
        from swarmq.roster.loader import find_config

        return find_config(self.config)
