"""The README's roster, as pasted: it validates with no error and needs no RabbitMQ."""

from __future__ import annotations

import re
from pathlib import Path

from swarmq.roster.loader import load_report
from tests.support import REPO


def readme_roster() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## The roster: `swarm.yaml`", 1)[1]
    found = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert found is not None, "the README's roster section has no yaml block"
    return found.group(1)


def test_the_readme_roster_validates_as_pasted(tmp_path: Path) -> None:
    path = tmp_path / "swarm.yaml"
    path.write_text(readme_roster(), encoding="utf-8")
    report = load_report(path, env={"HOME": str(tmp_path)})
    assert report.roster is not None and report.errors == [], [str(p) for p in report.problems]
    assert report.roster.broker_url is None  # RabbitMQ is opt-in: a new machine has none
    consumed = {q for w in report.roster.workers for q in w.all_queues()}
    assert {"consolidation", "maturity", "forge", "missions"} <= consumed
