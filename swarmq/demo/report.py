"""What the demo's driver (:mod:`run`) and its steps (:mod:`steps`) share: the scripted
missions, the report, the error and the wait helper (apart, so neither imports the other)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swarmq.errors import Unavailable

Say = Callable[[str], None]

MISSIONS = (
    (
        "ada",
        "Fix duplicate invoices after a worker crash",
        "Customers got duplicate invoices when a worker crashed mid-export. Make the export safe.",
    ),
    (
        "grace",
        "Fix the flaky invoice total test",
        "The invoice total test fails one run in twenty. Find the root cause and fix it.",
    ),
    (
        "ada",
        "Resume the invoice export without partial files",
        "When a worker dies mid-export the invoice export must resume and never trust a "
        "half-written file.",
    ),
    (
        "grace",
        "Add a retry to the invoice export",
        "Retry the invoice export when the worker crashes, without duplicate invoices.",
    ),
)


class DemoError(Unavailable, RuntimeError):
    """A step did not happen in time; the message says which and where to look."""


@dataclass
class DemoReport:
    workspace: Path
    config: Path
    seconds: float = 0.0
    missions: list[dict[str, Any]] = field(default_factory=list)
    forged: list[str] = field(default_factory=list)
    """Titles of the lessons forge extracted into pending files."""
    pooled: int = 0
    """Candidates the close loops ingested into the pool."""
    promoted: list[str] = field(default_factory=list)
    """Learning artifacts the pool promoted."""
    published: list[str] = field(default_factory=list)
    """Knowledge entry ids the promotions became."""
    injected: list[str] = field(default_factory=list)
    """Entry ids injected into the last mission's prompt."""
    acknowledged: list[str] = field(default_factory=list)
    """Entry ids whose acknowledgement (``KNOWLEDGE_APPLIED``) landed."""
    flywheel_before: dict[str, Any] = field(default_factory=dict)
    flywheel_after: dict[str, Any] = field(default_factory=dict)
    lessons: list[dict[str, Any]] = field(default_factory=list)
    """Every lesson taught, whole: ``lesson``, ``fate`` (promoted or held), ``why``, ``learning``
    (its file when promoted), ``entry_id`` (its knowledge entry, if any), ``injected_into`` (the
    last mission's title when it was shown there), ``acknowledged``."""
    files: dict[str, str] = field(default_factory=dict)
    stopped: bool = False
    attach: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["workspace"], data["config"] = str(self.workspace), str(self.config)
        return data


def wait_for(predicate: Callable[[], Any], timeout: float, what: str, where: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise DemoError(f"timed out after {timeout:.0f}s waiting for {what}; see {where}")
