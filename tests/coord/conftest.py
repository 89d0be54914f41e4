"""Fixtures of the coordination tests."""

from __future__ import annotations

import pytest

from swarmq.knowledge import _group


@pytest.fixture
def long_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """A group-commit leader keeps its lock hold for the next group however long that group
    takes to queue: the 20 ms default is shorter than a thread start on a loaded machine (then
    the next group takes a hold of its own), and the hold's limit is not what these tests are
    about."""
    monkeypatch.setattr(_group, "HOLD_SECONDS", 60.0)
