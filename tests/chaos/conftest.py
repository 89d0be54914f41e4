"""Every test here is a chaos test: ``pytest -m chaos`` runs them alone.

In the parallel suite they all run on one xdist process, one after the other, as they would
alone: they start dozens of processes, kill servers of their own and measure how fast a
service answers under hostile load; two of them at once starve each other's processes (an API
that did not start within its deadline), and modules share module-scoped servers and runs."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.hookimpl(tryfirst=True)  # before xdist reads the group marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.chaos)
            item.add_marker(pytest.mark.xdist_group("chaos"))
