"""Every test here is a chaos test: ``pytest -m chaos`` runs them alone.

In the parallel suite they run on one xdist process, one after the other, as they would alone:
they start dozens of processes, kill servers of their own and measure how fast a service answers
under hostile load; two of them at once starve each other's processes (an API that did not start
within its deadline), and modules share module-scoped servers and runs. The broker tests are the
exception, on a second process of their own: they spend minutes waiting on brokers of their own
(a node restarted, a consumer timing out) with a few idle workers, and one after the other
behind the rest they were the suite's longest thread."""

from __future__ import annotations

from pathlib import Path

import pytest

BROKER_MODULES = frozenset({"test_broker_chaos.py", "test_rabbitmq_broker_chaos.py"})


@pytest.hookimpl(tryfirst=True)  # before xdist reads the group marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        path = Path(str(item.fspath))
        if here in path.parents:
            item.add_marker(pytest.mark.chaos)
            group = "chaos-broker" if path.name in BROKER_MODULES else "chaos"
            item.add_marker(pytest.mark.xdist_group(group))
