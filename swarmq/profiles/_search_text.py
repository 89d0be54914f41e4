"""How memory search reads text: one normal form for queries and lines, and its hits.

Queries and indexed lines go through the same :func:`normalize`, so what matches does not depend
on case, Unicode composition or spacing.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

TOKEN = re.compile(r"\w+")


def fold(text: str) -> str:
    """NFKC and case-folded (line breaks kept)."""
    return unicodedata.normalize("NFKC", text).casefold()


def normalize(text: str) -> str:
    """Folded, whitespace collapsed: the form both queries and lines are matched in."""
    return " ".join(fold(text).split())


def norm_lines(body: str) -> list[str]:
    """One normalised line per stored line (NFKC may merge or split lines: then go one by one)."""
    lines = body.splitlines()
    folded = fold(body).splitlines()
    if len(folded) != len(lines):
        folded = [fold(line) for line in lines]
    return [" ".join(line.split()) for line in folded]


def fts_phrase(tokens: list[str]) -> str:
    """An FTS5 phrase query of ``tokens`` (quotes doubled)."""
    return '"' + " ".join(t.replace('"', '""') for t in tokens) + '"'


@dataclass(frozen=True)
class Hit:
    path: str
    line: int
    snippet: str
    phrase: bool
    overlap: float
    mtime: float

    @property
    def score(self) -> float:
        """One number for display: 2 for a phrase match, plus the token overlap (0..1)."""
        return round((2.0 if self.phrase else 0.0) + self.overlap, 4)

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "snippet": self.snippet,
            "score": self.score,
            "match": "phrase" if self.phrase else "tokens",
            "mtime": self.mtime,
        }
