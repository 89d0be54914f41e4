"""What a learning says about itself when it is not in the front matter: its date and its
confidence, as hand-written and AgentOps files state them.

A learning's age comes from its front matter (``date``, ``created``, ``created_at``,
``promoted_at``), else a ``**Date**:`` line in its body, else a ``YYYY-MM-DD`` in its file name;
the file's mtime only when none is written (a checkout or a copy resets mtimes). A confidence
written in the body (``**Confidence**: medium``, ``Confidence: 0.8``) is read as declared; a word
stays a word (close-loop never replaces it with a decayed number, which would mean something else).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from swarmq.flywheel.artifacts import Learning
from swarmq.flywheel.content import canonical_content_body
from swarmq.flywheel.model import parse_time

DATE_KEYS = ("date", "created", "created_at", "promoted_at")
_BODY_DATE = re.compile(
    r"^\s*\**Date\**:?\**:?\s*(\d{4}-\d{2}-\d{2})\b", re.MULTILINE | re.IGNORECASE
)
_NAME_DATE = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)")
_BODY_CONFIDENCE = re.compile(
    r"^\s*(?:[-*]\s+)?\**Confidence\**:?\**:?\s*\**\s*(high|medium|low|0?\.\d+|1(?:\.0+)?|0)\b",
    re.MULTILINE | re.IGNORECASE,
)
WORD_CONFIDENCE = {"high": 0.9, "medium": 0.6, "low": 0.3}
"""What a declared word stands for when a number is needed (eviction's "confidence < 0.2")."""


def written_date(learning: Learning) -> datetime | None:
    """The date the learning states (front matter, body, file name), or ``None``."""
    moment = learning.time(*DATE_KEYS)
    if moment is not None:
        return moment
    if learning.path.suffix == ".md":
        hit = _BODY_DATE.search(learning.text[:4096])
        if hit and (moment := parse_time(hit.group(1))):
            return moment
    hit = _NAME_DATE.search(learning.path.name)
    return parse_time(hit.group(1)) if hit else None


def learning_date(learning: Learning) -> datetime | None:
    """:func:`written_date`, else the file's mtime, else ``None``."""
    moment = written_date(learning)
    if moment is not None:
        return moment
    try:
        return datetime.fromtimestamp(learning.path.stat().st_mtime, UTC)
    except OSError:
        return None


def declared_confidence(learning: Learning) -> tuple[float, str | None]:
    """``(value, word)``: the front matter's confidence, else one written in the body; ``word``
    is set when it was declared as high/medium/low (then it must not be decayed)."""
    declared = learning.fields.get("confidence")
    if declared is None and learning.path.suffix == ".md":
        hit = _BODY_CONFIDENCE.search(
            canonical_content_body(learning.text) + "\n" + learning.text[:4096]
        )
        declared = hit.group(1) if hit else None
    if isinstance(declared, str):
        word = declared.strip().lower()
        if word in WORD_CONFIDENCE:
            return WORD_CONFIDENCE[word], word
        try:
            return max(0.0, min(1.0, float(word))), None
        except ValueError:
            return learning.confidence, word or None
    return learning.confidence, None
