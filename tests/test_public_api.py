"""The package's public face: a few names, importable from ``swarmq`` without loading anything."""

from __future__ import annotations

import subprocess
import sys

import pytest

import swarmq


def test_public_names_resolve_to_their_homes() -> None:
    from swarmq.client import MissionClient
    from swarmq.errors import SwarmqError
    from swarmq.knowledge.project import KnowledgeStore
    from swarmq.roster.loader import RosterError, load_roster
    from swarmq.roster.schema import Roster

    assert swarmq.MissionClient is MissionClient and swarmq.KnowledgeStore is KnowledgeStore
    assert swarmq.load_roster is load_roster and swarmq.Roster is Roster
    assert swarmq.RosterError is RosterError and swarmq.SwarmqError is SwarmqError
    assert sorted(swarmq.__all__) == sorted([*swarmq._EXPORTS, "__version__"])


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = swarmq.Nope  # type: ignore[attr-defined]


def test_import_swarmq_loads_nothing_else() -> None:
    code = "import sys, swarmq; print(sorted(m for m in sys.modules if m.startswith('swarmq')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['swarmq']"
