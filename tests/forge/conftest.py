"""Fixtures every forge test uses: an AgentOps layout in a scratch project and same-host locks."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmq.flywheel.store import AgentsLayout
from swarmq.storage.locking import LocalLocks


@pytest.fixture
def layout(tmp_path: Path) -> AgentsLayout:
    return AgentsLayout(tmp_path / "project" / ".agents")


@pytest.fixture
def locks(tmp_path: Path) -> LocalLocks:
    return LocalLocks(tmp_path / "locks")
