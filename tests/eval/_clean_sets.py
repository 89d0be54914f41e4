"""What the tests of each clean (held-apart) labelled set share: the other evaluation files, and
whether a file names a set's user, so a figure on the set is a reading on data nothing was tuned
on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EVAL = REPO / "eval"


def other_evaluation_files(ours: set[Path]) -> list[Path]:
    """Every labels and sources file of eval/ but ``ours``, and the quality report (it names the
    repositories forge's rules were studied on)."""
    found = [
        *EVAL.glob("*/labels*.yaml"),
        *EVAL.glob("*/SOURCES*.md"),
        REPO / "docs" / "QUALITY.md",
    ]
    return sorted(p for p in found if p not in ours)


def named_anywhere(owner: str, paths: list[Path]) -> list[Path]:
    """Files that name ``owner`` (case-insensitively, also when a line break, a comment or quote
    marker or a hyphen falls inside the name)."""

    def squash(text: str) -> str:
        return "".join(ch for ch in text.lower() if ch not in "\n #>*-")

    needle = squash(owner)
    return [p for p in paths if needle in squash(p.read_text(encoding="utf-8"))]


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def session_text(path: Path) -> str:
    """Every string of the session's records, decoded (a label's words are read in the text the
    agent and the tools wrote, not in its JSON escaping)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return "\n".join(s for line in lines if line.strip() for s in _strings(json.loads(line)))
